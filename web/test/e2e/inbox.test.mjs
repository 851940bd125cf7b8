// The inbox in a real browser (Debian's headless Chromium, driven by playwright-core) against the
// real binary. Agents ask over MCP (raw JSON-RPC over HTTP); the person answers through the page;
// each test checks that the agent's blocking call returns exactly the reply the page sent.
//
//   go build -o bin/loopback ./cmd/loopback && cd web && npm run test:e2e
//
// See docs/design/inbox.md for what each test stands for.

import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { launch } from './lib/browser.mjs';
import { background, cspViolations, openInbox, png, scrollsSideways, uploadPng, waitForAsk } from './lib/helpers.mjs';
import { Agent } from './lib/mcp.mjs';
import { Server } from './lib/server.mjs';

const CSP =
  "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' blob:; connect-src 'self'; font-src 'self'; " +
  "object-src 'none'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'; frame-src 'none'; worker-src 'self'; manifest-src 'self'";

let server;
let agent;
let browser;
let seq = 0;
const project = (name) => `${name}-${++seq}`;

/** The account menu's Sign out: the one way (but a 401) to sign out. */
async function signOutFrom(page) {
  await page.locator('.account-btn').click();
  await page.getByRole('button', { name: 'Sign out' }).click();
}

/** Who the page says is signed in, from the account menu (closed again after). */
async function signedInAs(page) {
  await page.locator('.account-btn').click();
  const who = await page.locator('.account-menu .account-who').innerText();
  await page.keyboard.press('Escape');
  await page.locator('.account-menu').waitFor({ state: 'detached' });
  return who.replace(/\s+/g, ' ').trim();
}

before(async () => {
  server = await new Server().start();
  agent = await new Agent(server, { name: 'e2e-agent', version: '1.0.0' }).init();
  browser = await launch();
});

after(async () => {
  await browser?.close();
  await server?.dispose();
});

describe('serving', () => {
  it('serves the inbox at /, /asks/{id}, /history and /rules with a strict CSP', async () => {
    for (const path of ['/', '/asks/abc', '/history', '/rules']) {
      const res = await fetch(server.origin + path);
      assert.equal(res.status, 200, path);
      assert.equal(res.headers.get('content-security-policy'), CSP, path);
      assert.equal(res.headers.get('x-frame-options'), 'DENY');
      const html = await res.text();
      assert.match(html, /<div id="app"><\/div>/);
      assert.doesNotMatch(html, /<script(?![^>]*\bsrc=)[^>]*>/, 'no inline script');
      assert.doesNotMatch(html, /<style|\sstyle=/, 'no inline style');
    }
    assert.equal((await fetch(server.origin + '/nope')).status, 404);
    // The API is still the API.
    assert.equal((await fetch(server.origin + '/api/v1/snapshot')).status, 401);
  });
});

describe('signing in', () => {
  it('takes the token from the link, out of the address bar, and keeps it; sign-out and a bad token lead to sign-in', async () => {
    const page = await openInbox(browser, server);
    assert.equal(page.url(), server.origin + '/');
    assert.equal(await page.evaluate(() => localStorage.getItem('loopback.token')), server.token);
    assert.ok(!page.requests.some((u) => u.includes(server.token)), 'the token is in no request URL');
    // Every API call names the revision the page was built for (the server's), and carries the token
    // as a header.
    const revision = (await server.api('GET', '/whoami')).headers.get('loopback-revision');
    assert.ok(page.apiHeaders.length >= 2, 'whoami and a ticket at least');
    // GET /api/v1/sso is public (the signed-out page asks whether single sign-on is offered, which
    // it may do while the link's token is being checked): it names the revision and no credential.
    for (const h of page.apiHeaders) {
      const auth = new URL(h.url).pathname === '/api/v1/sso' ? undefined : `Bearer ${server.token}`;
      assert.deepEqual([h.revision, h.auth], [revision, auth], h.url);
    }
    // The token was replaced in the history entry, not left behind in one.
    assert.equal(await page.evaluate(() => history.length), 2); // about:blank, then the inbox

    await page.reload();
    await page.locator('[data-conn="live"]').waitFor();

    await page.evaluate(() => localStorage.setItem('loopback.draft.x', JSON.stringify({ savedAt: Date.now(), value: {} })));
    await signOutFrom(page);
    await page.getByText('You signed out.').waitFor();
    assert.equal(await page.evaluate(() => localStorage.getItem('loopback.draft.x')), null, 'signing out forgets drafts');
    assert.equal(await page.evaluate(() => localStorage.getItem('loopback.token')), null);

    await page.goto(server.origin + '/asks/x#token=not-the-token');
    await page.getByRole('alert').filter({ hasText: 'did not accept your sign-in' }).waitFor();
    assert.equal(page.url(), server.origin + '/asks/x');
    assert.equal(await page.evaluate(() => localStorage.getItem('loopback.token')), null);

    // Pasting the token signs in too.
    await page.getByLabel('Or paste your token').fill(server.token);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.locator('[data-conn="live"]').waitFor();
    await page.context().close();
  });
});

describe('who is signed in', () => {
  // A teammate sharing the space, an agent's credential, and who the owner is, as whoami says.
  let ada;
  let bot;
  let owner;
  before(async () => {
    ada = await server.createToken('ada', { person: true });
    bot = await server.createToken('cursor-bot');
    owner = (await server.api('GET', '/whoami')).body;
    assert.equal((await server.api('GET', '/whoami', undefined, { as: ada })).body.actor.name, 'ada');
  });
  const ownerLine = () => `Signed in as ${owner.actor.name} Space ${owner.space}`;

  it('shows who is signed in, and signs out only from the account menu', async () => {
    const page = await openInbox(browser, server);
    assert.equal(await page.locator('.account-btn').getAttribute('aria-label'), `Account: ${owner.actor.name}`);
    assert.equal(await signedInAs(page), ownerLine());
    await signOutFrom(page);
    await page.getByLabel('Or paste your token').waitFor();
    assert.equal(await page.evaluate(() => localStorage.getItem('loopback.token')), null);
    await page.reload();
    await page.getByLabel('Or paste your token').waitFor(); // still signed out
    await page.context().close();
  });

  it('cannot be switched or signed out by #token= links in what an agent wrote, nor by a later hashchange', async () => {
    const page = await openInbox(browser, server);
    const p = project('token-links');
    const q = background(agent.call('ask_question', {
      project: p,
      question:
        `Please [see the diff](#token=${ada}), or [this one](#token=lb_garbage), ` +
        `[encoded](#%74oken=${ada}), [a route](/asks/x#token=${ada}) and [the inbox](${server.origin}/#token=${ada}).\n\n` +
        `${server.origin}/#token=${ada}`,
      options: [{ label: 'Yes' }, { label: 'No' }],
    }));
    const ask = await waitForAsk(server, (a) => a.project === p);
    await page.locator(`[data-ask-row="${ask.id}"]`).click();
    const prompt = page.locator('.ask-view .md').first();
    await prompt.locator('.token-link', { hasText: 'see the diff' }).waitFor();
    // Shown as their words, not as links.
    assert.equal(await page.locator('.ask-view .md a[href*="oken"]').count(), 0);
    assert.equal(await page.locator('.ask-view .token-link').count(), 6);
    for (const t of await page.locator('.ask-view .token-link').all()) await t.click();

    const unchanged = async (what) => {
      assert.equal(await page.evaluate(() => localStorage.getItem('loopback.token')), server.token, what);
      assert.equal(await page.locator('dialog[open]').count(), 0, what);
      assert.ok(!page.url().includes('token'), `${what}: ${page.url()}`);
      assert.equal(await signedInAs(page), ownerLine(), what);
      await page.locator(`[data-ask-row="${ask.id}"]`).waitFor({ timeout: 2000 });
      assert.equal(await page.locator('[data-conn="live"]').count(), 1, what);
    };
    await unchanged('after clicking the link texts');

    // Even a real link to #token= (had one slipped through) and a script changing the fragment only
    // get a note; the token leaves the address bar at once.
    for (const token of [ada, 'lb_garbage']) {
      await page.evaluate((t) => {
        const a = document.createElement('a');
        a.href = '#token=' + t;
        a.textContent = 'planted';
        document.querySelector('.ask-view').append(a);
        a.click();
        a.remove();
      }, token);
      await page.locator('[data-notice]', { hasText: 'ignored' }).waitFor();
      await unchanged(`a clicked #token= link (${token === ada ? "ada's" : 'garbage'})`);
      await page.locator('[data-notice]').getByRole('button', { name: 'Dismiss' }).click();
      await page.evaluate((t) => {
        location.hash = 'token=' + t;
      }, token);
      await page.locator('[data-notice]', { hasText: 'ignored' }).waitFor();
      await unchanged(`a scripted hashchange (${token === ada ? "ada's" : 'garbage'})`);
      await page.locator('[data-notice]').getByRole('button', { name: 'Dismiss' }).click();
    }
    assert.equal(await signedInAs(page), ownerLine());
    assert.deepEqual(page.errors, []);
    await server.api('POST', `/asks/${ask.id}/reply`, { outcome: 'dismissed' });
    await q;
    await page.context().close();
  });

  it("shows whose agent asked, and a teammate's reply under her name", async () => {
    const page = await openInbox(browser, server);
    const p = project('teammate');
    // The owner's agent asks; ada answers through the API with her own token.
    const mine = agent.call('ask_question', { project: p, question: 'Who takes the release?', options: [{ label: 'Me' }, { label: 'You' }] });
    const a1 = await waitForAsk(server, (a) => a.project === p);
    // Ada's own agent asks too (a person's credential may use /mcp).
    const adasAgent = await new Agent(server, { name: 'ada-cli', version: '0.1.0', token: ada }).init();
    const theirs = background(adasAgent.call('ask_question', { project: p, question: 'Can I merge the schema change?' }));
    const a2 = await waitForAsk(server, (a) => a.project === p && a.id !== a1.id);
    assert.equal(a2.raisedBy?.name, 'ada');

    // In the list, a teammate's agent is named; one's own agent is not.
    const row2 = page.locator(`[data-ask-row="${a2.id}"]`);
    await row2.locator('.row-by', { hasText: "ada's agent" }).waitFor();
    assert.equal(await page.locator(`[data-ask-row="${a1.id}"] .row-by`).count(), 0);
    await row2.click();
    await page.locator('.ask-view .raised-by', { hasText: "by ada's agent" }).waitFor();
    await page.locator(`[data-ask-row="${a1.id}"]`).click();
    await page.locator('.ask-view .raised-by', { hasText: 'by your agent' }).waitFor();

    const res = await server.api('POST', `/asks/${a1.id}/reply`, { outcome: 'answered', selected: ['Me'], text: 'I will, on Thursday.' }, { as: ada });
    assert.equal(res.status, 200, JSON.stringify(res.body));
    assert.deepEqual((await mine).reply, { outcome: 'answered', selected: ['Me'], text: 'I will, on Thursday.' });
    const entry = page.locator('.entry-human', { hasText: 'I will, on Thursday.' });
    await entry.waitFor(); // live
    assert.equal(await entry.locator('.who').innerText(), 'ada');
    assert.match(await entry.locator('.entry-head').innerText(), /^ada answered/);

    // The owner's own reply, on ada's agent's ask, is "You".
    await page.locator(`[data-ask-row="${a2.id}"]`).click();
    await page.getByLabel('Your answer').fill('Yes, after the backup.');
    await page.getByRole('button', { name: 'Send answer' }).click();
    await theirs;
    await page.locator('.entry-human .who', { hasText: 'You' }).waitFor();
    await page.context().close();
  });

  it('asks, showing both, before a sign-in link replaces who is signed in; refuses bad and agent tokens', async () => {
    const page = await openInbox(browser, server);
    const context = page.context();

    // A teammate's link opened in another tab: the choice, with both names and spaces.
    const tab = await context.newPage();
    await tab.goto(server.origin + '/history#token=' + ada);
    const dialog = tab.getByRole('dialog', { name: 'Switch to another sign-in?' });
    await dialog.waitFor();
    assert.equal(tab.url(), server.origin + '/history', 'the token left the address bar at once');
    assert.equal(await dialog.locator('[data-identity="current"] dd').innerText().then(oneLine), `${owner.actor.name} Space ${owner.space}`);
    assert.equal(await dialog.locator('[data-identity="next"] dd').innerText().then(oneLine), 'ada Space local');
    assert.equal(await tab.evaluate(() => localStorage.getItem('loopback.token')), server.token, 'not kept before the choice');
    await dialog.getByRole('button', { name: `Keep ${owner.actor.name}` }).click();
    await dialog.waitFor({ state: 'hidden' });
    assert.equal(await signedInAs(tab), ownerLine());
    assert.equal(await tab.evaluate(() => localStorage.getItem('loopback.token')), server.token);

    // Esc keeps too.
    await tab.goto(server.origin + '/#token=' + ada);
    await dialog.waitFor();
    await tab.keyboard.press('Escape');
    await dialog.waitFor({ state: 'hidden' });
    assert.equal(await signedInAs(tab), ownerLine());

    // A garbage token and an agent's token: refused with the reason; nothing changes.
    await tab.goto(server.origin + '/history#token=lb_garbage');
    await tab.locator('[data-notice]', { hasText: 'was not accepted' }).waitFor();
    assert.match(await tab.locator('[data-notice]').innerText(), new RegExp(`still signed in as ${owner.actor.name}`));
    await tab.goto(server.origin + '/#token=' + bot);
    await tab.locator('[data-notice]', { hasText: "carries an agent's token (cursor-bot)" }).waitFor();
    assert.equal(await tab.evaluate(() => localStorage.getItem('loopback.token')), server.token);
    assert.equal(await signedInAs(tab), ownerLine());
    assert.ok(!tab.url().includes('token'));

    // Switching: signed in as ada, kept for the next load. (Each goto changes the path, so that it is
    // a page load: a change of the fragment alone would be a hashchange, which is ignored.)
    await tab.goto(server.origin + '/history#token=' + ada);
    await dialog.getByRole('button', { name: 'Switch to ada' }).click();
    await dialog.waitFor({ state: 'hidden' });
    await tab.locator('[data-conn="live"]').waitFor();
    assert.equal(await signedInAs(tab), 'Signed in as ada Space local');
    await tab.reload();
    await tab.locator('[data-conn="live"]').waitFor();
    assert.equal(await signedInAs(tab), 'Signed in as ada Space local');
    assert.equal(await tab.evaluate(() => localStorage.getItem('loopback.token')), ada);
    assert.deepEqual(tab.errors ?? [], []);
    await context.close();
  });

  it("refuses an agent's token pasted at sign-in, and does not keep it", async () => {
    const page = await openInbox(browser, server, { signIn: false });
    await page.getByLabel('Or paste your token').fill(bot);
    await page.getByRole('button', { name: 'Sign in' }).click();
    const alert = page.getByRole('alert').filter({ hasText: 'it can only be used by agents, over MCP' });
    await alert.waitFor();
    assert.match(await alert.innerText(), /Sign in with your own \(person\) token/);
    assert.equal(await page.evaluate(() => localStorage.getItem('loopback.token')), null);
    // A link with it, too.
    await page.goto(server.origin + '/asks/x#token=' + bot);
    await alert.waitFor();
    assert.equal(page.url(), server.origin + '/asks/x');
    assert.equal(await page.evaluate(() => localStorage.getItem('loopback.token')), null);
    await page.context().close();
  });
});

const oneLine = (s) => s.replace(/\s+/g, ' ').trim();

describe('questions', () => {
  it('shows a new question live, and the answer picked on the page reaches the waiting agent', async () => {
    const page = await openInbox(browser, server);
    const p = project('alpha');
    const call = agent.call('ask_question', {
      project: p,
      question: 'Which **storage** should we use?',
      context: 'It must be pure Go.',
      options: [{ label: 'SQLite', description: 'modernc.org/sqlite' }, { label: 'Bolt' }, { label: 'Files' }],
      multiple: true,
    });
    const ask = await waitForAsk(server, (a) => a.project === p);
    const row = page.locator(`[data-ask-row="${ask.id}"]`);
    await row.waitFor(); // live, without a reload
    const rowText = await row.innerText();
    for (const want of ['QUESTION', p, 'e2e-agent 1.0.0', 'Your move', 'Agent waiting', 'just now']) {
      assert.ok(rowText.includes(want), `row shows ${want}: ${rowText}`);
    }
    await row.click();
    assert.equal(page.url(), `${server.origin}/asks/${ask.id}`);
    await page.locator('.prompt-text strong', { hasText: 'storage' }).waitFor();
    const send = page.getByRole('button', { name: 'Send answer' });
    assert.ok(await send.isDisabled());
    await page.getByText('Pick a choice or write an answer to send.').waitFor();
    await page.getByRole('button', { name: /SQLite/ }).click();
    await page.getByRole('button', { name: /Files/ }).click();
    assert.equal(await page.getByRole('button', { name: /SQLite/ }).getAttribute('aria-pressed'), 'true');
    await page.getByLabel(/In your own words/).fill('SQLite for data, files for blobs.');
    await send.click();
    const reply = await call;
    assert.deepEqual(reply, {
      askId: ask.id,
      reply: { outcome: 'answered', selected: ['SQLite', 'Files'], text: 'SQLite for data, files for blobs.' },
    });
    await page.locator('.head-status .chip-closed', { hasText: 'Answered' }).waitFor();
    assert.deepEqual(page.errors, []);
    await page.context().close();
  });

  it('keeps a draft through a reload and clears it once sent', async () => {
    const page = await openInbox(browser, server);
    const p = project('drafts');
    const call = agent.call('ask_question', {
      project: p,
      question: 'Ship it today?',
      options: [{ label: 'Yes' }, { label: 'No' }],
    });
    const ask = await waitForAsk(server, (a) => a.project === p);
    await page.goto(`${server.origin}/asks/${ask.id}`);
    await page.getByRole('button', { name: 'No', exact: true }).click();
    await page.getByLabel(/In your own words/).fill('Not before the migration runs');
    await page.reload();
    await page.locator('[data-conn="live"]').waitFor();
    assert.equal(await page.getByRole('button', { name: 'No', exact: true }).getAttribute('aria-pressed'), 'true');
    assert.equal(await page.getByLabel(/In your own words/).inputValue(), 'Not before the migration runs');
    await page.getByLabel(/In your own words/).fill('Not before the migration runs, tomorrow.');
    // The list marks asks with a draft.
    await page.locator(`[data-ask-row="${ask.id}"] .chip-draft`).waitFor();
    await page.getByRole('button', { name: 'Send answer' }).click();
    assert.deepEqual((await call).reply, { outcome: 'answered', selected: ['No'], text: 'Not before the migration runs, tomorrow.' });
    // The agent is woken when the reply commits, which can be before the page has read the 200.
    await page.waitForFunction((id) => localStorage.getItem('loopback.draft.' + id) === null, ask.id, { timeout: 10_000 });
    await page.context().close();
  });
});

describe('reviews', () => {
  it('shows markdown, highlighted code, a real diff and an uploaded image; approving with a note reaches the agent', async () => {
    const page = await openInbox(browser, server);
    const p = project('review');
    const uploadId = await uploadPng(agent, png(320, 180));
    const call = agent.call('request_review', {
      project: p,
      title: 'Retry cold starts',
      summary: 'Retries idempotent requests **three** times.',
      content: [
        { type: 'markdown', text: 'Before and after:\n\n![inline](/api/v1/files/' + uploadId + ')' },
        { type: 'code', filename: 'src/retry.ts', code: 'export const retries = 3;\nfunction go() { return retries; }\n' },
        {
          type: 'diff',
          diff:
            'diff --git a/src/api.ts b/src/api.ts\n--- a/src/api.ts\n+++ b/src/api.ts\n@@ -10,3 +10,4 @@ export async function api() {\n' +
            '   const headers = {};\n-  const res = await fetch(path);\n+  // cold starts\n+  const res = await retry(() => fetch(path));\n   return res;\n',
        },
        { type: 'image', uploadId, caption: 'The new settings page' },
      ],
    });
    const ask = await waitForAsk(server, (a) => a.project === p);
    await page.locator(`[data-ask-row="${ask.id}"]`).click();
    await page.getByRole('heading', { name: 'Retry cold starts' }).waitFor();

    // Code: highlighted, with its file name.
    const code = page.locator('.code-block').first();
    assert.equal(await code.locator('.file-name').innerText(), 'src/retry.ts');
    // (highlight.js is its own chunk, loaded after the list: the code is plain until it is here)
    await code.locator('.hljs-keyword').first().waitFor();
    assert.ok((await code.locator('.hljs-keyword').count()) >= 2, 'code is highlighted');

    // Diff: its file, its hunk, line numbers and added/removed lines.
    const diff = page.locator('.diff-file');
    assert.equal(await diff.locator('.file-name').innerText(), 'src/api.ts');
    assert.match(await diff.locator('.hunk-row').innerText(), /^@@ -10,3 \+10,4 @@/);
    const rows = await diff.locator('tr.line').evaluateAll((trs) =>
      trs.map((tr) => [tr.className.replace('line ', ''), ...[...tr.querySelectorAll('.ln')].map((td) => td.dataset.ln)]),
    );
    assert.deepEqual(rows, [
      ['ctx', '10', '10'],
      ['del', '11', ''],
      ['add', '', '11'],
      ['add', '', '12'],
      ['ctx', '12', '13'],
    ]);
    assert.notEqual(
      await diff.locator('tr.line.add').first().evaluate((el) => getComputedStyle(el).backgroundColor),
      await diff.locator('tr.line.del').first().evaluate((el) => getComputedStyle(el).backgroundColor),
    );
    assert.equal(await diff.locator('.diff-stat').innerText(), '+2 −1');

    // Images: fetched with the token, shown from blob: URLs, actually decoded.
    const img = page.locator(`.image-block img[data-upload="${uploadId}"]`);
    await img.waitFor();
    await page.waitForFunction(() => [...document.querySelectorAll('.blocks img')].every((i) => i.complete && i.naturalWidth > 0));
    assert.match(await img.getAttribute('src'), /^blob:/);
    assert.equal(await img.evaluate((i) => i.naturalWidth), 320);
    assert.equal(await page.locator('.image-block figcaption').innerText(), 'The new settings page');
    assert.match(await page.locator('.block-markdown img').getAttribute('src'), /^blob:/);
    assert.ok(page.requests.includes(`${server.origin}/api/v1/files/${uploadId}`));

    await page.getByLabel('Note for the agent (optional)').fill('Ship it.');
    await page.getByRole('button', { name: 'Approve', exact: true }).last().click();
    assert.deepEqual(await call, { askId: ask.id, reply: { outcome: 'approved', note: 'Ship it.' } });
    await page.locator('.head-status .chip-closed', { hasText: 'Approved' }).waitFor();
    assert.deepEqual(await cspViolations(page), []);
    await page.context().close();
  });

  it('requires feedback to request changes, and a revision links to what it revises', async () => {
    const page = await openInbox(browser, server);
    const p = project('revise');
    const first = agent.call('request_review', {
      project: p,
      title: 'Rename the flag',
      content: [{ type: 'markdown', text: 'Rename `--wait` to `--max-wait`.' }],
    });
    const a1 = await waitForAsk(server, (a) => a.project === p);
    await page.goto(`${server.origin}/asks/${a1.id}`);
    await page.getByRole('radio', { name: 'Request changes' }).click();
    const submit = page.locator('.review-bar button[type=submit]');
    assert.equal(await submit.innerText(), 'Request changes');
    assert.ok(await submit.isDisabled());
    await page.getByText('Say what needs to change to request changes.').waitFor();
    await page.getByLabel('What needs to change (required)').fill('Keep --wait as an alias.');
    await submit.click();
    assert.deepEqual((await first).reply, { outcome: 'changes_requested', feedback: 'Keep --wait as an alias.' });

    const second = agent.call('request_review', {
      project: p,
      title: 'Rename the flag, keeping an alias',
      revises: a1.id,
      content: [{ type: 'markdown', text: 'Now with `--wait` kept as an alias.' }],
    });
    const a2 = await waitForAsk(server, (a) => a.project === p && a.id !== a1.id);
    await page.locator(`[data-ask-row="${a2.id}"]`).click();
    const link = page.locator('.revises-link');
    assert.equal(await link.innerText(), 'Rename the flag');
    await link.click();
    assert.equal(page.url(), `${server.origin}/asks/${a1.id}`);
    await page.locator('.readonly-note').waitFor();
    await page.locator('.entry-human.outcome-changes_requested', { hasText: 'Keep --wait as an alias.' }).waitFor();
    await page.locator('.revised-by a', { hasText: 'Rename the flag, keeping an alias' }).click();
    await page.getByRole('button', { name: 'Approve', exact: true }).last().click();
    assert.deepEqual((await second).reply, { outcome: 'approved' });
    await page.context().close();
  });

  it('asks a question back; the agent answers on the thread live; then approve', async () => {
    const page = await openInbox(browser, server);
    const p = project('followup');
    const first = agent.call('request_review', {
      project: p,
      title: 'Drop the cache',
      content: [{ type: 'code', language: 'go', code: 'cache = nil' }],
    });
    const ask = await waitForAsk(server, (a) => a.project === p);
    await page.goto(`${server.origin}/asks/${ask.id}`);
    await page.getByRole('radio', { name: 'Ask a question' }).click();
    await page.getByLabel('Your question for the agent (required)').fill('What does it cost at startup?');
    await page.getByRole('button', { name: 'Send question' }).click();
    assert.deepEqual((await first).reply, { outcome: 'follow_up', question: 'What does it cost at startup?' });
    await page.locator('.head-status .chip-agent').waitFor();
    await page.getByText("You asked a question. The agent's answer will appear").waitFor();

    const second = agent.call('answer_follow_up', {
      askId: ask.id,
      answer: 'About **40 ms** on a cold start.',
      content: [{ type: 'code', language: 'text', code: 'cold: 41ms\nwarm: 2ms' }],
    });
    await page.locator('.entry-agent strong', { hasText: '40 ms' }).waitFor(); // live
    const entries = await page.locator('.entries > li').evaluateAll((lis) => lis.map((li) => li.className));
    assert.deepEqual(entries, ['entry entry-human outcome-follow_up', 'entry entry-agent']);
    await page.getByRole('button', { name: 'Approve', exact: true }).last().click();
    assert.deepEqual((await second).reply, { outcome: 'approved' });
    await page.context().close();
  });
});

describe('briefings', () => {
  it('goes two rounds with sub-points; submit is disabled, with the reason, until the reply is one the server takes', async () => {
    const page = await openInbox(browser, server);
    const p = project('briefing');
    const first = agent.call('send_briefing', {
      project: p,
      title: 'Audit findings',
      summary: 'Three findings.',
      sections: [
        { title: 'High', points: [{ title: 'Tokens in logs', detail: 'The token is printed on **start**.' }, { title: 'No rate limit' }] },
        { title: 'Low', points: [{ title: 'No HSTS', content: [{ type: 'code', language: 'go', code: 'w.Header().Set("Strict-Transport-Security", "max-age=63072000")' }] }] },
      ],
    });
    const ask = await waitForAsk(server, (a) => a.project === p);
    await page.goto(`${server.origin}/asks/${ask.id}`);
    const send = page.locator('.submit-bar button.primary');
    const reason = page.locator('.submit-bar .reason');
    assert.ok(await send.isDisabled());
    assert.equal(await reason.innerText(), 'Write on a point or resolve one first.');

    // Folded to titles; opening shows the detail and content.
    assert.equal(await page.locator('[data-point="1"] .point-body').count(), 0);
    await page.locator('[data-point="3"] .point-toggle').click();
    await page.locator('[data-point="3"] .point-body .code-block .hljs-string').first().waitFor();

    // Resolving one point and writing on none: the server would refuse it (422), so the page won't send it.
    await page.getByRole('button', { name: 'Resolve point 2' }).click();
    assert.ok(await send.isDisabled());
    assert.match(await reason.innerText(), /This would leave 2 points open \(1, 3\) with nothing for the agent to answer/);
    const refused = await server.api('POST', `/asks/${ask.id}/reply`, { outcome: 'responded', points: [{ point: '2', resolved: true }] });
    assert.equal(refused.status, 422);

    await page.locator('[data-point="1"] .point-toggle').click();
    await page.getByLabel('Reply on point 1').fill('Which logs?');
    assert.ok(await send.isEnabled());
    assert.match(await page.locator('.submit-summary').innerText(), /the agent answers 1/);
    await send.click();
    assert.deepEqual(await first, {
      askId: ask.id,
      reply: { outcome: 'responded', points: [{ point: '1', text: 'Which logs?' }, { point: '2', resolved: true }] },
    });
    await page.getByText('the agent is answering point 1').waitFor();
    await page.locator('[data-point="2"] .point-state', { hasText: 'Resolved' }).waitFor();

    // The agent answers point 1 and splits it; it shows up live, nested, with ids.
    const second = agent.call('answer_briefing', {
      askId: ask.id,
      answers: [{ point: '1', answer: 'Two places **print** it.', points: [{ title: 'serve banner' }, { title: 'debug log', detail: 'At level debug.' }] }],
    });
    await page.locator('[data-point="1"] .turn-agent strong', { hasText: 'print' }).waitFor();
    const nested = await page.locator('[data-point="1"] > .sub-points > [data-point]').evaluateAll((lis) => lis.map((li) => li.dataset.point));
    assert.deepEqual(nested, ['1.1', '1.2']);
    assert.equal(await page.locator('[data-point="1.2"] .point-id').innerText(), '1.2');
    await page.locator('[data-point="1"] .turn-human', { hasText: 'Which logs?' }).waitFor();

    // Round two: resolving 1.1, 1.2 and 3 leaves 1 open with nothing to answer.
    for (const id of ['1.1', '1.2', '3']) await page.getByRole('button', { name: `Resolve point ${id}`, exact: true }).click();
    assert.ok(await send.isDisabled());
    assert.match(await reason.innerText(), /leave 1 point open \(1\)/);
    // Resolve all resolves point 1 too (and 1.1 and 1.2 with it): the briefing closes.
    await page.getByRole('button', { name: 'Resolve all' }).click();
    assert.equal(await send.innerText(), 'Send and close');
    await send.click();
    assert.deepEqual(await second, {
      askId: ask.id,
      reply: { outcome: 'responded', points: [{ point: '1', resolved: true }, { point: '3', resolved: true }] },
    });
    await page.locator('.head-status .chip-closed', { hasText: 'All points resolved' }).waitFor();
    assert.equal(await page.locator('.submit-bar').count(), 0);
    await page.context().close();
  });

  it('can be dismissed while it is the agent’s move', async () => {
    const page = await openInbox(browser, server);
    const p = project('dismiss');
    const first = agent.call('send_briefing', { project: p, title: 'Plan', sections: [{ points: [{ title: 'Step one' }] }] });
    const ask = await waitForAsk(server, (a) => a.project === p);
    await page.goto(`${server.origin}/asks/${ask.id}`);
    await page.locator('[data-point="1"] .point-toggle').click();
    await page.getByLabel('Reply on point 1').fill('Why first?');
    await page.locator('.submit-bar button.primary').click();
    await first;
    await page.locator('.waiting-bar').waitFor();
    await page.getByRole('button', { name: 'Dismiss' }).click();
    await page.getByRole('button', { name: 'Yes, dismiss' }).click();
    await page.locator('.head-status .chip-closed', { hasText: 'Dismissed' }).waitFor();
    assert.deepEqual((await agent.call('await_reply', { askId: ask.id })).reply, { outcome: 'dismissed' });
    await page.context().close();
  });
});

// History (55 closed asks, paged back) has a file of its own: history.test.mjs.

describe('safety', () => {
  const XSS = [
    '<script>window.__pwned = "script"</script>',
    '<img src=x onerror="window.__pwned = \'onerror\'">',
    '[click me](javascript:window.__pwned=\'js-link\')',
    '<a href="data:text/html,<script>alert(1)</script>">data link</a>',
    '![remote](https://example.com/pixel.png)',
    '<img srcset="https://example.com/a.png 2x">',
    '<iframe src="https://example.com/frame"></iframe>',
    '<svg onload="window.__pwned=\'svg\'"><circle r=1 /></svg>',
    '<style>body{background:url(https://example.com/bg.png)}</style>',
    '<p style="background:url(https://example.com/p.png)">styled</p>',
    '<form action="https://example.com/post"><button>go</button></form>',
    '<video poster="https://example.com/poster.png"></video>',
    '<link rel="stylesheet" href="https://example.com/x.css">',
    '<meta http-equiv="refresh" content="0;url=https://example.com/">',
    '<object data="https://example.com/x"></object>',
    '<input autofocus onfocus="window.__pwned=\'onfocus\'">',
    '<details open ontoggle="window.__pwned=\'ontoggle\'"><summary>s</summary></details>',
    '<a href="//example.com/x">protocol-relative</a>',
  ].join('\n\n');
  const short = '<img src=x onerror=window.__pwned=1>';

  it('renders every agent-written field without running anything or fetching from elsewhere', async () => {
    const page = await openInbox(browser, server);
    const p = project('xss');
    const uploadId = await uploadPng(agent);
    const q = background(agent.call('ask_question', {
      project: p,
      question: XSS,
      context: XSS,
      options: [{ label: short, description: XSS }, { label: '<script>x</script>' }],
    }));
    const r = background(agent.call('request_review', {
      project: p,
      title: short,
      summary: XSS,
      content: [
        { type: 'markdown', text: XSS },
        { type: 'code', filename: short, language: '<script>', code: XSS },
        { type: 'diff', filename: short, diff: '@@ -1 +1 @@\n-' + short + '\n+' + short + '\n' },
        { type: 'image', uploadId, caption: short },
      ],
    }));
    const b = background(agent.call('send_briefing', {
      project: p,
      title: short,
      summary: XSS,
      sections: [{ title: short, points: [{ title: short, detail: XSS, content: [{ type: 'markdown', text: XSS }] }] }],
    }));
    let asks = [];
    while (asks.length < 3) asks = (await server.api('GET', '/snapshot')).body.open.filter((a) => a.project === p);
    // An agent's answers too: ask the review's agent back, and it answers with the corpus.
    const review = asks.find((a) => a.kind === 'review');
    await server.api('POST', `/asks/${review.id}/reply`, { outcome: 'follow_up', question: 'Why?' });
    await r;
    const answered = background(agent.call('answer_follow_up', { askId: review.id, answer: XSS, content: [{ type: 'markdown', text: XSS }] }));

    for (const a of asks) {
      await page.locator(`[data-ask-row="${a.id}"]`).click();
      await page.locator(`.ask-view.kind-${a.kind}`).waitFor();
      if (a.kind === 'briefing') await page.locator('[data-point="1"] .point-toggle').click();
      if (a.kind === 'review') await page.locator('.entry-agent').waitFor();
      await page.waitForTimeout(300);
      const found = await page.evaluate(() => {
        const bad = [];
        for (const el of document.querySelectorAll('#app *')) {
          for (const attr of el.attributes) {
            if (/^on/i.test(attr.name)) bad.push(`${el.tagName} ${attr.name}`);
            // The list's own padding (it is windowed: AskList.tsx) is set by the page through the
            // CSSOM; nothing an agent wrote may carry a style.
            if (attr.name === 'style' && !el.matches('ul.ask-list')) bad.push(`${el.tagName} style`);
            if (/^(href|src|srcset|action|poster|data)$/.test(attr.name) && /^(javascript|data|vbscript):|^\/\/|example\.com/i.test(attr.value.trim())) {
              bad.push(`${el.tagName} ${attr.name}=${attr.value}`);
            }
          }
          // What agents wrote is rendered inside .md (markdown) and blocks; the inbox's own forms are not.
          if (/^(SCRIPT|IFRAME|OBJECT|EMBED|FORM|STYLE|LINK|META|VIDEO|SVG|BASE|INPUT|BUTTON|TEXTAREA)$/i.test(el.tagName) && el.closest('.md, .block')) {
            const taskBox = el.tagName === 'INPUT' && el.type === 'checkbox' && el.disabled; // GFM task lists, inert
            // The inbox's own controls on a block: its head (copy, fold a file), a diff's tools and file list, Show all,
            // and a diff line's number, which adds a line comment (revision 7): an empty button of the inbox's.
            const lineButton = el.matches('.diff-table td.ln-commentable > button.ln-btn[data-lc-btn]') && el.childNodes.length === 0;
            const own = el.closest('.block-head, .diff-tools, .diff-files') || el.classList.contains('fold-btn') || lineButton;
            if (!taskBox && !el.closest('svg.icon') && !own) bad.push(el.tagName);
          }
        }
        return { bad, pwned: window.__pwned ?? null };
      });
      assert.deepEqual(found, { bad: [], pwned: null }, `${a.kind}: ${JSON.stringify(found)}`);
    }
    // The words survived as text where they are text (titles, labels).
    await page.locator(`[data-ask-row="${review.id}"] .row-title`, { hasText: '<img src=x onerror=window.__pwned=1>' }).waitFor();
    // Remote images became notes.
    assert.ok((await page.locator('.blocked-image').count()) > 0);

    assert.deepEqual(page.foreign, [], 'no request left the origin');
    assert.deepEqual(page.errors, []);
    // Nothing even reached the CSP: the sanitiser had already removed it.
    assert.deepEqual(await cspViolations(page), []);
    await page.context().close();
    void q;
    void b;
    void answered;
  });
});

/**
 * Routes the page's event socket through the test: every frame passes, but a reply sent on it
 * closes the page's side instead (the page reconnects), as a network that drops under the send.
 */
async function closeOnReply(page) {
  await page.routeWebSocket(/\/api\/v1\/events/, (ws) => {
    const srv = ws.connectToServer();
    ws.onMessage((m) => (String(m).includes('"ask.reply"') ? ws.close({ code: 4000, reason: 'dropped' }) : srv.send(m)));
  });
}

/** The frames the page sends on its event sockets, as text. */
function framesSent(page) {
  const sent = [];
  page.on('websocket', (ws) => ws.on('framesent', (f) => sent.push(String(f.payload))));
  return sent;
}

describe('replies on the event socket (contract revision 8)', () => {
  it('sends the answer on the live socket, with no request of its own', async () => {
    let sent;
    const page = await openInbox(browser, server, { beforeLoad: (pg) => (sent = framesSent(pg)) });
    const p = project('socket');
    const call = agent.call('ask_question', { project: p, question: 'Over the socket?', options: [{ label: 'Yes' }, { label: 'No' }] });
    const ask = await waitForAsk(server, (a) => a.project === p);
    await page.locator(`[data-ask-row="${ask.id}"]`).click();
    await page.getByRole('button', { name: 'Yes', exact: true }).click();
    const before = page.requests.length;
    await page.getByRole('button', { name: 'Send answer' }).click();
    assert.deepEqual(await call, { askId: ask.id, reply: { outcome: 'answered', selected: ['Yes'] } });
    await page.locator('.head-status .chip-closed', { hasText: 'Answered' }).waitFor();
    await page.getByText('Answer sent.').waitFor();
    const replies = sent.filter((f) => f.includes('"ask.reply"')).map((f) => JSON.parse(f));
    assert.equal(replies.length, 1);
    assert.equal(replies[0].askId, ask.id);
    assert.deepEqual(
      page.requests.slice(before).filter((u) => u.includes('/reply')),
      [],
    );
    assert.deepEqual(page.errors, []);
    await page.context().close();
  });

  it('shows a refusal on the socket as over HTTP, and the reply that landed before the socket dropped once', async () => {
    // The socket passes the reply to the server and drops as its answer comes back: the page does
    // not know the reply was made, reads the ask, and finds it was: no second reply over HTTP.
    let drop = true;
    const hidden = new Set(); // asks whose changes the page is not told of
    const page = await openInbox(browser, server, {
      beforeLoad: (pg) =>
        pg.routeWebSocket(/\/api\/v1\/events/, (ws) => {
          const srv = ws.connectToServer();
          srv.onMessage((m) => {
            const f = JSON.parse(String(m));
            if (f.type === 'ask.replied' && drop) {
              drop = false;
              ws.close({ code: 4000, reason: 'dropped' });
            } else if (!(f.type === 'ask.updated' && hidden.has(f.ask.id))) {
              ws.send(m);
            }
          });
        }),
    });
    const p = project('dropped');
    const call = agent.call('ask_question', { project: p, question: 'Dropped?', options: [{ label: 'Yes' }, { label: 'No' }] });
    const ask = await waitForAsk(server, (a) => a.project === p);
    await page.locator(`[data-ask-row="${ask.id}"]`).click();
    await page.getByRole('button', { name: 'No', exact: true }).click();
    const before = page.requests.length;
    await page.getByRole('button', { name: 'Send answer' }).click();
    assert.deepEqual(await call, { askId: ask.id, reply: { outcome: 'answered', selected: ['No'] } });
    await page.getByText('Answer sent.').waitFor();
    const after = page.requests.slice(before);
    assert.ok(after.includes(`${server.origin}/api/v1/asks/${ask.id}`), `the ask read again: ${after}`);
    assert.deepEqual(
      after.filter((u) => u.includes('/reply')),
      [],
    );
    await page.locator('[data-conn="live"]').waitFor(); // reconnected

    // A refusal on the socket: someone answered first (over HTTP; the page was not told), this
    // page sends late and is told as HTTP would tell it, and the ask is read again.
    const q = project('late');
    background(agent.call('ask_question', { project: q, question: 'Late?', options: [{ label: 'A' }, { label: 'B' }] }));
    const late = await waitForAsk(server, (a) => a.project === q);
    hidden.add(late.id);
    await page.locator(`[data-ask-row="${late.id}"]`).click();
    await page.getByRole('button', { name: 'A', exact: true }).click();
    await server.api('POST', `/asks/${late.id}/reply`, { outcome: 'answered', selected: ['B'] });
    const sentAt = page.requests.length;
    await page.getByRole('button', { name: 'Send answer' }).click();
    await page.getByText('This ask is already closed; it was answered elsewhere.').waitFor();
    await page.locator('.head-status .chip-closed', { hasText: 'Answered' }).waitFor();
    assert.deepEqual(
      page.requests.slice(sentAt).filter((u) => u.includes('/reply')),
      [],
    );
    await page.context().close();
  });
});

describe('live', () => {
  it('shows the connection state, reconnects after a restart, and starts again from a fresh snapshot', async () => {
    const own = await new Server().start();
    try {
      const page = await openInbox(browser, own);
      await own.stop();
      await page.locator('.conn-down, .conn-connecting').first().waitFor();
      assert.notEqual(await page.locator('.conn').getAttribute('data-conn'), 'live');
      await own.start();
      const a = await new Agent(own).init();
      const call = background(a.call('ask_question', { project: 'after-restart', question: 'Still there?' }));
      await page.locator('[data-conn="live"]').waitFor({ timeout: 15_000 });
      const ask = await waitForAsk(own, (x) => x.project === 'after-restart');
      await page.locator(`[data-ask-row="${ask.id}"]`).waitFor();
      await own.api('POST', `/asks/${ask.id}/reply`, { outcome: 'dismissed' });
      await call;
      // Closed elsewhere: the page follows.
      await page.locator(`[data-ask-row="${ask.id}"]`).waitFor({ state: 'detached' });
      await page.context().close();
    } finally {
      await own.dispose();
    }
  });

  it('offers a reload when the server is newer than the page, or refuses the page with 409 reload', async () => {
    // Opened on another path first, so the link below is a page load (a link's token counts only
    // then: the same path with a new fragment would be a hashchange, which never signs in). The
    // socket is closed under the reply sent on it, so the reply goes again over HTTP, where the
    // server's refusal of the page is.
    const page = await openInbox(browser, server, { signIn: false, path: '/history', beforeLoad: closeOnReply });
    await page.route('**/api/v1/whoami', async (route) => {
      const res = await route.fetch();
      const newer = String(Number(res.headers()['loopback-revision']) + 1);
      await route.fulfill({ response: res, headers: { ...res.headers(), 'loopback-revision': newer } });
    });
    await page.goto(server.origin + '/#token=' + server.token);
    await page.locator('[data-banner="server-newer"]').waitFor();
    assert.match(await page.locator('.banner').innerText(), /newer version of Loopback/);

    const p = project('reload');
    background(agent.call('ask_question', { project: p, question: 'Reload?', options: [{ label: 'A' }, { label: 'B' }] }));
    const ask = await waitForAsk(server, (a) => a.project === p);
    await page.route('**/api/v1/asks/*/reply', (route) =>
      route.fulfill({ status: 409, contentType: 'application/json', body: JSON.stringify({ code: 'reload', message: 'this client is newer than the server' }) }),
    );
    await page.locator(`[data-ask-row="${ask.id}"]`).click();
    await page.getByRole('button', { name: 'A', exact: true }).click();
    await page.getByRole('button', { name: 'Send answer' }).click();
    await page.locator('[data-banner="reload"]').waitFor();
    await page.unrouteAll();
    await page.getByRole('button', { name: 'Reload' }).click();
    await page.locator('[data-conn="live"]').waitFor();
    assert.equal(await page.locator('.banner').count(), 0);
    // The draft survived the reload.
    assert.equal(await page.getByRole('button', { name: 'A', exact: true }).getAttribute('aria-pressed'), 'true');
    await page.context().close();
  });

  it('counts and notifies asks that arrive while the tab is hidden', async () => {
    const context = await browser.newContext({ viewport: { width: 1280, height: 800 } });
    await context.grantPermissions(['notifications'], { origin: server.origin });
    const page = await context.newPage();
    await page.addInitScript(() => {
      // Headless Chromium keeps every page visible (another tab in front, a minimised window: it
      // stays 'visible'), so the test hides the page by hand: visibilityState answers what
      // window.__hidden says, and visibilitychange fires as it would. Notifications are the
      // browser's own, observed as the page makes them. The page notifies by itself only where Web
      // Push does not work (push.test.mjs tests the service worker's notifications), so this
      // browser has no Push API here.
      delete window.PushManager;
      window.__hidden = false;
      Object.defineProperty(Document.prototype, 'visibilityState', { get: () => (window.__hidden ? 'hidden' : 'visible') });
      Object.defineProperty(Document.prototype, 'hidden', { get: () => window.__hidden });
      window.__setHidden = (h) => {
        window.__hidden = h;
        document.dispatchEvent(new Event('visibilitychange'));
      };
      const Real = window.Notification;
      window.__notes = [];
      window.Notification = class extends Real {
        constructor(title, opts) {
          super(title, opts);
          window.__notes.push(title);
        }
      };
    });
    await page.goto(server.origin + '/#token=' + server.token);
    await page.locator('[data-conn="live"]').waitFor();
    await page.evaluate(() => window.__setHidden(true));
    const p = project('hidden');
    background(agent.call('ask_question', { project: p, question: 'Are you there?' }));
    await page.waitForFunction(() => /^\(1\) Loopback/.test(document.title));
    assert.deepEqual(await page.evaluate(() => window.__notes), [`${p}: new question`]);
    await page.evaluate(() => window.__setHidden(false));
    await page.waitForFunction(() => /^Loopback \(\d+ waiting on you\)$/.test(document.title));
    await context.close();
  });
});

describe('keyboard', () => {
  it('moves through the list with j/k, opens with Enter, goes back with Esc, and shows help with ?', async () => {
    const page = await openInbox(browser, server);
    const p = project('keys');
    for (const n of [1, 2]) background(agent.call('ask_question', { project: p, question: `Key ${n}?` }));
    const rows = page.locator('.ask-list [data-ask-row]');
    // Both asks on the page before the first key, so the list no longer moves under it (they are the
    // newest, so they are its first two rows).
    const ids = [];
    for (const n of [1, 2]) ids.push((await waitForAsk(server, (a) => a.project === p && a.prompt.question === `Key ${n}?`)).id);
    await page.waitForFunction((ids) => ids.every((id) => document.querySelector(`.ask-list [data-ask-row="${id}"]`)), ids);
    await page.keyboard.press('j');
    const first = await rows.nth(0).getAttribute('data-ask-row');
    assert.ok(ids.includes(first));
    assert.equal(await page.evaluate(() => document.activeElement.dataset.askRow), first);
    await page.waitForURL(`**/asks/${first}`); // on a wide screen the ask opens beside the list
    await page.keyboard.press('j');
    const second = await rows.nth(1).getAttribute('data-ask-row');
    await page.waitForURL(`**/asks/${second}`);
    await page.keyboard.press('k');
    await page.waitForURL(`**/asks/${first}`);
    await page.keyboard.press('Enter');
    assert.equal(await page.evaluate(() => document.activeElement.classList.contains('ask-title')), true);
    await page.keyboard.press('Escape');
    await page.waitForURL(server.origin + '/');
    await page.keyboard.press('?');
    await page.getByRole('dialog', { name: 'Keyboard shortcuts' }).waitFor();
    await page.keyboard.press('Escape');
    await page.getByRole('dialog').waitFor({ state: 'hidden' });
    // ? right after Esc closed the dialog, before its close event has been handled: never lost.
    for (let i = 0; i < 5; i++) {
      await page.keyboard.press('?');
      await page.getByRole('dialog', { name: 'Keyboard shortcuts' }).waitFor();
      await page.keyboard.press('Escape');
      await page.getByRole('dialog').waitFor({ state: 'hidden' });
    }
    await page.keyboard.press('?');
    await page.getByRole('dialog').getByRole('button', { name: 'Close' }).click();
    await page.getByRole('dialog').waitFor({ state: 'hidden' });
    // Back with the dialog open: the page behind it changes, so the dialog closes.
    await page.keyboard.press('?');
    await page.getByRole('dialog', { name: 'Keyboard shortcuts' }).waitFor();
    await page.goBack();
    await page.waitForURL(`**/asks/${first}`);
    await page.getByRole('dialog').waitFor({ state: 'hidden' });
    assert.deepEqual(await cspViolations(page), []);
    await page.context().close();
  });
});

describe('phone', () => {
  for (const width of [390, 375]) {
    it(`fits a ${width}-pixel-wide phone without sideways scrolling, with big tap targets`, async () => {
      const page = await openInbox(browser, server, { viewport: { width, height: 844 }, isMobile: true, hasTouch: true });
      assert.equal(await scrollsSideways(page), false, 'list');
      // Who is signed in, and Sign out, fit on the screen.
      await page.locator('.account-btn').tap();
      const menu = await page.locator('.account-menu').boundingBox();
      assert.ok(menu.x >= 0 && menu.x + menu.width <= width, `account menu inside the screen: ${JSON.stringify(menu)}`);
      assert.ok((await page.getByRole('button', { name: 'Sign out' }).boundingBox()).height >= 40);
      assert.equal(await scrollsSideways(page), false, 'account menu');
      await page.locator('.account-btn').tap();
      await page.locator('.account-menu').waitFor({ state: 'detached' });
      const p = project('phone');
      background(agent.call('request_review', {
        project: p,
        title: 'A long line of code that must scroll inside its block, never the page',
        content: [
          { type: 'code', filename: 'a/very/long/path/to/some/file/that/goes/on/and/on/for/a/while.ts', code: 'const x = "' + 'y'.repeat(300) + '";' },
          { type: 'diff', diff: '@@ -1 +1 @@\n-' + 'a'.repeat(300) + '\n+' + 'b'.repeat(300) + '\n' },
          { type: 'markdown', text: '| a | b | c | d | e | f |\n|---|---|---|---|---|---|\n| ' + 'long cell '.repeat(8) + ' | 2 | 3 | 4 | 5 | 6 |\n\n' + 'x'.repeat(400) },
        ],
      }));
      const ask = await waitForAsk(server, (a) => a.project === p);
      await page.locator(`[data-ask-row="${ask.id}"]`).tap();
      await page.locator('.back-btn').waitFor();
      assert.equal(await page.locator('.pane-list').isVisible(), false, 'one pane at a time');
      assert.equal(await scrollsSideways(page), false, 'review');
      const small = await page.locator('.ask-view button:visible').evaluateAll((bs) =>
        bs.filter((b) => !b.classList.contains('small') && b.getBoundingClientRect().height < 40).map((b) => b.textContent),
      );
      assert.deepEqual(small, [], 'tap targets at least 40 px tall');
      await page.locator('.back-btn').tap();
      await page.locator(`[data-ask-row="${ask.id}"]`).waitFor();
      await page.context().close();
    });
  }
});
