// Search (issue 29, contract revision 6), in Chromium against the real binary at a laptop's size
// (1440×900) and a phone's (390×844, touch): the search box (`/` focuses it) asks the server as
// you type, debounced; results mark the matched words as text (agent-written markup stays
// characters); a closed ask is found and opens; the history under a filter is the server's, read
// a page at a time as it scrolls; offline says why search cannot work; the empty inbox's
// "Send me a test ask" makes an example question a person answers.

import assert from 'node:assert/strict';
import { mkdir } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { launch } from './lib/browser.mjs';
import { cspViolations, openInbox, scrollsSideways } from './lib/helpers.mjs';
import { LAPTOP, PHONE, q, seed, TaskAgent } from './lib/seed.mjs';
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

describe('search', () => {
  let server;
  const ids = {};
  before(async () => {
    server = await new Server().start();
    const agent = await new TaskAgent(server, { name: 'claude-code', version: '2.1.0' }).init();
    const [deploy, xss, review, billing] = await seed(server, agent, [
      q('Deploy `events_v2` to staging?', 'api'),
      q('Rename the <script>window.__pwned=1</script> module before the release?', 'web-app'),
      ['request_review', { project: 'web-app', title: 'Fix PR #1043 login', content: [{ type: 'markdown', text: 'The **login** flow breaks on Safari when the session cookie expires.' }] }],
      q('Refund the duplicate invoice for ACME?', 'billing'),
    ]);
    const r = await server.api('POST', `/asks/${billing.id}/reply`, { outcome: 'answered', selected: ['Yes'], text: 'Yes, and tell them on Friday' });
    assert.equal(r.status, 200);
    Object.assign(ids, { deploy: deploy.id, xss: xss.id, review: review.id, billing: billing.id });
  });
  after(() => server?.dispose());

  it('on a laptop: / focuses the box; typing asks the server once it pauses; matched words are marked; a closed ask opens', async () => {
    const page = await openInbox(browser, server, { viewport: LAPTOP });
    await page.locator('[data-ask-row]').first().waitFor();
    await page.keyboard.press('/');
    assert.equal(await page.evaluate(() => document.activeElement?.id), 'search-input');

    const before = page.requests.filter((u) => u.includes('/api/v1/search')).length;
    await page.keyboard.type('dep stag', { delay: 20 });
    await page.locator(`[data-search-hit="${ids.deploy}"]`).waitFor();
    assert.deepEqual(await page.locator('[data-search-hit]').evaluateAll((els) => els.map((e) => e.getAttribute('data-search-hit'))), [ids.deploy]);
    assert.deepEqual(await page.locator(`[data-search-hit="${ids.deploy}"] mark`).allTextContents(), ['Deploy', 'staging']);
    // Debounced: eight keys, not eight requests.
    const sent = page.requests.filter((u) => u.includes('/api/v1/search')).length - before;
    assert.ok(sent >= 1 && sent <= 3, `${sent} search requests for 8 keys`);

    // The whole history: the closed ask is found by a word of its reply, and opens.
    await page.locator('[data-search]').fill('friday');
    await page.locator(`[data-search-hit="${ids.billing}"]`).waitFor();
    assert.equal(await page.locator(`[data-search-hit="${ids.billing}"] .chip`).textContent(), 'Closed');
    await page.screenshot({ path: join(SHOTS, 'desktop-search.png') });
    await page.locator(`[data-search-hit="${ids.billing}"]`).click();
    await page.waitForURL(`**/asks/${ids.billing}`);
    await page.locator('.ask-view .ask-head').waitFor();
    // The results stay beside the open ask.
    assert.equal(await page.locator('[data-search]').inputValue(), 'friday');

    // Agent-written markup is text in the highlight: nothing ran, no element was made of it.
    await page.locator('[data-search]').fill('script');
    await page.locator(`[data-search-hit="${ids.xss}"]`).waitFor();
    const hit = page.locator(`[data-search-hit="${ids.xss}"] [data-highlight]`);
    assert.match(await hit.textContent(), /<script>window\.__pwned=1<\/script>/);
    assert.equal(await hit.locator('script').count(), 0);
    assert.equal(await page.evaluate(() => window.__pwned), undefined);

    // FTS syntax is only words; no words found says so. Esc empties the box and the list comes back.
    await page.locator('[data-search]').fill('"NEAR(x* OR');
    await page.locator('.search-results .list-empty').waitFor();
    assert.match(await page.locator('.search-results .list-empty').textContent(), /Nothing matches/);
    await page.locator('[data-search]').press('Escape');
    await page.locator('[data-search-results]').waitFor({ state: 'detached' });
    await page.locator(`[data-ask-row="${ids.deploy}"]`).waitFor();

    assert.deepEqual(page.errors, []);
    assert.deepEqual(await cspViolations(page), []);
    await page.context().close();
  });

  it('on a phone: results fit 390 px; offline says why search cannot work', async () => {
    const page = await openInbox(browser, server, PHONE);
    await page.locator('[data-ask-row]').first().waitFor();
    await page.locator('[data-search]').tap();
    await page.locator('[data-search]').fill('login');
    await page.locator(`[data-search-hit="${ids.review}"] mark`).first().waitFor();
    assert.deepEqual(await page.locator(`[data-search-hit="${ids.review}"] mark`).allTextContents(), ['login', 'login']);
    assert.equal(await scrollsSideways(page), false);
    await page.screenshot({ path: join(SHOTS, 'phone-search.png') });
    await page.locator(`[data-search-hit="${ids.review}"]`).tap();
    await page.waitForURL(`**/asks/${ids.review}`);
    await page.locator('.ask-view .ask-head').waitFor();

    await page.goBack();
    await page.context().setOffline(true);
    await page.locator('[data-search-offline]').waitFor();
    assert.match(await page.locator('[data-search-offline]').textContent(), /Search needs a connection/);
    await page.screenshot({ path: join(SHOTS, 'phone-search-offline.png') });
    await page.context().setOffline(false);
    await page.locator(`[data-search-hit="${ids.review}"]`).waitFor();
    assert.deepEqual(page.errors, []);
    await page.context().close();
  });
});

describe('search under a filter', () => {
  for (const [name, opts] of [
    ['laptop', { viewport: LAPTOP }],
    ['phone', PHONE],
  ]) {
    it(`on a ${name}: under "Snoozed" it searches the snoozed asks only, under any other filter what the list shows, and says which`, async (t) => {
      const server = await new Server().start();
      t.after(() => server.dispose());
      const agent = await new TaskAgent(server, { name: 'claude-code', version: '2.1.0' }).init();
      const [awake, sleeping, other, closed] = await seed(server, agent, [
        q('Rotate the staging keys?', 'api'),
        q('Rotate the production keys?', 'api'),
        q('Rotate the docs banner?', 'docs'),
        q('Rotate the old keys?', 'api'),
      ]);
      assert.equal((await server.api('POST', `/asks/${closed.id}/reply`, { outcome: 'answered', selected: ['Yes'] })).status, 200);
      assert.equal((await server.api('PUT', `/asks/${sleeping.id}/mark`, { snooze: { untilAgentMoves: true } })).status, 200);
      const page = await openInbox(browser, server, opts);
      await page.locator(`[data-ask-row="${awake.id}"]`).waitFor();
      await page.locator(`[data-ask-row="${sleeping.id}"]`).waitFor({ state: 'detached' });
      const hits = () => page.locator('[data-search-hit]').evaluateAll((els) => els.map((e) => e.getAttribute('data-search-hit')).sort());
      const search = async (words, want) => {
        await page.locator('[data-search]').fill(words);
        await page.waitForFunction(
          (w) => JSON.stringify([...document.querySelectorAll('[data-search-hit]')].map((e) => e.getAttribute('data-search-hit')).sort()) === JSON.stringify(w),
          [...want].sort(),
        );
        await page.locator('[data-search-results] .list-more', { hasText: 'That is everything' }).waitFor();
      };

      // No filter: every ask, open and closed, snoozed or not, and it says so.
      assert.equal(await page.locator('[data-search]').getAttribute('placeholder'), 'Search every ask, open and closed  /');
      await search('rotate', [awake.id, sleeping.id, other.id, closed.id]);
      assert.equal(await page.locator('[data-search-scope]').innerText(), 'Searching every ask, open and closed');

      // Snoozed: only the snoozed one, though the others match too.
      await page.getByLabel('Whose move').selectOption('snoozed');
      await search('rotate', [sleeping.id]);
      assert.equal(await page.locator('[data-search-scope]').innerText(), 'Searching snoozed asks');
      assert.equal(await page.getByRole('searchbox').getAttribute('placeholder'), 'Search snoozed asks  /');
      assert.equal(await scrollsSideways(page), false);
      if (name === 'laptop') await page.screenshot({ path: join(SHOTS, 'desktop-search-snoozed.png') });

      // Your move in api: the open asks of api that are the person's, never the snoozed one nor the closed one.
      await page.getByLabel('Whose move').selectOption('yours');
      await page.getByLabel('Project').selectOption('api');
      await search('rotate', [awake.id]);
      assert.equal(await page.locator('[data-search-scope]').innerText(), 'Searching open asks in api that are your move');
      // Anyone's move in api: the open ones of api (the list shows no snoozed ask there either).
      await page.getByLabel('Whose move').selectOption('');
      await search('rotate', [awake.id]);
      assert.equal(await page.locator('[data-search-scope]').innerText(), 'Searching open asks in api');
      // History: the closed ones.
      await page.getByLabel('Project').selectOption('');
      await page.getByRole('link', { name: 'History' }).click();
      await search('rotate', [closed.id]);
      assert.equal(await page.locator('[data-search-scope]').innerText(), 'Searching closed asks');
      assert.deepEqual(page.errors, []);
      assert.deepEqual(await cspViolations(page), []);
      await page.context().close();
    });
  }
});

describe('history from the server', () => {
  it('a filter reads every closed ask of the project from the server, more as the list scrolls', async (t) => {
    const server = await new Server().start();
    t.after(() => server.dispose());
    // 60 closed example asks (more than the snapshot's 50 and a page of 50).
    for (let i = 0; i < 60; i++) {
      const made = await server.api('POST', '/examples');
      assert.equal(made.status, 201);
      assert.equal((await server.api('POST', `/asks/${made.body.id}/reply`, { outcome: 'answered', selected: ['Tea'], text: `cup ${i}` })).status, 200);
    }
    for (const [name, opts] of [['laptop', { viewport: LAPTOP }], ['phone', PHONE]]) {
      const page = await openInbox(browser, server, { ...opts, path: '/history' });
      await page.locator('[data-ask-row]').first().waitFor();
      await page.locator('.project-filter select').selectOption('loopback-example');
      await page.locator('[data-search-hit]').first().waitFor();
      assert.equal(await page.locator('[data-search-hit]').count(), 50, name);
      // The end of the list in view: the next page, without a click.
      await page.locator('[data-search-hit]').last().scrollIntoViewIfNeeded();
      await page.waitForFunction(() => document.querySelectorAll('[data-search-hit]').length === 60);
      await page.locator('.search-results .list-more', { hasText: 'That is everything.' }).waitFor();
      if (name === 'laptop') await page.screenshot({ path: join(SHOTS, 'desktop-history-filtered.png') });
      assert.deepEqual(page.errors, []);
      await page.context().close();
    }
  });
});

describe('the example ask', () => {
  for (const [name, opts] of [['laptop', { viewport: LAPTOP }], ['phone', PHONE]]) {
    it(`on an empty inbox (${name}), "Send me a test ask" makes a question the person answers; answering only closes it`, async (t) => {
      const server = await new Server().start();
      t.after(() => server.dispose());
      const page = await openInbox(browser, server, opts);
      const button = page.locator('.list-empty [data-example-ask]');
      await button.waitFor();
      if (name === 'laptop') await page.screenshot({ path: join(SHOTS, 'desktop-empty-example.png') });
      await button.click();
      await page.waitForURL('**/asks/*');
      const id = decodeURIComponent(new URL(page.url()).pathname.split('/').pop());
      await page.locator('.ask-view', { hasText: 'This is an example ask' }).waitFor();
      if (name === 'phone') await page.screenshot({ path: join(SHOTS, 'phone-example-ask.png') });
      await page.locator('.question .choice', { hasText: 'Tea' }).click();
      await page.getByRole('button', { name: 'Send answer' }).click();
      await page.waitForFunction(async (id) => {
        const r = await fetch(`/api/v1/asks/${id}`, { headers: { Authorization: 'Bearer ' + localStorage.getItem('loopback.token') } });
        return (await r.json()).status === 'closed';
      }, id);
      const a = (await server.api('GET', `/asks/${id}`)).body;
      assert.equal(a.client, 'loopback (example)');
      assert.equal(a.project, 'loopback-example');
      assert.deepEqual(a.thread.at(-1).reply, { outcome: 'answered', selected: ['Tea'] });
      assert.deepEqual(page.errors, []);
      await page.context().close();
    });
  }
});
