// Closing any ask, and bulk dismiss (issue 29, items 3 and 1), in Chromium against the real binary
// at a laptop's size (1440×900) and a phone's (390×844, touch): a question in the agent's move with
// no agent waiting is dismissed from its page (contract revision 6: POST /asks/{id}/dismiss); rows
// are picked with their box, x, or shift-click for a range, and dismissed in one action held for
// undo like any reply. axe-core's WCAG 2.1 AA rules find nothing on the new views.

import assert from 'node:assert/strict';
import { mkdir, readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { launch } from './lib/browser.mjs';
import { cspViolations, openInbox } from './lib/helpers.mjs';
import { LAPTOP, PHONE, q, seed, TaskAgent } from './lib/seed.mjs';
import { Server } from './lib/server.mjs';

const require = createRequire(import.meta.url);
const AXE = await readFile(require.resolve('axe-core/axe.min.js'), 'utf8');
const SHOTS = process.env.LOOPBACK_SCREENSHOTS ?? join(dirname(fileURLToPath(import.meta.url)), '../../../docs/screenshots');

let browser;
before(async () => {
  await mkdir(SHOTS, { recursive: true });
  browser = await launch();
});
after(async () => {
  await browser?.close();
});

async function fresh(t) {
  const server = await new Server().start();
  t.after(() => server.dispose());
  const agent = await new TaskAgent(server, { name: 'claude-code', version: '2.1.0' }).init();
  return { server, agent };
}

/** axe-core's WCAG 2.0/2.1 A and AA rules on the page as it stands: the violations, in words. */
async function axe(page) {
  await page.evaluate(AXE);
  const result = await page.evaluate(() =>
    // eslint-disable-next-line no-undef
    axe.run(document, { runOnly: { type: 'tag', values: ['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa'] }, resultTypes: ['violations'] }),
  );
  return result.violations.map((v) => `${v.id} (${v.impact}): ${v.help} — ${v.nodes.slice(0, 3).map((n) => n.target.join(' ')).join(' | ')}`);
}

const askOf = async (server, id) => (await server.api('GET', `/asks/${id}`)).body;
const shot = (page, name) => page.screenshot({ path: join(SHOTS, name) });

describe('closing any ask', () => {
  for (const [size, opts] of [['laptop', { viewport: LAPTOP }], ['phone', PHONE]]) {
    it(`a question in the agent's move is dismissed from its page (${size})`, async (t) => {
      const { server, agent } = await fresh(t);
      const [a] = await seed(server, agent, [q('Which table holds the sessions?', 'api')]);
      await server.api('POST', `/asks/${a.id}/reply`, { outcome: 'follow_up', question: 'Do you mean the old schema or the new one?' });
      const page = await openInbox(browser, server, { ...opts, path: `/asks/${a.id}`, bypassCSP: false });
      const close = page.locator('[data-close-agents-move]');
      await close.waitFor();
      assert.match(await close.innerText(), /The agent is told that you dismissed it while it was its move/);
      assert.deepEqual(await axe(page), []);
      await shot(page, `${size === 'laptop' ? 'desktop' : 'phone'}-dismiss-agents-move.png`);

      await close.getByRole('button', { name: 'Dismiss' }).click();
      await close.getByRole('button', { name: 'Yes, dismiss' }).click();
      await page.locator('[data-testid="answered-by"]').waitFor();
      const got = await askOf(server, a.id);
      assert.equal(got.status, 'closed');
      const last = got.thread.at(-1);
      assert.deepEqual(last.reply, { outcome: 'dismissed' });
      assert.equal(last.via, 'inbox');
      assert.ok(last.by?.id, 'the dismissal names who gave it');
      // Closed: the page shows it read-only, and nothing is left to dismiss.
      await page.locator('.readonly-note').waitFor();
      assert.equal(await page.locator('[data-close-agents-move]').count(), 0);
      assert.deepEqual(page.errors, []);
      assert.deepEqual(await cspViolations(page), []);
      await page.context().close();
    });
  }
});

describe('bulk dismiss', () => {
  it('on a laptop: pick with the box and shift-click a range, dismiss in one action, undo, then x and e', async (t) => {
    const { server, agent } = await fresh(t);
    // Newest first in the list: f, e, d, c, b, a.
    const asks = await seed(server, agent, ['A', 'B', 'C', 'D', 'E', 'F'].map((n) => q(`Bulk ${n}?`, n < 'D' ? 'alpha' : 'beta')));
    const [a, b, c, d, e, f] = asks;
    // One is the agent's move: it is picked and dismissed like any other.
    await server.api('POST', `/asks/${e.id}/reply`, { outcome: 'follow_up', question: 'Which E?' });
    const page = await openInbox(browser, server, { viewport: LAPTOP, triage: null });
    await page.locator(`[data-pick="${f.id}"]`).waitFor();

    await page.locator(`[data-pick="${f.id}"]`).click();
    await page.locator(`[data-pick="${d.id}"]`).click({ modifiers: ['Shift'] }); // f, e, d
    const bar = page.locator('[data-bulk-bar]');
    await bar.waitFor();
    assert.equal(await bar.locator('.bulk-count').innerText(), '3 picked');
    assert.equal(await page.locator('li.is-picked').count(), 3);
    assert.deepEqual(await axe(page), []);
    await shot(page, 'desktop-bulk-dismiss.png');

    // One action, held for undo; z undoes it: nothing was sent, all three stay open.
    await bar.getByRole('button', { name: 'Dismiss 3' }).click();
    await page.locator('.toast', { hasText: 'Dismissing 3 asks in 5 s. Undo keeps them open.' }).waitFor();
    assert.equal(await page.locator('[data-bulk-bar]').count(), 0);
    await page.keyboard.press('z');
    await page.locator('.toast', { hasText: 'Undone: nothing was dismissed' }).waitFor();
    for (const x of [d, e, f]) assert.notEqual((await askOf(server, x.id)).status, 'closed');

    // x picks the row under the cursor; e dismisses what is picked.
    await page.locator(`[data-ask-row="${c.id}"]`).focus();
    await page.keyboard.press('x');
    await page.keyboard.press('j'); // to b
    await page.waitForFunction((id) => document.activeElement?.getAttribute('data-ask-row') === id, b.id);
    await page.keyboard.press('x');
    assert.equal(await page.locator('.bulk-count').innerText(), '2 picked');
    await page.keyboard.press('e');
    await page.locator('.toast', { hasText: 'Dismissing 2 asks' }).waitFor();
    await page.locator(`[data-ask-row="${b.id}"] .chip-sending`).waitFor();
    for (const x of [b, c]) await page.locator(`[data-ask-row="${x.id}"]`).waitFor({ state: 'detached', timeout: 15_000 });
    for (const x of [b, c]) assert.deepEqual((await askOf(server, x.id)).thread.at(-1).reply, { outcome: 'dismissed' });
    for (const x of [a, d, e, f]) assert.notEqual((await askOf(server, x.id)).status, 'closed');
    assert.deepEqual(page.errors, []);
    assert.deepEqual(await cspViolations(page), []);
    await page.context().close();
  });

  it('on a phone: tap the boxes, dismiss them together', async (t) => {
    const { server, agent } = await fresh(t);
    const [a, b, c] = await seed(server, agent, [q('Phone bulk A?'), q('Phone bulk B?'), q('Phone bulk C?')]);
    const page = await openInbox(browser, server, PHONE);
    await page.locator(`[data-pick="${c.id}"]`).tap();
    await page.locator(`[data-pick="${a.id}"]`).tap();
    const bar = page.locator('[data-bulk-bar]');
    await bar.waitFor();
    assert.equal(await bar.locator('.bulk-count').innerText(), '2 picked');
    // Picking is not opening: the list stays.
    assert.equal(new URL(page.url()).pathname, '/');
    assert.deepEqual(await axe(page), []);
    await shot(page, 'phone-bulk-dismiss.png');
    await bar.getByRole('button', { name: 'Dismiss 2' }).tap();
    for (const x of [a, c]) await page.locator(`[data-ask-row="${x.id}"]`).waitFor({ state: 'detached', timeout: 15_000 });
    for (const x of [a, c]) assert.equal((await askOf(server, x.id)).status, 'closed');
    assert.notEqual((await askOf(server, b.id)).status, 'closed');
    assert.deepEqual(page.errors, []);
    await page.context().close();
  });
});
