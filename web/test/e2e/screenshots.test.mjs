// Screenshots of every screen, at a desktop size and a phone size, written to docs/screenshots/
// (the README shows them). The data is made the way real agents make it: over MCP, from three
// clients working on four projects, with the person's replies sent through the API.

import assert from 'node:assert/strict';
import { mkdir } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { launch } from './lib/browser.mjs';
import { background, png, scrollsSideways, uploadPng, waitForAsk } from './lib/helpers.mjs';
import { Agent } from './lib/mcp.mjs';
import { Server } from './lib/server.mjs';

// LOOPBACK_SCREENSHOTS writes them elsewhere (to look at a change without touching the docs).
const OUT = process.env.LOOPBACK_SCREENSHOTS ?? join(dirname(fileURLToPath(import.meta.url)), '../../../docs/screenshots');

let server;
let browser;
const ids = {};

before(async () => {
  await mkdir(OUT, { recursive: true });
  server = await new Server().start();
  browser = await launch();
  const claude = await new Agent(server, { name: 'claude-code', version: '2.1.0' }).init();
  const cursor = await new Agent(server, { name: 'cursor', version: '1.7.2' }).init();
  const codex = await new Agent(server, { name: 'codex', version: '0.42.0' }).init();

  // History first, so it is the oldest.
  const old = background(cursor.call('request_review', {
    project: 'web-app',
    title: 'Move the settings page to the new layout',
    content: [{ type: 'markdown', text: 'Same fields, new grid. Nothing else changes.' }],
  }));
  const oldAsk = await waitForAsk(server, (a) => a.project === 'web-app');
  await server.api('POST', `/asks/${oldAsk.id}/reply`, { outcome: 'follow_up', question: 'Does it still work without JavaScript?' });
  await old;
  const oldAnswer = background(cursor.call('answer_follow_up', { askId: oldAsk.id, answer: 'Yes: the form posts normally; the grid is CSS only.' }));
  await new Promise((r) => setTimeout(r, 100));
  await server.api('POST', `/asks/${oldAsk.id}/reply`, { outcome: 'approved', note: 'Nice. Ship it.' });
  await oldAnswer;
  ids.closedReview = oldAsk.id;
  for (const [i, q] of ['Use pnpm or npm for the monorepo?', 'Rename `main` to `trunk`?', 'Bump the Go toolchain to 1.26?'].entries()) {
    const c = background(claude.call('ask_question', { project: ['tooling', 'docs-site', 'billing-service'][i], question: q, options: [{ label: 'Yes' }, { label: 'No' }] }));
    const a = await waitForAsk(server, (x) => x.kind === 'question' && x.prompt.question === q);
    await server.api('POST', `/asks/${a.id}/reply`, { outcome: 'answered', selected: [i === 1 ? 'No' : 'Yes'] });
    await c;
  }

  // An ask nobody is waiting on any more (the agent hung up), and one where it is the agent's move.
  const hangUp = new AbortController();
  background(codex.call('ask_question', { project: 'mobile-app', question: 'Drop support for Android 9?', options: [{ label: 'Drop it' }, { label: 'Keep it' }] }, { signal: hangUp.signal }));
  await waitForAsk(server, (a) => a.project === 'mobile-app');
  hangUp.abort();
  const docs = background(claude.call('ask_question', { project: 'docs-site', question: 'Which examples should the quick-start page lead with?' }));
  const docsAsk = await waitForAsk(server, (a) => a.project === 'docs-site' && a.status !== 'closed');
  await server.api('POST', `/asks/${docsAsk.id}/reply`, { outcome: 'follow_up', question: 'Which ones do people copy most?' });
  await docs;
  background(claude.call('await_reply', { askId: docsAsk.id }));

  // The briefing, one round in.
  const brief = background(codex.call('send_briefing', {
    project: 'infra',
    title: 'Security review of the upload path',
    summary: 'I went through `PUT /api/v1/uploads` and the blob store. **Six findings**; the first three should block the release.',
    sections: [
      {
        title: 'Must fix',
        points: [
          { title: 'Upload tokens appear in the access log', detail: 'The reverse proxy logs the full request line, and the token is the last path segment.' },
          {
            title: 'Content type is trusted from the header',
            detail: 'A `.png` upload is stored as whatever `Content-Type` says.',
            content: [{ type: 'code', language: 'go', filename: 'shared/upload/put.go', code: 'ct := r.Header.Get("Content-Type")\nif !ask.IsImageType(ct) {\n\treturn errBadType\n}\n// the bytes are never sniffed\nreturn store.Put(ctx, id, ct, r.Body)' }],
          },
          { title: 'No limit on uploads per ticket holder', detail: 'One agent can fill the disk with tickets it never uses.' },
        ],
      },
      { title: 'Should fix', points: [{ title: 'Expired tickets linger for a day' }, { title: 'Blob folder is world-readable (0755)' }] },
      { title: 'Notes', points: [{ title: 'S3 presigned PUTs would remove the Lambda hop' }] },
    ],
  }));
  const b = await waitForAsk(server, (a) => a.kind === 'briefing');
  await server.api('POST', `/asks/${b.id}/reply`, {
    outcome: 'responded',
    points: [{ point: '1', text: 'Which proxies? We only run Caddy.' }, { point: '4', resolved: true }],
  });
  await brief;
  background(codex.call('answer_briefing', {
    askId: b.id,
    answers: [{
      point: '1',
      answer: 'Caddy logs `{uri}` by default, and so does the ALB on AWS. Two fixes, one per deployment:',
      points: [
        { title: 'Caddy: log the path without its last segment', detail: 'A `log` directive with a `filter` on `request>uri`.' },
        { title: 'AWS: strip the token in the access-log Lambda' },
      ],
    }],
  }));
  ids.briefing = b.id;

  // The review, with code, a diff and an image.
  const shot = await uploadPng(cursor, png(640, 300));
  background(cursor.call('request_review', {
    project: 'web-app',
    title: 'Retry cold starts in the API client',
    summary: 'Idempotent requests are retried **up to three times** with backoff; everything else fails as before.',
    content: [
      {
        type: 'code',
        filename: 'src/retry.ts',
        code: [
          'export async function retry<T>(fn: () => Promise<T>, attempts = 3): Promise<T> {',
          '  let last: unknown;',
          '  for (let i = 0; i < attempts; i++) {',
          '    try {',
          '      return await fn();',
          '    } catch (err) {',
          '      last = err;',
          '      await sleep(2 ** i * 200); // 200 ms, 400 ms, 800 ms',
          '    }',
          '  }',
          '  throw last;',
          '}',
        ].join('\n'),
      },
      {
        type: 'diff',
        diff: [
          'diff --git a/src/api.ts b/src/api.ts',
          'index 3b18e51..a9c4d02 100644',
          '--- a/src/api.ts',
          '+++ b/src/api.ts',
          '@@ -12,9 +12,12 @@ export async function api<T>(method: string, path: string): Promise<T> {',
          '   const headers = { Accept: "application/json" };',
          '-  const res = await fetch(BASE + path, { method, headers });',
          '+  const send = () => fetch(BASE + path, { method, headers });',
          '+  // GET and PUT are idempotent: a cold start is worth another try.',
          '+  const res = IDEMPOTENT.has(method) ? await retry(send) : await send();',
          '   if (!res.ok) {',
          '-    throw new Error(res.statusText);',
          '+    throw new ApiError(res.status, await res.text());',
          '   }',
          '   return res.json();',
          ' }',
        ].join('\n'),
      },
      { type: 'image', uploadId: shot, caption: 'Error rate after the change (staging, last 24 h)' },
    ],
  }));
  ids.review = (await waitForAsk(server, (a) => a.kind === 'review' && a.status !== 'closed')).id;

  // The question, newest.
  background(claude.call('ask_question', {
    project: 'billing-service',
    question: 'Should the webhook retry queue use **exponential backoff** or a fixed delay?',
    context: 'The payment provider rate-limits us at 100 requests a minute. Failed webhooks are retried immediately today, which is what made Tuesday\'s outage worse.',
    options: [
      { label: 'Exponential backoff', description: 'Start at 1 s, cap at 5 min, with jitter' },
      { label: 'Fixed 30 s delay', description: 'Simple, predictable load' },
      { label: 'Ask me after the incident review' },
    ],
  }));
  ids.question = (await waitForAsk(server, (a) => a.project === 'billing-service' && a.status !== 'closed')).id;
});

after(async () => {
  await browser?.close();
  await server?.dispose();
});

async function page(viewport, { colorScheme = 'light', deviceScaleFactor = 1, isMobile = false, path = '/' } = {}) {
  const ctx = await browser.newContext({ viewport, colorScheme, deviceScaleFactor, isMobile, hasTouch: isMobile });
  const p = await ctx.newPage();
  await p.goto(server.origin + path + '#token=' + server.token);
  await p.locator('[data-conn="live"]').waitFor();
  return p;
}

async function ready(p) {
  await p.waitForFunction(() => [...document.images].every((i) => i.complete && (i.naturalWidth > 0 || !i.src)));
  await p.evaluate(() => document.activeElement?.blur());
  await p.waitForTimeout(150);
}

async function shoot(p, name) {
  await ready(p);
  assert.equal(await scrollsSideways(p), false, `${name} scrolls sideways`);
  await p.screenshot({ path: join(OUT, name + '.png'), animations: 'disabled' });
}

const DESKTOP = { width: 1280, height: 960 };
const PHONE = { width: 390, height: 844 };

it('desktop: inbox with a question', async () => {
  const p = await page(DESKTOP, { path: `/asks/${ids.question}` });
  await p.getByRole('button', { name: /Exponential backoff/ }).click();
  await p.getByLabel(/In your own words/).fill('Exponential, but cap it at 2 min so the queue drains before the hourly batch.');
  await shoot(p, 'desktop-question');
  await p.context().close();
});

it('desktop: review with code, a diff and an image', async () => {
  const p = await page(DESKTOP, { path: `/asks/${ids.review}` });
  await shoot(p, 'desktop-review');
  await p.context().close();
});

it('desktop: briefing in its second round', async () => {
  const p = await page(DESKTOP, { path: `/asks/${ids.briefing}` });
  await p.locator('[data-point="1"] .turn-agent').waitFor();
  await p.getByRole('button', { name: 'Resolve point 1.1', exact: true }).click();
  await p.locator('[data-point="2"] .point-toggle').click();
  await p.getByLabel('Reply on point 2').fill('Sniff the first 512 bytes with http.DetectContentType and refuse a mismatch.');
  await p.locator('.point-title', { hasText: 'Caddy' }).scrollIntoViewIfNeeded();
  await p.locator('.ask-head').scrollIntoViewIfNeeded();
  await shoot(p, 'desktop-briefing');
  await p.context().close();
});

it('desktop: history, and a closed review with its thread', async () => {
  const p = await page(DESKTOP, { path: `/asks/${ids.closedReview}` });
  await p.getByRole('link', { name: 'History' }).click();
  await p.locator(`[data-ask-row="${ids.closedReview}"]`).click();
  await p.locator('.entry-human.outcome-approved').waitFor();
  await shoot(p, 'desktop-history');
  await p.context().close();
});

it('desktop: dark mode', async () => {
  const p = await page(DESKTOP, { colorScheme: 'dark', path: `/asks/${ids.review}` });
  await shoot(p, 'desktop-review-dark');
  await p.context().close();
});

it('phone: inbox, question, review, briefing', async () => {
  const p = await page(PHONE, { deviceScaleFactor: 2, isMobile: true });
  await shoot(p, 'phone-inbox');
  await p.locator(`[data-ask-row="${ids.question}"]`).tap();
  await p.getByRole('button', { name: /Fixed 30 s delay/ }).tap();
  await shoot(p, 'phone-question');
  await p.locator('.back-btn').tap();
  await p.locator(`[data-ask-row="${ids.review}"]`).tap();
  await p.locator('.diff-file').waitFor();
  await shoot(p, 'phone-review');
  await p.locator('.back-btn').tap();
  await p.locator(`[data-ask-row="${ids.briefing}"]`).tap();
  await p.locator('[data-point="1"] .turn-agent').waitFor();
  await shoot(p, 'phone-briefing');
  await p.context().close();
});

it('sign-in', async () => {
  const ctx = await browser.newContext({ viewport: PHONE, deviceScaleFactor: 2, isMobile: true });
  const p = await ctx.newPage();
  await p.goto(server.origin + '/');
  await p.getByRole('button', { name: 'Sign in' }).waitFor();
  await shoot(p, 'phone-signin');
  await ctx.close();
});

describe('approvals (contract revision 3)', () => {
  const LAPTOP = { width: 1440, height: 900 };
  const ap = {};
  before(async () => {
    // Asked as Claude Code's PermissionRequest hook asks, with an agent's credential.
    const token = await server.createToken('laptop-claude');
    let session = 0;
    const approve = async ({ tool_name, input, cwd }) => {
      const res = await fetch(server.origin + '/hooks/claude-code', {
        method: 'POST',
        headers: { Authorization: `Bearer ${token}`, 'Content-Type': 'application/json' },
        body: JSON.stringify({ hook_event_name: 'PermissionRequest', session_id: `s${++session}`, cwd, permission_mode: 'default', tool_name, tool_input: input }),
      });
      return res.json();
    };
    // A rule the person made earlier, and a command it let through without asking.
    const rule = await server.api('POST', '/rules', { effect: 'allow', tool: 'Bash', commandPrefix: 'npm test', project: 'billing-service' });
    assert.equal(rule.status, 201, JSON.stringify(rule.body));
    await server.api('POST', '/rules', { effect: 'deny', tool: 'Bash', commandPrefix: 'rm -rf' });
    await server.api('POST', '/rules', { effect: 'allow', tool: 'WebFetch', domain: '*.python.org' });
    await approve({ tool_name: 'Bash', input: { command: 'npm test -- --grep refunds' }, cwd: '/home/ada/src/billing-service' });
    ap.byRule = (await waitForAsk(server, (a) => a.kind === 'approval' && a.prompt.input.command === 'npm test -- --grep refunds')).id;

    const before = [
      'export function retryDelay(attempt: number): number {',
      '  return 1000;',
      '}',
    ].join('\n');
    const after = [
      'const BASE_MS = 1_000;',
      'const CAP_MS = 120_000;',
      '',
      '/** Exponential backoff with full jitter, capped at two minutes. */',
      'export function retryDelay(attempt: number, random = Math.random): number {',
      '  const ceiling = Math.min(CAP_MS, BASE_MS * 2 ** attempt);',
      '  return Math.floor(random() * ceiling);',
      '}',
    ].join('\n');
    background(approve({ tool_name: 'Edit', input: { file_path: '/home/ada/src/billing-service/src/webhooks/retry.ts', old_string: before, new_string: after }, cwd: '/home/ada/src/billing-service' }));
    ap.edit = (await waitForAsk(server, (a) => a.kind === 'approval' && a.prompt.tool === 'Edit')).id;
    background(approve({
      tool_name: 'Bash',
      input: { command: 'npm run db:prune -- --table webhook_attempts --older-than 30d', description: 'Prune old webhook attempts' },
      cwd: '/home/ada/src/billing-service',
    }));
    ap.bash = (await waitForAsk(server, (a) => a.kind === 'approval' && a.status !== 'closed' && a.prompt.tool === 'Bash')).id;
  });

  it('laptop: an approval, light and dark, with "Always allow…" open', async () => {
    for (const colorScheme of ['light', 'dark']) {
      const p = await page(LAPTOP, { colorScheme, path: `/asks/${ap.bash}` });
      await p.getByRole('button', { name: 'Always allow…' }).click();
      await p.locator('.suggestion').first().waitFor();
      await shoot(p, `desktop-approval${colorScheme === 'dark' ? '-dark' : ''}`);
      await p.context().close();
    }
  });

  it('laptop: an approval decided by a rule, and the rules', async () => {
    const p = await page(LAPTOP, { path: `/asks/${ap.byRule}` });
    await p.locator('.entry-notice').waitFor();
    await shoot(p, 'desktop-approval-rule');
    await p.getByRole('link', { name: 'See the rule' }).click();
    await p.locator('.rule-item.focused').waitFor();
    await shoot(p, 'desktop-rules');
    await p.context().close();
  });

  it('phone: an edit as a diff, light and dark, and the rules', async () => {
    for (const colorScheme of ['light', 'dark']) {
      const p = await page(PHONE, { colorScheme, deviceScaleFactor: 2, isMobile: true, path: `/asks/${ap.edit}` });
      await p.locator('.diff-file').waitFor();
      await shoot(p, `phone-approval${colorScheme === 'dark' ? '-dark' : ''}`);
      await p.context().close();
    }
    const p = await page(PHONE, { deviceScaleFactor: 2, isMobile: true, path: '/rules' });
    await p.locator('.rule-item').first().waitFor();
    await shoot(p, 'phone-rules');
    await p.context().close();
  });
});
