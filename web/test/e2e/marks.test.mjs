// Unread and snooze (issue 29, item 1), in Chromium against the real binary at a laptop's size
// (1440×900) and a phone's (390×844, touch): each person's own marks (contract revision 6), kept
// on the server so they follow the person to another device; unread rows bold with a dot and a
// count in the tab; u marks read or unread; a snooze takes the ask out of Open into the "Snoozed"
// filter, and it comes back unread when its time comes (worked out when read: nothing runs) or
// when the agent moves. axe-core's WCAG 2.1 AA rules find nothing on the new views.

import assert from 'node:assert/strict';
import { mkdir, readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { launch } from './lib/browser.mjs';
import { cspViolations, openInbox, serverMark } from './lib/helpers.mjs';
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

async function axe(page) {
  await page.evaluate(AXE);
  const result = await page.evaluate(() =>
    // eslint-disable-next-line no-undef
    axe.run(document, { runOnly: { type: 'tag', values: ['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa'] }, resultTypes: ['violations'] }),
  );
  return result.violations.map((v) => `${v.id} (${v.impact}): ${v.help} — ${v.nodes.slice(0, 3).map((n) => n.target.join(' ')).join(' | ')}`);
}

const shot = (page, name) => page.screenshot({ path: join(SHOTS, name) });
const row = (page, id) => page.locator(`[data-ask-row="${id}"]`);
const unreadCount = async (page) => ((await page.locator('[data-unread-count]').count()) ? await page.locator('[data-unread-count]').getAttribute('data-unread-count') : '0');

describe('unread', () => {
  it('on a laptop: unread rows are bold with a dot and counted; opening reads, u toggles, the agent moving makes it unread; it follows to another device', async (t) => {
    const { server, agent } = await fresh(t);
    const [a, b, c] = await seed(server, agent, [q('Unread A?'), q('Unread B?'), q('Unread C?')]);
    const page = await openInbox(browser, server, { viewport: LAPTOP });
    await row(page, c.id).waitFor();
    for (const x of [a, b, c]) await row(page, x.id).locator('[data-unread]').waitFor();
    assert.equal(await unreadCount(page), '3');
    const weight = (id) => row(page, id).locator('.row-title').evaluate((el) => getComputedStyle(el).fontWeight);

    await row(page, c.id).click();
    await serverMark(server, c.id, (m) => m?.readAt);
    await page.waitForFunction((id) => !document.querySelector(`[data-ask-row="${id}"]`)?.classList.contains('unread'), c.id);
    assert.equal(await unreadCount(page), '2');
    assert.ok(Number(await weight(c.id)) < Number(await weight(b.id)), 'a read row is lighter than an unread one');
    assert.deepEqual(await axe(page), []);
    await shot(page, 'desktop-unread.png');

    // u: unread again (the open ask), on the server too; u again: read.
    await page.keyboard.press('u');
    await serverMark(server, c.id, (m) => m && !m.readAt);
    await row(page, c.id).locator('[data-unread]').waitFor();
    await page.locator('[data-toggle-read]', { hasText: 'Mark read' }).waitFor();
    await page.keyboard.press('u');
    await serverMark(server, c.id, (m) => m?.readAt);

    // Another device of the same person: the same marks.
    const other = await openInbox(browser, server, { viewport: LAPTOP });
    await row(other, a.id).waitFor();
    await row(other, a.id).locator('[data-unread]').waitFor();
    assert.equal(await row(other, c.id).locator('[data-unread]').count(), 0);
    await other.context().close();

    // The agent's new turn: news, so unread again (through the live socket's frame).
    await page.goto(server.origin + `/asks/${a.id}`);
    await serverMark(server, a.id, (m) => m?.readAt);
    await server.api('POST', `/asks/${a.id}/reply`, { outcome: 'follow_up', question: 'Which A?' });
    await page.goto(server.origin + '/');
    await row(page, a.id).waitFor();
    assert.equal(await row(page, a.id).locator('[data-unread]').count(), 0, "the person's own reply is no news");
    await agent.start('answer_follow_up', { askId: a.id, answer: 'The first A.' });
    await row(page, a.id).locator('[data-unread]').waitFor();
    assert.deepEqual(page.errors, []);
    assert.deepEqual(await cspViolations(page), []);
    await page.context().close();
  });
});

describe('snooze', () => {
  it('on a laptop: snoozed until a time, it leaves Open for Snoozed; it comes back unread when due; until the agent moves, it comes back when it does', async (t) => {
    const { server, agent } = await fresh(t);
    const [a, b, c] = await seed(server, agent, [q('Snooze A?'), q('Snooze B?'), q('Snooze C?')]);
    const page = await openInbox(browser, server, { viewport: LAPTOP, path: `/asks/${c.id}` });
    await page.locator('[data-mark-bar]').waitFor();
    await page.locator('[data-snooze-open]').click();
    await page.locator('[data-snooze="Tomorrow morning"]').waitFor();
    assert.deepEqual(await axe(page), []);
    await shot(page, 'desktop-snooze.png');
    await page.locator('[data-snooze="Tomorrow morning"]').click();
    const m = await serverMark(server, c.id, (m) => m?.snooze?.until);
    assert.ok(Date.parse(m.snooze.until) > Date.now() + 3600_000);
    await row(page, c.id).waitFor({ state: 'detached' });
    assert.equal((await page.locator('.tab.on .count').innerText()).trim(), '2');

    // The Snoozed filter shows it, saying until when.
    await page.locator('select').filter({ hasText: "Anyone's move" }).selectOption('snoozed');
    await row(page, c.id).locator('.chip-snoozed', { hasText: 'Snoozed until' }).waitFor();
    assert.equal(await row(page, a.id).count(), 0);
    await shot(page, 'desktop-snoozed-filter.png');
    await page.locator('select').filter({ hasText: "Anyone's move" }).selectOption('');

    // Until the agent moves: b, in the agent's move, snoozed; back (unread) when the agent answers.
    await server.api('POST', `/asks/${b.id}/reply`, { outcome: 'follow_up', question: 'Which B?' });
    await page.goto(server.origin + `/asks/${b.id}`);
    await page.locator('[data-snooze-open]').click();
    await page.locator('[data-snooze="agent"]').click();
    await serverMark(server, b.id, (m) => m?.snooze?.untilAgentMoves);
    // Away from b: an ask open on the screen when the agent moves is read at once.
    await page.goto(server.origin + '/');
    await row(page, a.id).waitFor();
    // The marks are read right after the snapshot: b leaves Open once they are in.
    await row(page, b.id).waitFor({ state: 'detached' });
    await agent.start('answer_follow_up', { askId: b.id, answer: 'The first B.' });
    await row(page, b.id).locator('[data-unread]').waitFor();

    // Due: a snooze whose time passes is back in Open, unread, worked out when read (no timer ran).
    const soon = new Date(Date.now() + 1500).toISOString();
    await page.goto(server.origin + `/asks/${a.id}`);
    await serverMark(server, a.id, (m) => m?.readAt);
    assert.equal((await server.api('PUT', `/asks/${a.id}/mark`, { snooze: { until: soon } })).status, 200);
    // (Snoozed before its time: c and b above.) Once the time has passed, a read shows it back.
    while (Date.now() < Date.parse(soon) + 200) await new Promise((r) => setTimeout(r, 100));
    await page.goto(server.origin + '/');
    await row(page, a.id).locator('[data-unread]').waitFor();
    assert.deepEqual(page.errors, []);
    await page.context().close();
  });

  it('on a phone: the snooze menu, and the ask leaves the Inbox', async (t) => {
    const { server, agent } = await fresh(t);
    const [a, b] = await seed(server, agent, [q('Phone snooze A?'), q('Phone snooze B?')]);
    const page = await openInbox(browser, server, { ...PHONE, path: `/asks/${b.id}` });
    await page.locator('[data-snooze-open]').tap();
    await page.locator('[data-snooze="In 1 hour"]').waitFor();
    assert.deepEqual(await axe(page), []);
    await shot(page, 'phone-snooze.png');
    await page.locator('[data-snooze="In 1 hour"]').tap();
    await serverMark(server, b.id, (m) => m?.snooze?.until);
    await page.goto(server.origin + '/');
    await row(page, a.id).waitFor();
    // The marks are read right after the snapshot: b leaves Open once they are in.
    await row(page, b.id).waitFor({ state: 'detached' });
    assert.deepEqual(page.errors, []);
    await page.context().close();
  });
});

describe('marks live', () => {
  it("a mark made on the laptop shows on the person's phone without a reload, and never in a teammate's inbox", async (t) => {
    const { server, agent } = await fresh(t);
    const [a, b] = await seed(server, agent, [q('Live mark A?'), q('Live mark B?')]);
    const teammate = await server.createToken('Grace', { person: true });
    const laptop = await openInbox(browser, server, { viewport: LAPTOP });
    const phone = await openInbox(browser, server, PHONE);
    const grace = await openInbox(browser, { ...server, token: teammate }, { viewport: LAPTOP });
    for (const p of [laptop, phone, grace]) await row(p, b.id).locator('[data-unread]').waitFor();
    // A reload would lose this: the pages keep it only if nothing reloads them.
    for (const p of [laptop, phone]) await p.evaluate(() => (window.__notReloaded = true));

    // Read on the laptop (opening it): the phone's row turns read, live.
    await row(laptop, b.id).click();
    await serverMark(server, b.id, (m) => m?.readAt);
    await row(phone, b.id).locator('[data-unread]').waitFor({ state: 'detached' });
    // Snoozed on the laptop: it leaves the phone's Open list, and the phone's Snoozed filter has it.
    await laptop.locator('[data-snooze-open]').click();
    await laptop.locator('[data-snooze="Tomorrow morning"]').click();
    await serverMark(server, b.id, (m) => m?.snooze?.until);
    await row(phone, b.id).waitFor({ state: 'detached' });
    assert.equal((await phone.locator('.tab.on .count').innerText()).trim(), '1');
    await phone.getByLabel('Whose move').selectOption('snoozed');
    await row(phone, b.id).locator('.chip-snoozed').waitFor();
    await phone.getByLabel('Whose move').selectOption('');
    // Marked unread on the phone: the laptop shows it unread.
    await row(phone, a.id).waitFor();
    assert.equal((await server.api('PUT', `/asks/${a.id}/mark`, { read: true })).status, 200);
    await row(laptop, a.id).locator('[data-unread]').waitFor({ state: 'detached' });
    await row(phone, a.id).locator('[data-unread]').waitFor({ state: 'detached' });
    await phone.locator(`[data-ask-row="${a.id}"]`).tap();
    await phone.locator('[data-toggle-read]', { hasText: 'Mark unread' }).tap();
    await serverMark(server, a.id, (m) => m && !m.readAt);
    await row(laptop, a.id).locator('[data-unread]').waitFor();
    for (const p of [laptop, phone]) assert.equal(await p.evaluate(() => window.__notReloaded), true, 'no page reloaded');

    // Grace's inbox: both asks still unread and open for her (the owner's marks are not hers);
    // her own mark, made after the owner's, is the first that reaches her page.
    assert.equal(await row(grace, b.id).locator('[data-unread]').count(), 1);
    assert.equal(await row(grace, a.id).locator('[data-unread]').count(), 1);
    assert.equal((await server.api('PUT', `/asks/${b.id}/mark`, { read: true }, { as: teammate })).status, 200);
    await row(grace, b.id).locator('[data-unread]').waitFor({ state: 'detached' });
    assert.equal(await row(grace, b.id).count(), 1, "the owner's snooze is not Grace's");
    assert.equal(await row(grace, a.id).locator('[data-unread]').count(), 1);
    // ... and Grace's read reaches neither of the owner's pages: b stays snoozed there, a unread.
    assert.equal(await row(laptop, a.id).locator('[data-unread]').count(), 1);
    for (const p of [laptop, phone, grace]) {
      assert.deepEqual(p.errors, []);
      await p.context().close();
    }
  });
});
