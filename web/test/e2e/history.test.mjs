// History in a real browser (Debian's headless Chromium, driven by playwright-core) against the
// real binary: 55 asks closed, read back a page at a time as the list scrolls, filtered, and one
// opened read-only.
//
// The 55 asks are made as tasks (lib/seed.mjs), so no call waits on any of them: 55 calls held
// waiting at once (eleven times the deployment's 5 per credential, lifted for the suites) would each
// read their ask's head every second, and moto answers each such index query by sorting the whole
// table, so on aws-local the waits grew to tens of seconds each past the thirtieth. Even so its 55
// asks and 55 replies take moto a minute or two (each reply's transaction copies the table and its
// stream), so it is a file of its own, with a time limit of its own, rather than inside
// inbox.test.mjs's (docs/benchmarks.md, "Inbox (issue 29)").

import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { launch } from './lib/browser.mjs';
import { openInbox } from './lib/helpers.mjs';
import { TaskAgent } from './lib/seed.mjs';
import { Server } from './lib/server.mjs';

let browser;
before(async () => {
  browser = await launch();
});
after(async () => {
  await browser?.close();
});

describe('history', () => {
  it('pages back through closed asks; a closed ask opens read-only with its whole thread', async () => {
    const own = await new Server().start();
    try {
      const a = await new TaskAgent(own).init();
      const n = 55; // more than the snapshot's 50 recent, so paging must reach the rest
      // One after the other, so that they are made in order; each resolves once its ask exists.
      for (let i = 0; i < n; i++) await a.start('ask_question', { project: i % 2 ? 'odd' : 'even', question: `Question number ${i}` });
      let asks = [];
      // Poll gently: on the AWS path every snapshot is a Query and a BatchGetItem on moto.
      while (asks.length < n) {
        asks = (await own.api('GET', '/snapshot')).body.open;
        if (asks.length < n) await new Promise((r) => setTimeout(r, 200));
      }
      // Close them from question 54 down to question 0, so 0 is the most recently closed.
      const num = (q) => Number(/\d+/.exec(q.prompt.question)[0]);
      asks.sort((x, y) => num(y) - num(x));
      for (const q of asks) await own.api('POST', `/asks/${q.id}/reply`, { outcome: 'answered', selected: [], text: `answer to ${q.prompt.question}` });

      const page = await openInbox(browser, own);
      await page.getByRole('link', { name: 'History' }).click();
      assert.equal(page.url(), own.origin + '/history');
      const rows = page.locator('[data-ask-row]');
      await page.getByRole('button', { name: 'Load older' }).waitFor();
      assert.equal(await rows.count(), 50);
      assert.match(await rows.first().innerText(), /Question number 0\b/);
      assert.equal(page.requests.filter((u) => u.includes('/api/v1/asks?') && u.includes('before=')).length, 0);
      // Scrolled to its end, the history reads on by itself: no click per page.
      await rows.last().scrollIntoViewIfNeeded();
      await page.getByText('That is everything.').waitFor();
      assert.equal(await rows.count(), n);
      assert.match(await rows.last().innerText(), /Question number 54/);
      assert.equal(page.requests.filter((u) => u.includes('/api/v1/asks?') && u.includes('before=')).length, 1);

      // The project filter applies to history too.
      // (the server's answer: a filtered history is read from the server, every closed ask of it)
      await page.locator('.project-filter select').selectOption('odd');
      await page.waitForFunction(() => document.querySelectorAll('[data-ask-row]').length === 27);
      await page.locator('.project-filter select').selectOption('');

      await rows.last().click();
      await page.locator('.readonly-note').waitFor();
      await page.locator('.entry-human', { hasText: 'answer to Question number 54' }).waitFor();
      assert.equal(await page.locator('.reply-panel').count(), 0);
      assert.equal(await page.locator('textarea').count(), 0);
      // Opened by link on a fresh page, an old closed ask (not among the snapshot's 50) is read from the API.
      const old = asks.find((q) => q.prompt.question === 'Question number 54');
      const fresh = await openInbox(browser, own, { path: `/asks/${old.id}` });
      await fresh.locator('.entry-human', { hasText: 'answer to Question number 54' }).waitFor();
      assert.ok(fresh.requests.includes(`${own.origin}/api/v1/asks/${old.id}`));
      await fresh.context().close();
      await page.context().close();
    } finally {
      await own.dispose();
    }
  });
});
