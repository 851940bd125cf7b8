// Approvals in a real browser (Debian's headless Chromium) against the real binary: an agent asks
// permission for a tool use as Claude Code's PermissionRequest hook does (`POST /hooks/claude-code`
// with an agent's credential, the hook's JSON body), the person sees it live and decides in the
// inbox, and the hook's waiting request is answered with exactly that decision. Rules made from a suggestion decide the next
// matching request without asking; the Rules page lists, edits and deletes them.
//
//   go build -o bin/loopback ./cmd/loopback && cd web && node --test test/e2e/approvals.test.mjs

import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { launch } from './lib/browser.mjs';
import { background, cspViolations, openInbox, scrollsSideways, waitForAsk } from './lib/helpers.mjs';
import { Agent } from './lib/mcp.mjs';
import { Server } from './lib/server.mjs';
import { TARGET } from '../../../e2e/lib/target.mjs';

let server;
let agentToken;
let browser;
let seq = 0;
const project = (name) => `${name}-${++seq}`;

const PHONE = { viewport: { width: 390, height: 844 }, isMobile: true, hasTouch: true };

before(async () => {
  server = await new Server().start();
  agentToken = await server.createToken('laptop-claude');
  browser = await launch();
});

after(async () => {
  await browser?.close();
  await server?.dispose();
});

/**
 * Asks permission for a tool use as Claude Code's PermissionRequest hook does: the hook's body,
 * in a session of its own, from the project's folder (Loopback takes the project from `cwd`).
 * Resolves with the hook's decision ({behavior, message}), or null for no decision ({}).
 */
async function requestApproval({ tool_name, input, project, session = 'sess-' + ++seq, signal }) {
  const res = await fetch(server.origin + '/hooks/claude-code', {
    method: 'POST',
    signal,
    headers: { Authorization: `Bearer ${agentToken}`, 'Content-Type': 'application/json', 'User-Agent': 'claude-code/2.1.332' },
    body: JSON.stringify({
      hook_event_name: 'PermissionRequest',
      session_id: session,
      transcript_path: '/tmp/transcript.jsonl',
      cwd: '/home/ada/src/' + project,
      permission_mode: 'default',
      tool_name,
      tool_input: input,
      permission_suggestions: [],
    }),
  });
  const text = await res.text();
  assert.equal(res.status, 200, text);
  const out = JSON.parse(text);
  return out.hookSpecificOutput?.decision ?? null;
}

/** Another hook of the same session, as Claude Code sends it after the terminal decided. */
async function hookEvent(hook_event_name, { tool_name, input, project, session }) {
  const res = await fetch(server.origin + '/hooks/claude-code', {
    method: 'POST',
    headers: { Authorization: `Bearer ${agentToken}`, 'Content-Type': 'application/json' },
    body: JSON.stringify({ hook_event_name, session_id: session, cwd: '/home/ada/src/' + project, tool_name, tool_input: input, tool_response: {} }),
  });
  assert.equal(res.status, 200, await res.text());
}

/** The approval's row in the list, found by its project. */
function rowOf(page, p) {
  return page.locator('.ask-row.kind-approval', { has: page.locator('.project-tag', { hasText: p }) });
}

describe('an approval', () => {
  it('shows live as an approval, with the command in the row; Allow lets the waiting request through', async () => {
    const page = await openInbox(browser, server);
    const p = project('billing');
    const input = { command: 'npm test -- --watch=false', description: 'Run the unit tests' };
    const decision = requestApproval({ tool_name: 'Bash', input, project: p });

    const row = rowOf(page, p);
    await row.waitFor();
    assert.equal(await row.locator('.kind-badge').innerText(), 'APPROVAL');
    assert.equal(await row.locator('.row-command code').innerText(), 'npm test -- --watch=false');
    assert.equal(await row.locator('.row-command code').evaluate((e) => getComputedStyle(e).fontFamily.includes('mono')), true);
    await row.click();

    const view = page.locator('.ask-view.kind-approval');
    await view.waitFor();
    assert.equal(await view.locator('.ask-title').innerText(), 'npm test -- --watch=false');
    const facts = await view.locator('.approval-facts').innerText();
    for (const t of ['Bash', `/home/ada/src/${p}`, p, 'laptop-claude']) assert.ok(facts.includes(t), `${t} in ${facts}`);
    assert.equal(await view.locator('.approval-what code.language-sh').innerText(), 'npm test -- --watch=false');
    await view.locator('details.raw-input summary').click();
    assert.deepEqual(JSON.parse(await view.locator('details.raw-input code').innerText()), input);

    await view.getByRole('button', { name: 'Allow', exact: true }).click();
    assert.deepEqual(await decision, { behavior: 'allow' });
    await view.locator('.chip-closed', { hasText: 'Allowed' }).waitFor();
    await view.locator('.entry-human', { hasText: 'You allowed this' }).waitFor();
    assert.deepEqual(page.errors, []);
    assert.deepEqual(await cspViolations(page), []);
    await page.context().close();
  });

  it('denied with a message: the message reaches the agent, and the thread says who denied it', async () => {
    const page = await openInbox(browser, server);
    const p = project('infra');
    const decision = requestApproval({ tool_name: 'Bash', input: { command: 'terraform apply -auto-approve' }, project: p });
    await rowOf(page, p).click();
    const view = page.locator('.ask-view.kind-approval');
    await view.getByLabel('Message for the agent if you deny (optional)').fill('Run terraform plan first and show me the plan.');
    await view.getByRole('button', { name: 'Deny with message' }).click();
    const d = await decision;
    assert.equal(d.behavior, 'deny');
    assert.equal(d.message, 'Run terraform plan first and show me the plan.');
    await view.locator('.entry-human', { hasText: 'You denied this' }).waitFor();
    assert.match(await view.locator('.entry-human').innerText(), /Run terraform plan first/);
    await page.context().close();
  });

  it('is allowed and denied from the keyboard with a and d', async () => {
    const page = await openInbox(browser, server);
    const p = project('keys');
    const first = requestApproval({ tool_name: 'WebFetch', input: { url: 'https://docs.example.com/a', prompt: 'Read it' }, project: p });
    await rowOf(page, p).click();
    await page.locator('.ask-view.kind-approval').waitFor();
    await page.keyboard.press('a');
    assert.equal((await first).behavior, 'allow');

    const second = requestApproval({ tool_name: 'WebFetch', input: { url: 'https://evil.example.com/', prompt: 'x' }, project: p });
    const a2 = await waitForAsk(server, (a) => a.project === p && a.status === 'awaiting_human');
    await page.goto(`${server.origin}/asks/${a2.id}`);
    await page.locator('.ask-view.kind-approval [data-verdict="deny"]').waitFor();
    // Typing in the message field is not a shortcut.
    await page.getByLabel('Message for the agent if you deny (optional)').pressSequentially('do not');
    assert.equal(await page.locator('.ask-view.status-awaiting_human').count(), 1);
    await page.locator('.ask-view .ask-title').focus();
    await page.keyboard.press('d');
    const d = await second;
    assert.equal(d.behavior, 'deny');
    assert.equal(d.message, 'do not');
    // The help lists both.
    await page.keyboard.press('?');
    const help = await page.locator('dialog.help').innerText();
    assert.match(help, /Allow \/ deny the open approval/);
    await page.context().close();
  });
});

describe('an approval through MCP', () => {
  it('request_approval (the permission prompt tool): an MCP tool’s arguments as JSON; Allow returns the input to run', async () => {
    const agent = await new Agent(server, { name: 'claude-code', version: '2.1.332', token: agentToken }).init();
    const page = await openInbox(browser, server);
    const p = project('github');
    const input = { owner: 'acme', repo: 'billing', title: 'Refunds fail for EUR', labels: ['bug', 'payments'] };
    const decision = agent.call('request_approval', { tool_name: 'mcp__github__create_issue', input, tool_use_id: 'toolu_01', project: p, cwd: '/home/ada/src/billing' });
    await rowOf(page, p).click();
    const view = page.locator('.ask-view.kind-approval');
    await view.locator('[data-verdict="allow"]').waitFor();
    assert.match(await view.locator('.approval-facts').innerText(), /mcp__github__create_issue/);
    // What it would do: the arguments as JSON, exactly.
    const shown = await view.locator('.approval-what code').first().innerText();
    assert.deepEqual(JSON.parse(shown), input);
    await view.getByRole('button', { name: 'Allow', exact: true }).click();
    const d = await decision;
    assert.equal(d.behavior, 'allow');
    assert.deepEqual(d.updatedInput, input);
    await page.context().close();
  });
});

describe('an approval that ends without the inbox', () => {
  it('says so live in words: answered at the terminal', async () => {
    const page = await openInbox(browser, server);
    const p = project('terminal');
    const use = { tool_name: 'Bash', input: { command: 'go test ./...' }, project: p, session: 'sess-terminal' };
    const pending = background(requestApproval(use));
    await rowOf(page, p).click();
    const view = page.locator('.ask-view.kind-approval');
    await view.locator('[data-verdict="allow"]').waitFor();
    // The person answered Yes at the terminal: Claude Code ran the tool and says so (PostToolUse).
    await hookEvent('PostToolUse', use);
    await view.locator('.entry-notice[data-event="terminal"]').waitFor();
    assert.match(await view.locator('.entry-notice').innerText(), /at the terminal/);
    assert.match(await view.locator('.chip-closed').innerText(), /at the terminal/);
    assert.equal(await view.locator('[data-verdict]').count(), 0, 'nothing left to decide');
    await pending;
    assert.deepEqual(page.errors, []);
    await page.context().close();
  });

  // On aws-local a hook request that went away left its approval open past 30 s (seen on
  // 2026-12-02; the hook route is hooks' area): this part runs on serve only until it does.
  it('says so live when the agent stops waiting: withdrawn by the agent', { skip: TARGET !== 'serve' && 'serve only: aws-local does not withdraw on a closed hook request yet' }, async () => {
    const page = await openInbox(browser, server);
    const view = page.locator('.ask-view.kind-approval');
    const q = project('gone');
    const hangUp = new AbortController();
    const call = requestApproval({ tool_name: 'Bash', input: { command: 'make deploy' }, project: q, signal: hangUp.signal }).catch(() => null);
    await rowOf(page, q).click();
    await view.locator('[data-verdict="allow"]').waitFor();
    hangUp.abort(); // the hook's request went away: the agent stopped waiting
    await call;
    await view.locator('.entry-notice[data-event="withdrawn"]').waitFor();
    assert.equal(await view.locator('.chip-closed').innerText(), 'Withdrawn by the agent');
    assert.deepEqual(page.errors, []);
    await page.context().close();
  });
});

describe('rules', () => {
  it('“Always allow” from a suggestion decides the next matching request with no ask, recorded as decided by the rule', async () => {
    const page = await openInbox(browser, server);
    const p = project('payments');
    const first = requestApproval({ tool_name: 'Bash', input: { command: 'npm test -- --grep refunds' }, project: p });
    await rowOf(page, p).click();
    const view = page.locator('.ask-view.kind-approval');
    await view.getByRole('button', { name: 'Always allow…' }).click();
    const offered = await view.locator('.suggestion').allInnerTexts();
    assert.ok(offered.length >= 1, 'at least one suggestion');
    for (const o of offered) assert.match(o, /^Always allow /);
    // The suggestion that covers `npm test` in this project, in words.
    const pick = view.locator('.suggestion', { hasText: new RegExp(`starting with npm test in project ${p}`) }).first();
    const words = (await pick.innerText()).replace(/^Always allow /, '');
    await pick.click();
    assert.equal((await first).behavior, 'allow');
    await view.locator('.entry-human .remembered').waitFor();

    // The rule is the space's now, as the person chose it.
    const rules = (await server.api('GET', '/rules')).body.items;
    const rule = rules.find((r) => r.project === p);
    assert.ok(rule, JSON.stringify(rules));
    assert.equal(rule.effect, 'allow');
    assert.equal(rule.tool, 'Bash');
    assert.match(rule.commandPrefix, /^npm test/);

    // A second matching request: decided at once, no ask waits on the person.
    const second = await requestApproval({ tool_name: 'Bash', input: { command: 'npm test -- --grep payouts' }, project: p });
    assert.equal(second.behavior, 'allow');
    const decided = await waitForAsk(server, (a) => a.project === p && a.kind === 'approval' && a.prompt.input.command === 'npm test -- --grep payouts');
    assert.equal(decided.status, 'closed');
    const notice = decided.thread.find((e) => e.author === 'loopback');
    assert.equal(notice?.event, 'rule');
    assert.equal(notice.ruleId, rule.id);

    // In history, as decided by the rule, with a link to it.
    await page.goto(`${server.origin}/asks/${decided.id}`);
    const closed = page.locator('.ask-view.kind-approval');
    await closed.locator('.chip-closed', { hasText: 'Allowed by a rule' }).waitFor();
    await closed.locator('.entry-notice[data-event="rule"]').waitFor();
    await closed.getByRole('link', { name: 'See the rule' }).click();
    await page.waitForURL(`${server.origin}/rules?rule=${encodeURIComponent(rule.id)}`);
    const listed = page.locator(`[data-rule="${rule.id}"]`);
    await listed.waitFor();
    assert.match(await listed.getAttribute('class'), /focused/);
    assert.ok((await listed.innerText()).includes(words), `${await listed.innerText()} names ${words}`);
    assert.match(await listed.innerText(), /Matched once/);
    await page.context().close();
  });

  it('the Rules page makes, edits (the server’s refusal in words) and deletes rules, on a phone', async () => {
    const page = await openInbox(browser, server, PHONE);
    const p = project('docs');
    // On a phone the top bar has no room for it: the account menu has the link.
    assert.equal(await page.locator('.topbar .nav-link').isVisible(), false);
    await page.locator('.account-btn').tap();
    await page.locator('.account-menu').getByRole('link', { name: 'Rules' }).tap();
    await page.waitForURL(server.origin + '/rules');
    await page.getByRole('button', { name: 'New rule' }).click();
    const form = page.locator('form.rule-form');
    await form.getByLabel('Tool').fill('WebFetch');
    await form.getByLabel('Host is (optional)').fill('*.python.org');
    await form.getByLabel(/^Project/).fill(p);
    assert.equal(await form.locator('.rule-preview').innerText(), `Always allow WebFetch of URLs on *.python.org in project ${p}, by every agent`);
    await form.getByRole('button', { name: 'Make rule' }).click();
    await form.waitFor({ state: 'detached' });
    const made = (await server.api('GET', '/rules')).body.items.find((r) => r.project === p);
    assert.deepEqual({ effect: made.effect, tool: made.tool, domain: made.domain }, { effect: 'allow', tool: 'WebFetch', domain: '*.python.org' });
    const row = page.locator(`[data-rule="${made.id}"]`);
    await row.waitFor();
    assert.equal(await scrollsSideways(page), false);

    // Edit: to a deny of Bash with a prefix; a field that does not fit the tool is not offered.
    await row.getByRole('button', { name: /^Edit/ }).click();
    const edit = page.locator(`#rule-${made.id} form.rule-form`);
    await edit.getByText('Always deny').click();
    await edit.getByLabel('Tool').fill('Bash');
    assert.equal(await edit.getByLabel('Host is (optional)').count(), 0);
    await edit.getByLabel('Command starts with (optional)').fill('rm -rf');
    await edit.getByRole('button', { name: 'Save rule' }).click();
    await edit.waitFor({ state: 'detached' });
    const changed = (await server.api('GET', '/rules')).body.items.find((r) => r.id === made.id);
    assert.deepEqual(
      { effect: changed.effect, tool: changed.tool, commandPrefix: changed.commandPrefix, domain: changed.domain },
      { effect: 'deny', tool: 'Bash', commandPrefix: 'rm -rf', domain: undefined },
    );
    await page.locator(`[data-rule="${made.id}"]`, { hasText: 'Always deny' }).waitFor();

    // A rule the page can judge is held back with the reason; one only the server can judge (a
    // prefix that pipes) is refused by it, and its Problem is shown in words; nothing changed.
    await page.locator(`[data-rule="${made.id}"]`).getByRole('button', { name: /^Edit/ }).click();
    await edit.getByLabel('Tool').fill('x'.repeat(201));
    assert.match(await edit.locator('.reason').innerText(), /at most 200 characters/);
    assert.equal(await edit.getByRole('button', { name: 'Save rule' }).isDisabled(), true);
    await edit.getByLabel('Tool').fill('Bash');
    await edit.getByLabel('Command starts with (optional)').fill('make deploy | tee log');
    await edit.getByRole('button', { name: 'Save rule' }).click();
    const refusal = await edit.getByRole('alert').innerText();
    assert.match(refusal, /^The server refused the rule: .*simple command/);
    assert.equal((await server.api('GET', '/rules')).body.items.find((r) => r.id === made.id).commandPrefix, 'rm -rf');
    await edit.getByRole('button', { name: 'Cancel' }).click();

    // Delete, after a confirmation.
    await page.locator(`[data-rule="${made.id}"]`).getByRole('button', { name: /^Delete/ }).click();
    await page.locator(`[data-rule="${made.id}"]`).getByRole('button', { name: 'Delete', exact: true }).click();
    await page.locator(`[data-rule="${made.id}"]`).waitFor({ state: 'detached' });
    assert.equal((await server.api('GET', '/rules')).body.items.some((r) => r.id === made.id), false);
    assert.deepEqual(page.errors, []);
    await page.context().close();
  });
});

describe('on a phone', () => {
  it('keeps the verdict bar on screen over a long diff, and allows from it', async () => {
    const page = await openInbox(browser, server, PHONE);
    const p = project('mobile');
    const old = Array.from({ length: 150 }, (_, i) => `export const value${i} = ${i};`).join('\n');
    const next = Array.from({ length: 150 }, (_, i) => `export const value${i} = ${i * 2}; // doubled for the new pricing table`).join('\n');
    const input = { file_path: `/home/ada/src/${p}/src/prices.ts`, old_string: old, new_string: next };
    const decision = requestApproval({ tool_name: 'Edit', input, project: p });
    await rowOf(page, p).click();
    const view = page.locator('.ask-view.kind-approval');
    await view.locator('.diff-block, .code-block').first().waitFor();
    const height = await page.evaluate(() => document.documentElement.scrollHeight);
    assert.ok(height > 3 * 844, `a long page (${height} px)`);
    const inView = async () => {
      const box = await page.locator('.verdict-bar').boundingBox();
      return box && box.y >= 0 && box.y + box.height <= 844 + 0.5;
    };
    assert.equal(await inView(), true, 'the verdict bar shows before any scrolling');
    await page.mouse.wheel(0, 2000);
    await page.waitForFunction(() => scrollY > 1000);
    assert.equal(await inView(), true, 'and halfway down the diff');
    const allow = page.locator('.verdict-bar [data-verdict="allow"]');
    const box = await allow.boundingBox();
    assert.ok(box.height >= 44 && box.width >= 120, `a thumb-sized Allow (${box.width}×${box.height})`);
    assert.equal(await scrollsSideways(page), false);
    await allow.tap();
    assert.deepEqual(await decision, { behavior: 'allow' });
    await page.context().close();
  });
});
