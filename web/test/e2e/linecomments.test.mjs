// Line comments on a review (contract revision 7; issue 29 item 2), at a laptop's size and a
// phone's (touch): a real agent asks for a review over MCP; the person taps or clicks a line's
// number (or focuses it and presses Enter) to comment under the line, edits and removes comments,
// reloads and finds them kept, and sends them with Approve or Request changes from the sticky
// verdict bar, which counts them. The agent's tool result carries each comment, as `path:line`
// with its text in the words and as reply.comments in structuredContent; the closed review shows
// them at their lines and in the thread. axe-core finds nothing on the view, drafts open or sent.
// Screenshots go to docs/screenshots/ (LOOPBACK_SCREENSHOTS elsewhere).

import assert from 'node:assert/strict';
import { mkdir, readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { launch } from './lib/browser.mjs';
import { background, cspViolations, openInbox, scrollsSideways, waitForAsk } from './lib/helpers.mjs';
import { Agent } from './lib/mcp.mjs';
import { LAPTOP, PHONE } from './lib/seed.mjs';
import { Server } from './lib/server.mjs';

const require = createRequire(import.meta.url);
const AXE = await readFile(require.resolve('axe-core/axe.min.js'), 'utf8');
const OUT = process.env.LOOPBACK_SCREENSHOTS ?? join(dirname(fileURLToPath(import.meta.url)), '../../../docs/screenshots');

async function axe(page) {
  await page.evaluate(AXE);
  const result = await page.evaluate(() =>
    // eslint-disable-next-line no-undef
    axe.run(document, { runOnly: { type: 'tag', values: ['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa'] }, resultTypes: ['violations'] }),
  );
  return result.violations.map((v) => `${v.id} (${v.impact}): ${v.help} — ${v.nodes.slice(0, 3).map((n) => n.target.join(' ')).join(' | ')}`);
}

// src/api.ts: old lines 10-12 and new 10-13 (old 11 removed, new 11-12 added); docs/retry.md: new.
const DIFF =
  'diff --git a/src/api.ts b/src/api.ts\n--- a/src/api.ts\n+++ b/src/api.ts\n@@ -10,3 +10,4 @@ export async function api() {\n' +
  '   const headers = {};\n-  const res = await fetch(path);\n+  // cold starts: retry idempotent requests\n+  const res = await retry(() => fetch(path), { times: 3 });\n   return res;\n' +
  'diff --git a/docs/retry.md b/docs/retry.md\nnew file mode 100644\n--- /dev/null\n+++ b/docs/retry.md\n@@ -0,0 +1,2 @@\n+# Retries\n+Idempotent requests are retried three times.\n';

let server;
let browser;
let agent;
before(async () => {
  await mkdir(OUT, { recursive: true });
  server = await new Server().start();
  browser = await launch();
  agent = await new Agent(server, { name: 'claude-code', version: '2.1.0' }).init();
});
after(async () => {
  await browser?.close();
  await server?.dispose();
});

/** The number button of a line: `new` lines by their new number, `old` (removed) by their old one. */
const lineButton = (page, path, side, line) => page.locator(`button[data-lc-btn="${side}:${line}:${path}"]`);

describe('line comments on a review', () => {
  for (const [size, opts, verdict] of [
    ['laptop', { viewport: LAPTOP }, 'changes'],
    ['phone', PHONE, 'approve'],
  ]) {
    it(`${size}: comments added by tap/click and keyboard, kept over a reload, reach the agent with ${verdict === 'changes' ? 'Request changes' : 'Approve'}`, async () => {
      const title = `Retry cold starts (${size})`;
      const call = background(agent.call('request_review', { project: 'web-app', title, summary: 'Retries idempotent requests.', content: [{ type: 'diff', diff: DIFF }] }, { full: true }));
      const ask = await waitForAsk(server, (a) => a.prompt.title === title);
      const page = await openInbox(browser, server, { ...opts, path: `/asks/${ask.id}` });
      await page.locator('.ask-view .ask-head').waitFor();
      const touch = !!opts.hasTouch;
      const press = (loc) => (touch ? loc.tap() : loc.click());

      // A tap or a click on a line's number opens a comment under it, focused.
      const added = lineButton(page, 'src/api.ts', 'new', 12);
      assert.equal(await added.getAttribute('aria-label'), 'Comment on line 12 of src/api.ts');
      await press(added);
      const first = page.getByRole('textbox', { name: 'Your comment on line 12 of src/api.ts', exact: true });
      await first.waitFor();
      assert.equal(await first.evaluate((el) => el === document.activeElement), true, 'the new comment has the focus');
      await page.keyboard.type('Say which requests are idempotent: GET and PUT only?');

      // The keyboard: a removed line's number, focused, Enter.
      await lineButton(page, 'src/api.ts', 'old', 11).focus();
      await page.keyboard.press('Enter');
      const second = page.getByRole('textbox', { name: 'Your comment on old line 11 of src/api.ts', exact: true });
      await second.waitFor();
      assert.equal(await second.evaluate((el) => el === document.activeElement), true);
      await page.keyboard.type('Keep a comment saying why this was not enough.');

      // A third, then removed; a fourth, left empty, is not counted.
      await press(lineButton(page, 'docs/retry.md', 'new', 2));
      await page.getByRole('textbox', { name: 'Your comment on line 2 of docs/retry.md', exact: true }).fill('Three in total, or three retries?');
      const bar = page.locator('.review-bar');
      await bar.locator('[data-comment-count="3"]', { hasText: '3 comments' }).waitFor();
      await page.getByRole('button', { name: 'Remove your comment on line 2 of docs/retry.md' }).click();
      await bar.locator('[data-comment-count="2"]', { hasText: '2 comments' }).waitFor();
      assert.equal(await lineButton(page, 'docs/retry.md', 'new', 2).evaluate((el) => el === document.activeElement), true, 'the focus returns to the line');
      await press(lineButton(page, 'docs/retry.md', 'new', 1));
      await page.getByRole('textbox', { name: 'Your comment on line 1 of docs/retry.md', exact: true }).waitFor();
      await bar.locator('[data-comment-count="2"]').waitFor();
      // Editing one: the text box is the comment.
      await first.fill('Say which requests are idempotent: GET and PUT only.');

      // Kept over a reload, like every draft.
      await page.reload();
      await page.locator('[data-conn="live"]').waitFor();
      await page.getByRole('textbox', { name: 'Your comment on line 12 of src/api.ts', exact: true }).waitFor();
      assert.equal(await page.getByRole('textbox', { name: 'Your comment on line 12 of src/api.ts', exact: true }).inputValue(), 'Say which requests are idempotent: GET and PUT only.');
      assert.equal(await page.getByRole('textbox', { name: 'Your comment on old line 11 of src/api.ts', exact: true }).inputValue(), 'Keep a comment saying why this was not enough.');
      await bar.locator('[data-comment-count="2"]').waitFor();
      // The empty one is removed by Escape.
      await page.getByRole('textbox', { name: 'Your comment on line 1 of docs/retry.md', exact: true }).focus();
      await page.keyboard.press('Escape');
      await page.getByRole('textbox', { name: 'Your comment on line 1 of docs/retry.md', exact: true }).waitFor({ state: 'detached' });

      assert.equal(await scrollsSideways(page), false, 'the page does not scroll sideways');
      assert.deepEqual(await axe(page), []);
      // The verdict bar stays on screen: sticky at the bottom.
      const barBox = await bar.boundingBox();
      const vp = page.viewportSize();
      assert.ok(barBox.y + barBox.height <= vp.height + 1 && barBox.y < vp.height, `the verdict bar is on screen (${JSON.stringify(barBox)})`);
      await page.getByRole('textbox', { name: 'Your comment on line 12 of src/api.ts', exact: true }).scrollIntoViewIfNeeded();
      await page.screenshot({ path: join(OUT, `${size === 'laptop' ? 'desktop' : 'phone'}-review-line-comments.png`), animations: 'disabled' });

      const want = [
        { path: 'src/api.ts', line: 12, side: 'new', text: 'Say which requests are idempotent: GET and PUT only.' },
        { path: 'src/api.ts', line: 11, side: 'old', text: 'Keep a comment saying why this was not enough.' },
      ];
      if (verdict === 'changes') {
        await page.locator('[data-action="changes"]').click();
        // With line comments, the words are optional.
        assert.equal(await page.locator('[data-review-send]').isEnabled(), true);
        await page.locator('[data-review-send]').click();
      } else {
        await page.getByLabel('Note for the agent (optional)').fill('Good otherwise.');
        await press(page.locator('[data-review-send]'));
      }
      const result = await call;
      const reply = result.structuredContent.reply;
      assert.deepEqual(reply.comments, want);
      assert.equal(reply.outcome, verdict === 'changes' ? 'changes_requested' : 'approved');
      const words = result.content[0].text;
      assert.match(words, verdict === 'changes' ? /requested changes: “See my comments on the lines\.”/ : /approved the review, noting “Good otherwise\.”/);
      assert.ok(
        words.includes(
          'Line comments (2), each at its file and line of the diff:\n' +
            '- src/api.ts:12: “Say which requests are idempotent: GET and PUT only.”\n' +
            '- src/api.ts:11 (old file, a removed line): “Keep a comment saying why this was not enough.”',
        ),
        words,
      );
      await page.waitForFunction((id) => localStorage.getItem('loopback.draft.' + id) === null, ask.id);

      // Closed: each comment at its line, and in the thread; no more number buttons.
      await page.locator('.head-status .chip-closed').waitFor();
      const sent = page.locator('.line-comment.sent');
      await sent.first().waitFor();
      assert.equal(await sent.count(), 2);
      assert.match(await page.locator('tr.comment-row[data-lc-line="new:12:src/api.ts"]').innerText(), /on line 12 of src\/api\.ts\s+Say which requests/);
      assert.equal(await page.locator('[data-entry-comment]').count(), 2);
      assert.match(await page.locator('[data-entry-comment]').first().innerText(), /src\/api\.ts:12\s+Say which/);
      assert.equal(await page.locator('button[data-lc-btn]').count(), 0);
      assert.deepEqual(await axe(page), []);
      await sent.first().scrollIntoViewIfNeeded();
      await page.screenshot({ path: join(OUT, `${size === 'laptop' ? 'desktop' : 'phone'}-review-line-comments-closed.png`), animations: 'disabled' });
      assert.deepEqual(page.errors, []);
      assert.deepEqual(await cspViolations(page), []);
      await page.context().close();
    });
  }

  it('a comment the diff does not show is refused in words, and nothing is written', async () => {
    const title = 'Refused comment';
    const call = background(agent.call('request_review', { project: 'web-app', title, content: [{ type: 'diff', diff: DIFF }] }));
    const ask = await waitForAsk(server, (a) => a.prompt.title === title);
    const bad = await server.api('POST', `/asks/${ask.id}/reply`, { outcome: 'approved', comments: [{ path: 'src/api.ts', line: 40, side: 'new', text: 'x' }] });
    assert.equal(bad.status, 422);
    assert.equal(bad.body.code, 'reply.invalid');
    assert.match(bad.body.message, /the diff does not show line 40 of src\/api\.ts's new file; comment on a line the diff shows \(new lines 10-13\)/);
    assert.equal((await server.api('GET', `/asks/${ask.id}`)).body.status, 'awaiting_human');
    await server.api('POST', `/asks/${ask.id}/reply`, { outcome: 'dismissed' });
    await call;
  });
});
