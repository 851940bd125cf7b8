// axe-core (pinned in package.json) on every view of the inbox that a person can reach: the open
// asks, each kind of ask, a closed one, the history, search results, the rules and the sign-in page, at a laptop's
// size and a phone's, in light and dark. Any violation of WCAG 2.0/2.1 A or AA fails the test.
// Plus the fixes it asked for and the keys that go with them (issue 29, item 8).

import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { after, before, describe, it } from 'node:test';
import { launch } from './lib/browser.mjs';
import { background, openInbox, waitForAsk } from './lib/helpers.mjs';
import { Agent } from './lib/mcp.mjs';
import { LAPTOP, longDiff, PHONE, q, seed, TaskAgent } from './lib/seed.mjs';
import { Server } from './lib/server.mjs';

const require = createRequire(import.meta.url);

let browser;
before(async () => {
  browser = await launch();
});
after(async () => {
  await browser?.close();
});

const AXE = await readFile(require.resolve('axe-core/axe.min.js'), 'utf8');

/** axe-core's WCAG 2.0/2.1 A and AA rules on the page as it stands: the violations, in words. */
async function axe(page) {
  await page.evaluate(AXE);
  const result = await page.evaluate(() =>
    // eslint-disable-next-line no-undef
    axe.run(document, { runOnly: { type: 'tag', values: ['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa'] }, resultTypes: ['violations'] }),
  );
  return result.violations.map((v) => `${v.id} (${v.impact}): ${v.help} — ${v.nodes.slice(0, 3).map((n) => n.target.join(' ')).join(' | ')}`);
}

describe('accessibility (axe-core, WCAG 2.1 AA)', () => {
  let server;
  const ids = {};
  before(async () => {
    server = await new Server().start();
    const agent = await new TaskAgent(server, { name: 'cursor', version: '1.7.2' }).init();
    const [qn, rv, br, done] = await seed(server, agent, [
      ['ask_question', { project: 'api', question: 'Merge PR #1043 into `events_v2`?', context: '- [x] tests pass\n- [ ] docs', options: [{ label: 'Merge', description: 'Now' }, { label: 'Wait' }] }],
      ['request_review', { project: 'web-app', title: 'Retry cold starts', summary: '- [ ] checked by hand', content: [{ type: 'diff', diff: longDiff() }, { type: 'code', filename: 'a.ts', code: 'const a = 1;\n'.repeat(50) }] }],
      ['send_briefing', { project: 'infra', title: 'Audit', summary: 'Two points.', sections: [{ title: 'Must fix', points: [{ title: 'Tokens in logs' }, { title: 'Types trusted' }] }] }],
      q('Closed already?', 'docs'),
    ]);
    await server.api('POST', `/asks/${done.id}/reply`, { outcome: 'answered', selected: ['Yes'] });
    Object.assign(ids, { question: qn.id, review: rv.id, briefing: br.id, closed: done.id });
    // An approval (request_approval is not a task tool: its call waits, left to run).
    const bot = await new Agent(server, { name: 'claude-code', version: '2.1.0', token: await server.createToken('claude-bot') }).init();
    background(bot.call('request_approval', { tool_name: 'Bash', input: { command: 'rm -rf build' }, project: 'api', cwd: '/work/api' }));
    ids.approval = (await waitForAsk(server, (a) => a.kind === 'approval')).id;
  });
  after(() => server?.dispose());

  const views = () => [
    ['inbox', '/'],
    ['question', `/asks/${ids.question}`],
    ['review', `/asks/${ids.review}`],
    ['briefing', `/asks/${ids.briefing}`],
    ['approval', `/asks/${ids.approval}`],
    ['closed question', `/asks/${ids.closed}`],
    ['history', '/history'],
    ['rules', '/rules'],
  ];

  it('axe finds what it should (the check itself can fail)', async () => {
    const page = await openInbox(browser, server, { viewport: LAPTOP, bypassCSP: true });
    await page.locator('[data-ask-row]').first().waitFor();
    await page.evaluate(() => document.querySelector('.list-tools').append(document.createElement('button')));
    assert.match((await axe(page)).join('\n'), /^button-name \(critical\)/m);
    await page.context().close();
  });

  for (const [size, opts] of [['laptop', { viewport: LAPTOP }], ['phone', PHONE]]) {
    for (const colorScheme of ['light', 'dark']) {
      it(`no violations on any view, ${size}, ${colorScheme}`, async () => {
        const found = [];
        const page = await openInbox(browser, server, { ...opts, colorScheme, bypassCSP: true });
        for (const [name, path] of views()) {
          await page.goto(server.origin + path);
          await page.locator('[data-conn="live"]').waitFor();
          await page.locator(name === 'inbox' || name === 'history' ? '[data-ask-row]' : name === 'rules' ? '.layout-page' : '.ask-view .ask-head').first().waitFor();
          for (const v of await axe(page)) found.push(`${name}: ${v}`);
        }
        // Search: the server's results with their highlights (revision 6).
        await page.goto(server.origin + '/');
        await page.locator('[data-conn="live"]').waitFor();
        await page.locator('[data-search]').fill('merge');
        await page.locator('[data-search-hit] mark').first().waitFor();
        for (const v of await axe(page)) found.push(`search: ${v}`);
        await page.locator('[data-search]').fill('');
        // The sign-in page, signed out.
        await page.evaluate(() => localStorage.removeItem('loopback.token'));
        await page.goto(server.origin + '/');
        await page.getByLabel('Or paste your token').waitFor();
        for (const v of await axe(page)) found.push(`sign-in: ${v}`);
        await page.context().close();
        assert.deepEqual(found, []);
      });
    }
  }

  it('names the account button, labels task-list checkboxes, and numbers a question’s choices 1–6', async () => {
    const page = await openInbox(browser, server, { viewport: LAPTOP, path: `/asks/${ids.question}`, triage: null });
    await page.locator('.question .choice').first().waitFor();
    assert.match(await page.locator('.account-btn').getAttribute('aria-label'), /^Account/);
    const boxes = page.locator('.md input[type="checkbox"]');
    assert.equal(await boxes.count(), 2);
    assert.deepEqual(await boxes.evaluateAll((els) => els.map((e) => e.getAttribute('aria-label'))), ['Done: tests pass', 'Not done: docs']);
    await page.keyboard.press('2');
    assert.equal(await page.locator('[data-choice="2"]').getAttribute('aria-pressed'), 'true');
    await page.keyboard.press('2');
    assert.equal(await page.locator('[data-choice="2"]').getAttribute('aria-pressed'), 'false');
    await page.context().close();
  });

  it('e (done) never dismisses an approval: it says to allow or deny', async () => {
    const page = await openInbox(browser, server, { viewport: LAPTOP, path: `/asks/${ids.approval}`, triage: null });
    await page.locator('[data-verdict="allow"]').waitFor();
    await page.keyboard.press('e');
    await page.locator('.toast', { hasText: 'An approval is allowed or denied' }).waitFor();
    assert.equal(page.url(), `${server.origin}/asks/${ids.approval}`);
    assert.equal((await server.api('GET', `/asks/${ids.approval}`)).body.status, 'awaiting_human');
    await page.context().close();
  });
});
