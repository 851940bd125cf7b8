// The inbox as a triage tool (issue 29), in Chromium against the real binary, at a laptop's size
// (1440×900) and a phone's (390×844, touch): the next ask after an answer, undo, the done key,
// filters, the "N new" pill and layout shift, reviews on a phone, faithful titles, offline, and
// axe-core's WCAG 2.1 AA rules on every view. Asks are made over MCP as agents make them (as tasks,
// so each need not wait: lib/seed.mjs); replies the tests give go through the page.

import assert from 'node:assert/strict';
import { mkdir } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { launch } from './lib/browser.mjs';
import { cspViolations, openInbox, scrollsSideways, serverMark } from './lib/helpers.mjs';
import { inParallel, LAPTOP, longDiff, PHONE, q, seed, TaskAgent } from './lib/seed.mjs';
import { Server } from './lib/server.mjs';

const SHOTS = process.env.LOOPBACK_SCREENSHOTS ?? join(dirname(fileURLToPath(import.meta.url)), '../../../docs/screenshots');

let browser;
before(async () => {
  await mkdir(SHOTS, { recursive: true });
  browser = await launch();
});
after(async () => {
  await browser?.close();
});

/** A server of the test's own, with an agent that makes asks without waiting on each. */
async function fresh(t) {
  const server = await new Server().start();
  t.after(() => server.dispose());
  const agent = await new TaskAgent(server, { name: 'claude-code', version: '2.1.0' }).init();
  return { server, agent };
}


/** The inbox with the inbox's own triage defaults (undo, auto-advance, the pill). */
function triaged(server, opts = {}) {
  return openInbox(browser, server, { triage: null, ...opts });
}

/** `n` open asks (beyond the 60 a list draws whole: AskList.tsx), the inbox open on a laptop with all of them counted. */
async function longList(t, n, words) {
  const { server, agent } = await fresh(t);
  await inParallel([...Array(n).keys()], 6, (i) => agent.start(...q(`${words} ${i}`)));
  const page = await openInbox(browser, server, { viewport: LAPTOP });
  await page.waitForFunction((n) => document.querySelector('[data-ask-row]')?.closest('li')?.getAttribute('aria-setsize') === String(n), n);
  return page;
}

/** Waits for the focus to be on the list's row at position `n` (from 1). */
const focusOn = (page, n) => page.waitForFunction((i) => document.activeElement?.closest('li')?.getAttribute('aria-posinset') === String(i), n);

async function shot(page, name) {
  await page.screenshot({ path: join(SHOTS, name) });
}

const replyOf = async (server, id) => (await server.api('GET', `/asks/${id}`)).body;

describe('the triage flow', () => {
  it('on a laptop: an answer opens the next ask of yours, focused in the list; j goes on from there; undo keeps the draft', async (t) => {
    const { server, agent } = await fresh(t);
    // Newest first in the list: d, c (the agent's move), b, a.
    const [a, b, c, d] = await seed(server, agent, [q('Ship A?'), q('Ship B?'), q('Ship C?'), q('Ship D?')]);
    await server.api('POST', `/asks/${c.id}/reply`, { outcome: 'follow_up', question: 'Which C?' });
    const page = await triaged(server, { viewport: LAPTOP, path: `/asks/${d.id}` });
    await page.locator('.question .choice').first().waitFor();

    // 1 picks the first choice; Send holds the reply, says so, and opens b (c is the agent's move).
    await page.keyboard.press('1');
    assert.equal(await page.locator('.choice[data-choice="1"]').getAttribute('aria-pressed'), 'true');
    await page.getByRole('button', { name: 'Send answer' }).click();
    await page.locator('.toast', { hasText: 'Sending your answer in 5 s' }).waitFor();
    await page.locator('.toast-undo').waitFor();
    await page.waitForURL(`**/asks/${b.id}`);
    await page.waitForFunction((id) => document.activeElement?.getAttribute('data-ask-row') === id, b.id);
    await shot(page, 'desktop-triage-undo.png');
    // The reply is held on the page, then sent: the agent's ask closes with exactly it.
    await page.locator(`[data-ask-row="${d.id}"] .chip-sending`).waitFor();
    await page.locator(`[data-ask-row="${d.id}"]`).waitFor({ state: 'detached', timeout: 15_000 });
    const sent = await replyOf(server, d.id);
    assert.equal(sent.status, 'closed');
    assert.deepEqual(sent.thread.at(-1).reply, { outcome: 'answered', selected: ['Yes'] });

    // j goes on from b, the row in focus: to a.
    await page.keyboard.press('j');
    await page.waitForURL(`**/asks/${a.id}`);
    assert.equal(await page.evaluate(() => document.activeElement?.getAttribute('data-ask-row')), a.id);

    // Undo: nothing is sent, the ask opens again with its draft.
    await page.locator('.question textarea').fill('Only after the release');
    await page.getByRole('button', { name: 'Send answer' }).click();
    await page.locator('.toast-undo').waitFor();
    await page.keyboard.press('z');
    await page.locator('.toast', { hasText: 'Undone' }).waitFor();
    await page.waitForURL(`**/asks/${a.id}`);
    assert.equal(await page.locator('.question textarea').inputValue(), 'Only after the release');
    // Sent again, once: had the undone reply gone out, this one would be refused (the ask closed).
    await page.getByRole('button', { name: 'Send answer' }).click();
    await page.locator(`[data-ask-row="${a.id}"]`).waitFor({ state: 'detached', timeout: 15_000 });
    const again = await replyOf(server, a.id);
    assert.deepEqual(
      again.thread.filter((e) => e.author === 'human').map((e) => e.reply),
      [{ outcome: 'answered', selected: [], text: 'Only after the release' }],
    );
    assert.deepEqual(page.errors, []);
    assert.deepEqual(await cspViolations(page), []);
    await page.context().close();
  });

  it('on a phone: an answer goes back to the Inbox (not History), where the list was', async (t) => {
    const { server, agent } = await fresh(t);
    const asks = await seed(server, agent, Array.from({ length: 24 }, (_, i) => q(`Phone question ${i}`, `p${i % 3}`)));
    const page = await triaged(server, PHONE);
    await page.locator('[data-ask-row]').first().waitFor();
    await page.evaluate(() => window.scrollTo(0, 600));
    const target = asks[10];
    const row = page.locator(`[data-ask-row="${target.id}"]`);
    await row.scrollIntoViewIfNeeded();
    const before = await page.evaluate(() => window.scrollY);
    await row.click();
    await page.locator('.question .choice').first().waitFor();
    assert.equal(await page.locator('.back-btn').innerText(), 'Inbox');
    await page.locator('.question .choice').first().click();
    await page.getByRole('button', { name: 'Send answer' }).click();
    await page.waitForURL(server.origin + '/');
    await page.locator('.toast-undo').waitFor();
    await page.waitForFunction((y) => Math.abs(window.scrollY - y) < 2, before);
    assert.equal(await page.locator('.tab.on').innerText().then((s) => s.replace(/\s+/g, ' ')), `Open ${asks.length}`);
    await shot(page, 'phone-triage-back.png');
    await page.context().close();
  });

  it('e is done: the open ask is dismissed (held, then sent) and the next opens', async (t) => {
    const { server, agent } = await fresh(t);
    const [a, b] = await seed(server, agent, [q('Done A?'), q('Done B?')]);
    const page = await triaged(server, { viewport: LAPTOP, path: `/asks/${b.id}` });
    await page.locator('.question .choice').first().waitFor();
    await page.keyboard.press('e');
    await page.waitForURL(`**/asks/${a.id}`);
    await page.locator('.toast', { hasText: 'Dismissing in 5 s' }).waitFor();
    await page.locator(`[data-ask-row="${b.id}"]`).waitFor({ state: 'detached', timeout: 15_000 });
    assert.deepEqual((await replyOf(server, b.id)).thread.at(-1).reply, { outcome: 'dismissed' });
    await page.context().close();
  });

  it('on a laptop: a walk with j is one history entry, written once it stops; the ask it stops on is read', async (t) => {
    const { server, agent } = await fresh(t);
    // Newest first in the list: d, c, b, a.
    const [a, b, , d] = await seed(server, agent, [q('Walk A?'), q('Walk B?'), q('Walk C?'), q('Walk D?')]);
    const page = await triaged(server, { viewport: LAPTOP });
    await page.locator(`[data-ask-row="${a.id}"]`).waitFor();
    const entries = await page.evaluate(() => history.length);
    // One key at a time, each ask opened beside the list before the next key, however slowly.
    for (const id of [d.id, null, b.id, a.id]) {
      await page.keyboard.press('j');
      if (id) await page.locator(`#title-${id}`).waitFor();
    }
    await page.waitForURL(`**/asks/${a.id}`);
    assert.equal(await page.evaluate(() => history.length), entries + 1, 'the walk added one entry');
    // The ask the walk stopped on is read once it has been open a moment; on the server too.
    await page.waitForFunction((id) => !document.querySelector(`[data-ask-row="${id}"]`)?.classList.contains('unread'), a.id);
    await serverMark(server, a.id, (m) => m?.readAt);
    // Back goes to where the walk began: the list with no ask beside it.
    await page.goBack();
    await page.waitForURL(server.origin + '/');
    await page.locator('.pane-detail .ask-view').waitFor({ state: 'detached' });
    assert.deepEqual(page.errors, []);
    await page.context().close();
  });

  for (const [name, opts] of [
    ['laptop', { viewport: LAPTOP }],
    ['phone', PHONE],
  ]) {
    it(`on a ${name}: the tab reads "Open N" once, to the eye and to a screen reader; the project filter shows a long name whole`, async (t) => {
      const { server, agent } = await fresh(t);
      const long = 'infrastructure-terraform-modules';
      const asks = await seed(server, agent, [q('Tab one?', 'web-app'), q('Tab two?', long), q('Tab three?', 'api')]);
      const page = await openInbox(browser, server, opts);
      await page.waitForFunction(() => document.querySelectorAll('[data-ask-row]').length === 3);
      // Three open, three unread: one number, and the unread ones a dot with the count in words.
      const tab = page.locator('.tabs .tab').first();
      assert.equal((await tab.innerText()).replace(/\s+/g, ' ').trim(), `Open ${asks.length}`);
      await page.getByRole('link', { name: `Open ${asks.length}`, exact: true }).waitFor();
      assert.equal(await page.locator('[data-unread-count]').getAttribute('data-unread-count'), '3');
      const description = await tab.evaluate((el) => document.getElementById(el.getAttribute('aria-describedby'))?.textContent);
      assert.equal(description, '3 open: 3 waiting on you, 3 unread');
      const snap = await page.locator('.tabs').ariaSnapshot();
      assert.equal((snap.match(/\b3\b/g) ?? []).length, 1, `the count is read once: ${snap}`);

      // The project filter: "All projects", then the long name, each whole within the list's pane.
      const select = page.locator('.project-filter select');
      const fits = () =>
        select.evaluate((sel) => {
          const cs = getComputedStyle(sel);
          const probe = document.createElement('span');
          probe.style.font = cs.font;
          probe.style.whiteSpace = 'pre';
          probe.textContent = sel.selectedOptions[0].text;
          document.body.append(probe);
          const text = probe.getBoundingClientRect().width;
          probe.remove();
          const room = sel.clientWidth - parseFloat(cs.paddingLeft) - parseFloat(cs.paddingRight);
          const pane = sel.closest('.list-tools').getBoundingClientRect();
          const box = sel.getBoundingClientRect();
          return { text, room, inside: box.left >= pane.left && box.right <= pane.right };
        });
      let f = await fits();
      assert.ok(f.text <= f.room - 8 && f.inside, `"All projects" fits: ${JSON.stringify(f)}`);
      await select.selectOption(long);
      await page.waitForFunction(() => document.querySelectorAll('[data-ask-row]').length === 1);
      f = await fits();
      assert.ok(f.text <= f.room - 8 && f.inside, `${long} fits: ${JSON.stringify(f)}`);
      assert.equal(await select.getAttribute('title'), long);
      assert.equal(await scrollsSideways(page), false);
      await shot(page, `${name === 'laptop' ? 'desktop' : 'phone'}-project-filter.png`);
      assert.deepEqual(page.errors, []);
      await page.context().close();
    });
  }

  it('filters by project, kind and whose move, over what the page holds', async (t) => {
    const { server, agent } = await fresh(t);
    const [, , c] = await seed(server, agent, [
      q('Filter one?', 'alpha'),
      ['request_review', { project: 'alpha', title: 'Filter review', content: [{ type: 'markdown', text: 'x' }] }],
      q('Filter three?', 'beta'),
    ]);
    await server.api('POST', `/asks/${c.id}/reply`, { outcome: 'follow_up', question: 'Why?' });
    const page = await openInbox(browser, server, { viewport: LAPTOP });
    const rows = page.locator('[data-ask-row]');
    await page.waitForFunction(() => document.querySelectorAll('[data-ask-row]').length === 3);
    await page.getByLabel('Kind').selectOption('review');
    assert.equal(await rows.count(), 1);
    assert.match(await page.locator('[data-filter-note]').innerText(), /1 shown/);
    await page.getByLabel('Kind').selectOption('');
    await page.getByLabel('Whose move').selectOption('agents');
    assert.equal(await rows.count(), 1);
    assert.equal(await rows.first().getAttribute('data-ask-row'), c.id);
    await page.getByLabel('Whose move').selectOption('yours');
    await page.locator('.project-filter select').selectOption('alpha');
    assert.equal(await rows.count(), 2);
    await shot(page, 'desktop-filters.png');
    await page.context().close();
  });
});

describe('a dense, steady list', () => {
  it('fits ten or more rows on a 900 px laptop screen', async (t) => {
    const { server, agent } = await fresh(t);
    await seed(server, agent, Array.from({ length: 16 }, (_, i) => q(`Dense question number ${i}: merge PR #${1000 + i}?`, ['web-app', 'api', 'infra'][i % 3])));
    const page = await openInbox(browser, server, { viewport: LAPTOP });
    await page.waitForFunction(() => document.querySelectorAll('[data-ask-row]').length === 16);
    const fit = await page.evaluate(() => [...document.querySelectorAll('[data-ask-row]')].filter((r) => r.getBoundingClientRect().bottom <= innerHeight).length);
    assert.ok(fit >= 10, `${fit} rows fit 900 px`);
    await shot(page, 'desktop-list-dense.png');
    await page.context().close();
  });

  it('a long list is drawn a window at a time: j walks every row, and redraws the window only every few rows', async (t) => {
    const N = 90; // within one agent's open asks
    const page = await longList(t, N, 'Windowed question');
    const drawn = () => page.locator('[data-ask-row]').count();
    assert.ok((await drawn()) < 40, `${await drawn()} rows drawn of ${N}`);

    // Rows added to or removed from the list while j walks it, one press at a time, to the end.
    await page.evaluate(() => {
      window.__redraws = 0;
      new MutationObserver((records) => {
        if (records.some((r) => r.addedNodes.length || r.removedNodes.length)) window.__redraws++;
      }).observe(document.querySelector('ul.ask-list'), { childList: true });
    });
    await page.locator('[data-ask-row]').first().focus();
    const onScreen = () =>
      page.evaluate(() => {
        const row = document.activeElement.closest('[data-ask-row]').getBoundingClientRect();
        const pane = document.querySelector('.pane-list').getBoundingClientRect();
        return row.top >= pane.top - 1 && row.bottom <= pane.bottom + 1;
      });
    for (let i = 2; i <= N; i++) {
      await page.keyboard.press('j');
      await focusOn(page, i);
      assert.ok(await onScreen(), `row ${i} focused off the screen`);
    }
    const redraws = await page.evaluate(() => window.__redraws);
    const scrolled = N - (await page.evaluate(() => Math.floor(document.querySelector('.pane-list').clientHeight / 62)));
    // Drawn again once in every few presses that scroll (SLACK and OVERSCAN), not on each one.
    assert.ok(redraws > 0 && redraws <= scrolled / 3, `${redraws} redraws in ${scrolled} presses that scrolled the list`);
    assert.ok((await drawn()) < 40, `${await drawn()} rows drawn at the end`);

    // A fling far down: the rows on the screen are drawn in the frame that shows them.
    const shown = await page.evaluate(
      () =>
        new Promise((resolve) => {
          const pane = document.querySelector('.pane-list');
          pane.scrollTop = pane.scrollHeight / 3;
          requestAnimationFrame(() =>
            requestAnimationFrame(() => {
              const r = pane.getBoundingClientRect();
              resolve([0.3, 0.6, 0.9].map((f) => !!document.elementFromPoint(r.left + 120, r.top + r.height * f)?.closest('[data-ask-row]')));
            }),
          );
        }),
    );
    assert.deepEqual(shown, [true, true, true]);
    assert.deepEqual(page.errors, []);
    await page.context().close();
  });

  it('j held down, faster than the list is drawn: the focus walks on and the window stays a window', async (t) => {
    const N = 90;
    const page = await longList(t, N, 'Held-key question');
    await page.locator('[data-ask-row]').first().focus();
    // Key repeat outruns the frames: a burst of presses with no frame between them (each drawn, but
    // none painted), so the focus runs past the rows drawn and the list draws each row asked for.
    const burst = 30;
    await page.evaluate(async (n) => {
      for (let i = 0; i < n; i++) {
        document.activeElement.dispatchEvent(new KeyboardEvent('keydown', { key: 'j', bubbles: true }));
        for (let k = 0; k < 3; k++) await Promise.resolve();
      }
    }, burst);
    await focusOn(page, burst + 1);
    // Then on at a walk to the end: the rows the focus has left are not kept drawn.
    for (let i = burst + 2; i <= N; i++) {
      await page.keyboard.press('j');
      await focusOn(page, i);
    }
    const drawn = await page.locator('[data-ask-row]').count();
    assert.ok(drawn < 40, `${drawn} rows drawn with the focus on the last of ${N}`);
    assert.deepEqual(page.errors, []);
    await page.context().close();
  });

  it('on a phone, an arriving ask waits behind an "N new" pill: layout shift per ask ≤ 0.01, announced politely', async (t) => {
    const { server, agent } = await fresh(t);
    await seed(server, agent, Array.from({ length: 8 }, (_, i) => q(`Steady question ${i}?`)));
    const page = await triaged(server, PHONE);
    await page.waitForFunction(() => document.querySelectorAll('[data-ask-row]').length === 8);
    await page.evaluate(() => {
      window.__shift = 0;
      new PerformanceObserver((list) => {
        for (const e of list.getEntries()) if (!e.hadRecentInput) window.__shift += e.value;
      }).observe({ type: 'layout-shift' });
    });
    const firstRow = await page.locator('[data-ask-row]').first().getAttribute('data-ask-row');
    const n = 3;
    for (let i = 0; i < n; i++) {
      await agent.start('ask_question', { project: 'web-app', question: `Arrived ${i}?` });
      await page.locator('[data-new-pill]', { hasText: `${i + 1} new` }).waitFor();
    }
    // Two frames for the last shift to be reported.
    const shift = await page.evaluate(() => new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(() => r(window.__shift)))));
    console.log(`layout shift for ${n} arriving asks on a phone: ${shift.toFixed(4)} (${(shift / n).toFixed(4)} per ask)`);
    assert.ok(shift / n <= 0.01, `layout shift ${shift} for ${n} asks`);
    assert.equal(await page.locator('[data-ask-row]').first().getAttribute('data-ask-row'), firstRow, 'the rows did not move');
    assert.match(await page.locator('#announcer').textContent(), /New question in web-app: Arrived 2\?/);
    await shot(page, 'phone-new-pill.png');
    await page.locator('[data-new-pill]').click();
    await page.waitForFunction(() => document.querySelectorAll('[data-ask-row]').length === 11);
    await page.context().close();
  });
});

describe('a review on a phone', () => {
  it('has a sticky verdict bar, a file list, files that fold, lines that wrap and line numbers that stay', async (t) => {
    const { server, agent } = await fresh(t);
    const [r] = await seed(server, agent, [
      ['request_review', { project: 'web-app', title: 'Rename `events_v2` (PR #1043)', summary: 'Two files.', content: [{ type: 'diff', diff: longDiff() }] }],
    ]);
    const page = await triaged(server, { ...PHONE, path: `/asks/${r.id}` });
    const bar = page.locator('.review-bar');
    await bar.waitFor();
    // The title is faithful: the code span rendered, # and _ kept.
    assert.equal(await page.locator('.ask-title').innerText(), 'Rename events_v2 (PR #1043)');
    assert.equal(await page.locator('.ask-title code').innerText(), 'events_v2');
    // The verdict bar is on screen from the top of the page.
    const inView = async () => page.evaluate(() => {
      const b = document.querySelector('.review-bar').getBoundingClientRect();
      return b.top >= 0 && b.bottom <= innerHeight + 1;
    });
    assert.ok(await inView(), 'the verdict bar is on screen at the top');
    await shot(page, 'phone-review-bar.png');
    // A file list; the long file is folded to its first lines until opened.
    assert.deepEqual(await page.locator('.diff-files .file-name').allInnerTexts(), ['src/events.ts', 'README.md']);
    await page.locator('.fold-btn', { hasText: 'Show the other' }).waitFor();
    const tall = await page.evaluate(() => document.documentElement.scrollHeight);
    assert.ok(tall < 8000, `the page is ${tall} px tall with the long file folded`);
    // Lines wrap on a phone: nothing scrolls sideways.
    assert.equal(await page.locator('.diff-tools [aria-pressed]').getAttribute('aria-pressed'), 'true');
    const wide = await page.evaluate(() => Math.max(...[...document.querySelectorAll('.diff-scroll')].map((d) => d.scrollWidth - d.clientWidth)));
    assert.ok(wide <= 1, `a diff scrolls ${wide} px sideways with wrap on`);
    assert.equal(await scrollsSideways(page), false);
    // Wrap off: the long line scrolls inside its file, and the line numbers stay put.
    await page.getByRole('button', { name: 'Wrap lines' }).click();
    const scroller = page.locator('.diff-scroll').first();
    const lnX = async () => page.locator('.line.add .ln-new').first().evaluate((el) => el.getBoundingClientRect().left);
    const x0 = await lnX();
    await scroller.evaluate((el) => (el.scrollLeft = 400));
    assert.equal(await scroller.evaluate((el) => el.scrollLeft), 400);
    assert.ok(Math.abs((await lnX()) - x0) < 1, 'the line numbers scrolled sideways');
    // Each file folds.
    await page.locator('.diff-file-toggle', { hasText: 'src/events.ts' }).click();
    assert.equal(await page.locator('[data-diff-file="0"] .diff-scroll').count(), 0);
    await page.locator('.diff-file-toggle', { hasText: 'src/events.ts' }).click();
    await page.locator('.fold-btn', { hasText: 'Show the other' }).click();
    await page.evaluate(() => window.scrollTo(0, document.documentElement.scrollHeight / 2));
    assert.ok(await inView(), 'the verdict bar is on screen mid-diff');
    // Arrow keys move through the verdicts; the words go with them.
    await page.locator('.review-bar [role="radio"][aria-checked="true"]').focus();
    await page.keyboard.press('ArrowRight');
    await page.waitForFunction(() => document.activeElement?.getAttribute('data-action') === 'changes');
    assert.equal(await page.locator('[data-action="changes"]').getAttribute('aria-checked'), 'true');
    assert.equal(await page.locator('[data-review-send]').isDisabled(), true);
    assert.match(await page.locator('.review-bar .reason').innerText(), /Say what needs to change/);
    await page.keyboard.press('ArrowLeft');
    await page.waitForFunction(() => document.querySelector('[data-action="approve"]')?.getAttribute('aria-checked') === 'true');
    await page.locator('[data-review-send]').click();
    await page.waitForURL(server.origin + '/');
    // The toast is at the top, never over an action bar.
    await page.locator('.toast').waitFor();
    await page.locator('.toast').evaluate((el) => {
      const r = el.getBoundingClientRect();
      if (r.bottom > innerHeight / 2) throw new Error('the toast is low on the screen: ' + r.bottom);
    });
    await page.context().close();
  });
});

describe('faithful text', () => {
  it('titles keep # and _ and render code spans; a closed question marks the choice sent; the toast clears the bar', async (t) => {
    const { server, agent } = await fresh(t);
    const [qa] = await seed(server, agent, [
      ['ask_question', { project: 'api', question: 'Merge PR #1043 into `events_v2`, or wait for snake_case_names?', options: [{ label: 'Merge' }, { label: 'Wait' }, { label: 'Close it' }] }],
    ]);
    const page = await openInbox(browser, server, { viewport: LAPTOP });
    const row = page.locator(`[data-ask-row="${qa.id}"] .row-title`);
    await row.waitFor();
    assert.equal(await row.innerText(), 'Merge PR #1043 into events_v2, or wait for snake_case_names?');
    assert.equal(await row.locator('code').innerText(), 'events_v2');
    await server.api('POST', `/asks/${qa.id}/reply`, { outcome: 'answered', selected: ['Wait'] });
    await page.goto(server.origin + `/asks/${qa.id}`);
    await page.locator('.choice.chosen').waitFor();
    assert.deepEqual(await page.locator('.choice.chosen .choice-label').allInnerTexts(), ['Wait']);
    assert.equal(await page.locator('.choice.chosen').getAttribute('aria-pressed'), 'true');
    await shot(page, 'desktop-question-chosen.png');
    await page.context().close();
  });
});

describe('offline', () => {
  it('disables Send with a reason, greys "agent waiting", and shows the shell and last snapshot on an offline reload', async (t) => {
    const { server, agent } = await fresh(t);
    const [a] = await seed(server, agent, [q('Offline question?')]);
    const page = await openInbox(browser, server, { ...PHONE, path: `/asks/${a.id}` });
    await page.locator('.question .choice').first().click();
    await page.evaluate(() => navigator.serviceWorker.ready);
    // The snapshot is kept a second after it is heard.
    for (let i = 0; !(await page.evaluate(async () => !!(await (await caches.open('loopback-last-snapshot')).match('/__loopback/last-snapshot')))); i++) {
      if (i > 100) throw new Error('the page kept no snapshot');
      await new Promise((r) => setTimeout(r, 100));
    }
    await page.context().setOffline(true);
    const send = page.getByRole('button', { name: 'Send answer' });
    await page.waitForFunction(() => document.querySelector('.reply-panel button[type="submit"]')?.disabled === true);
    assert.match(await page.locator('.reply-panel .reason').innerText(), /You are offline/);
    await page.locator('.head-status .chip-unknown').waitFor();
    assert.equal(await page.locator('.head-status .chip-waiting').count(), 0);
    assert.equal(await send.isDisabled(), true);
    // An offline reload: the shell from the worker, the asks from the kept snapshot, read-only.
    await page.goto(server.origin + '/');
    await page.locator('[data-stale]').waitFor();
    await page.locator(`[data-ask-row="${a.id}"]`).waitFor();
    await shot(page, 'phone-offline.png');
    // The top bar fits the phone while it says it is offline: the account button is on screen.
    const account = await page.locator('.account-btn').boundingBox();
    assert.ok(account && account.x + account.width <= 390, `the account button ends at ${account && account.x + account.width} px, past the 390 px screen`);
    assert.equal(await scrollsSideways(page), false);
    await page.locator(`[data-ask-row="${a.id}"]`).click();
    await page.locator('.reply-panel .reason', { hasText: 'You are offline' }).waitFor();
    // Back online: live again, and Send works.
    await page.context().setOffline(false);
    await page.locator('[data-conn="live"]').waitFor({ timeout: 20_000 });
    assert.equal(await page.locator('[data-stale]').count(), 0);
    await page.waitForFunction(() => document.querySelector('.reply-panel button[type="submit"]')?.disabled === false);
    await page.context().close();
  });
});

describe('first run', () => {
  it('the empty inbox shows the agent set-up lines with copy buttons', async (t) => {
    const server = await new Server().start();
    t.after(() => server.dispose());
    const page = await openInbox(browser, server, { viewport: LAPTOP, permissions: ['clipboard-read', 'clipboard-write'] });
    await page.locator('.placeholder .setup').waitFor();
    const lines = await page.locator('[data-setup-line]').allInnerTexts();
    assert.ok(lines.some((l) => l === `claude mcp add --transport http loopback ${server.origin}/mcp --header "Authorization: Bearer AGENT_TOKEN"`), lines.join('\n'));
    await page.getByRole('button', { name: 'Copy the Claude Code line' }).click();
    assert.match(await page.evaluate(() => navigator.clipboard.readText()), /^claude mcp add --transport http loopback /);
    await shot(page, 'desktop-empty-setup.png');
    await page.context().close();
  });

  it('the sign-in link pasted into a signed-out tab signs in; so does the whole link pasted into the form', async (t) => {
    const server = await new Server().start();
    t.after(() => server.dispose());
    const page = await openInbox(browser, server, { signIn: false });
    await page.getByLabel('Or paste your token').waitFor();
    await page.evaluate((token) => (location.hash = 'token=' + token), server.token);
    await page.locator('[data-conn="live"]').waitFor();
    assert.ok(!page.url().includes('token'));
    await page.locator('.account-btn').click();
    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.getByLabel('Or paste your token').fill(`${server.origin}/#token=${server.token}`);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.locator('[data-conn="live"]').waitFor();
    await page.context().close();
  });
});

describe('compression', () => {
  it('the inbox and the API arrive gzipped; /mcp is never wrapped', async (t) => {
    const { server, agent } = await fresh(t);
    await seed(server, agent, Array.from({ length: 12 }, (_, i) => q(`Compressed question ${i}: ${'words '.repeat(20)}`)));
    const page = await openInbox(browser, server, { viewport: LAPTOP });
    const res = await page.request.get(server.origin + '/api/v1/snapshot', { headers: { Authorization: `Bearer ${server.token}`, 'Accept-Encoding': 'gzip' } });
    assert.equal(res.headers()['content-encoding'], 'gzip');
    assert.match(res.headers()['vary'] ?? '', /Accept-Encoding/);
    // The scripts that crossed the network (the first one at least). A chunk loaded later (highlight.js,
    // once the list is up) may come from the service worker's copy of the shell, which has no wire size.
    const js = await page.evaluate(() =>
      performance
        .getEntriesByType('resource')
        .filter((e) => /\/assets\/.*\.js$/.test(e.name) && e.workerStart === 0)
        .map((e) => [e.encodedBodySize, e.decodedBodySize]),
    );
    assert.ok(js.length && js.every(([enc, dec]) => enc < dec / 2), JSON.stringify(js));
    const mcp = await fetch(server.origin + '/mcp', { method: 'POST', headers: { Authorization: `Bearer ${server.token}`, 'Content-Type': 'application/json', Accept: 'application/json, text/event-stream', 'Accept-Encoding': 'gzip' }, body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 't', version: '1' } } }) });
    assert.equal(mcp.headers.get('content-encoding'), null);
    assert.doesNotMatch(mcp.headers.get('vary') ?? '', /Accept-Encoding/);
    await page.context().close();
  });
});

