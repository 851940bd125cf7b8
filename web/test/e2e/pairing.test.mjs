// Signing in without a token (issue 28 item 4): a laptop (1440×900) pairs a phone (390×844, touch)
// by the QR code's link (decoded from the rendered SVG with jsQR) and by the typed short code; an
// invited teammate joins in a fresh context and answers an ask; used and expired codes are refused
// in words. Against the real binary in Debian's headless Chromium.
//
//   cd web && npm run build && cd .. && make build && cd web && node --test test/e2e/pairing.test.mjs

import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { launch } from './lib/browser.mjs';
import { background, cspViolations, openInbox, setTriage, waitForAsk } from './lib/helpers.mjs';
import { Agent } from './lib/mcp.mjs';
import { LAPTOP, PHONE } from './lib/seed.mjs';
import { Server } from './lib/server.mjs';

const OUT = process.env.LOOPBACK_SCREENSHOTS ?? join(dirname(fileURLToPath(import.meta.url)), '../../../docs/screenshots');
const require = createRequire(import.meta.url);
const JSQR = readFileSync(require.resolve('jsqr'), 'utf8');
const AXE = readFileSync(require.resolve('axe-core/axe.min.js'), 'utf8');

/** axe-core's WCAG 2.1 A and AA rules on the page as it stands (as a11y.test.mjs runs them). */
async function axe(page) {
  await page.evaluate(AXE);
  const result = await page.evaluate(() =>
    // eslint-disable-next-line no-undef
    axe.run(document, { runOnly: { type: 'tag', values: ['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa'] }, resultTypes: ['violations'] }),
  );
  return result.violations.map((v) => `${v.id} (${v.impact}): ${v.help} — ${v.nodes.slice(0, 3).map((n) => n.target.join(' ')).join(' | ')}`);
}

let server;
let browser;

before(async () => {
  server = await new Server().start();
  browser = await launch();
});

after(async () => {
  await browser?.close();
  await server?.dispose();
});

/**
 * Decodes the dialog's QR code as a phone's camera would: from the pixels Chromium rendered (a
 * screenshot of the SVG), read by jsQR in a blank page of its own (no CSP there to refuse the
 * image), and says what its data-qr attribute holds too.
 */
async function decodeQR(page) {
  const svg = page.locator('.pair-dialog svg.qr');
  await svg.waitFor();
  const shot = await svg.screenshot({ animations: 'disabled' });
  const attr = await svg.getAttribute('data-qr');
  const reader = await (await browser.newContext()).newPage();
  try {
    const decoded = await reader.evaluate(
      async ({ jsqr, png }) => {
        const module = { exports: {} };
        new Function('module', 'exports', jsqr)(module, module.exports);
        const decode = module.exports.default ?? module.exports;
        const img = new Image();
        img.src = 'data:image/png;base64,' + png;
        await img.decode();
        const canvas = document.createElement('canvas');
        canvas.width = img.naturalWidth;
        canvas.height = img.naturalHeight;
        const ctx = canvas.getContext('2d');
        ctx.drawImage(img, 0, 0);
        const data = ctx.getImageData(0, 0, canvas.width, canvas.height);
        return decode(data.data, canvas.width, canvas.height)?.data ?? null;
      },
      { jsqr: JSQR, png: shot.toString('base64') },
    );
    return { decoded, attr };
  } finally {
    await reader.context().close();
  }
}

async function openPairDialog(laptop) {
  await laptop.getByRole('button', { name: /^Account/ }).click();
  await laptop.getByRole('button', { name: 'Pair a phone' }).click();
  const code = laptop.locator('.pair-dialog .pair-code');
  await code.waitFor();
  return (await code.getAttribute('data-code')).trim();
}

async function phoneContext() {
  const context = await browser.newContext({ ...PHONE, userAgent: 'Mozilla/5.0 (iPhone; CPU iPhone OS 18_0 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/18.0 Mobile/15E148 Safari/604.1' });
  const page = await context.newPage();
  page.errors = [];
  page.on('pageerror', (e) => page.errors.push(e.message));
  return page;
}

describe('pairing a phone', () => {
  it('by scanning the QR code: the phone opens its link and gets a sign-in of its own; the laptop sees it', async () => {
    const laptop = await openInbox(browser, server, { viewport: LAPTOP });
    const code = await openPairDialog(laptop);
    assert.match(code, /^[A-HJKMNP-Z2-9]{4}-[A-HJKMNP-Z2-9]{4}$/);
    const { decoded, attr } = await decodeQR(laptop);
    assert.equal(decoded, `${server.origin}/pair#code=${code}`, 'the QR code decodes to the pairing link');
    assert.equal(attr, decoded);
    await laptop.locator('.pair-dialog').screenshot({ path: join(OUT, 'pairing-laptop-qr.png'), animations: 'disabled' });

    const phone = await phoneContext();
    const requests = [];
    phone.on('request', (r) => requests.push(r.url()));
    await phone.goto(decoded); // what the camera opens: Safari, not the home-screen app
    const form = phone.locator('.pair-form');
    await form.waitFor();
    assert.ok(!phone.url().includes('code='), `the code leaves the address bar: ${phone.url()}`);
    assert.equal(await phone.locator('#pair-code').inputValue(), code);
    await phone.screenshot({ path: join(OUT, 'pairing-phone-link.png'), animations: 'disabled' });
    await phone.getByRole('button', { name: 'Pair this device' }).click();
    await phone.locator('[data-conn="live"]').waitFor({ timeout: 10_000 });
    const token = await phone.evaluate(() => localStorage.getItem('loopback.token'));
    assert.ok(token && token.startsWith('lb_') && token !== server.token, 'the phone holds a NEW credential of its own');
    assert.ok(requests.every((u) => !u.includes(code.replace('-', '')) && !u.includes(encodeURIComponent(code)) && !u.includes(token)), 'neither code nor token in any URL');

    // The laptop's dialog says so, live.
    const paired = laptop.locator('[data-paired]');
    await paired.waitFor({ timeout: 10_000 });
    assert.match(await paired.innerText(), /Paired: iPhone, Safari/);
    await laptop.locator('.pair-dialog').screenshot({ path: join(OUT, 'pairing-laptop-paired.png'), animations: 'disabled' });

    // The phone's credential is its own: listed, and revoking it signs the phone out, not the laptop.
    const { body: whoami } = await server.api('GET', '/whoami', undefined, { as: token });
    assert.equal(whoami.actor.id, (await server.api('GET', '/whoami')).body.actor.id);
    assert.deepEqual(phone.errors, []);
    assert.deepEqual(laptop.errors, []);
    assert.deepEqual(await cspViolations(laptop), []);
    await phone.context().close();
    await laptop.context().close();
  });

  it('with --public-url: the QR code and an invite link go to the public URL, not the address the laptop opened', async (t) => {
    // The laptop opens http://127.0.0.1:PORT; the deployment is reached at http://localhost:PORT
    // (a name a phone could not resolve otherwise stands in for a tunnel's or a LAN name: the
    // event socket takes both loopback names, so the laptop stays live).
    const pub = new Server();
    await pub.start();
    t.after(() => pub.dispose());
    const port = new URL(pub.origin).port;
    await pub.stop();
    pub.args = [...pub.args, '--public-url', `http://localhost:${port}/`];
    await pub.restart();
    assert.equal(pub.origin, `http://localhost:${port}`);
    const opened = `http://127.0.0.1:${port}`;
    for (const viewport of [LAPTOP, { width: 390, height: 844 }]) {
      const laptop = await openInbox(browser, { origin: opened, token: pub.token }, { viewport });
      assert.equal(new URL(laptop.url()).origin, opened);
      const code = await openPairDialog(laptop);
      const { decoded, attr } = await decodeQR(laptop);
      assert.equal(decoded, `http://localhost:${port}/pair#code=${code}`, 'the QR code holds the public URL');
      assert.equal(attr, decoded);
      await laptop.keyboard.press('Escape');
      if (viewport === LAPTOP) {
        await laptop.goto(opened + '/settings');
        await laptop.getByLabel('Their name').fill('Ada Lovelace');
        await laptop.getByRole('button', { name: 'Make invite link' }).click();
        assert.match(await laptop.getByLabel('Invite link for Ada Lovelace').inputValue(), new RegExp(`^http://localhost:${port}/join#invite=lb_iv_`));
      }
      // The phone opens the public link and pairs.
      const phone = await phoneContext();
      await phone.goto(decoded);
      await phone.getByRole('button', { name: 'Pair this device' }).click();
      await phone.locator('[data-conn="live"]').waitFor({ timeout: 10_000 });
      assert.equal(new URL(phone.url()).origin, `http://localhost:${port}`);
      assert.deepEqual(phone.errors, []);
      assert.deepEqual(laptop.errors, []);
      await phone.context().close();
      await laptop.context().close();
    }
  });

  it("by the typed short code, as the iPhone home-screen app does (its signed-out page offers it)", async () => {
    const laptop = await openInbox(browser, server, { viewport: LAPTOP });
    const code = await openPairDialog(laptop);
    const phone = await phoneContext();
    await phone.goto(server.origin + '/');
    await phone.getByRole('button', { name: 'Enter a pairing code' }).click();
    await phone.getByLabel('Pairing code').fill(code.toLowerCase().replace('-', ' '));
    await phone.screenshot({ path: join(OUT, 'pairing-phone-typed.png'), animations: 'disabled' });
    await phone.getByRole('button', { name: 'Pair this device' }).click();
    await phone.locator('[data-conn="live"]').waitFor({ timeout: 10_000 });
    await laptop.locator('[data-paired]').waitFor({ timeout: 10_000 });

    // The same code again, on another phone: refused, in words.
    const again = await phoneContext();
    await again.goto(server.origin + '/');
    await again.getByRole('button', { name: 'Enter a pairing code' }).click();
    await again.getByLabel('Pairing code').fill(code);
    await again.getByRole('button', { name: 'Pair this device' }).click();
    const refusal = again.locator('.pair-form [role="alert"]');
    await refusal.waitFor();
    assert.match(await refusal.innerText(), /used already \(each works once\)/);
    await again.screenshot({ path: join(OUT, 'pairing-phone-used.png'), animations: 'disabled' });
    assert.equal(await again.evaluate(() => localStorage.getItem('loopback.token')), null);
    for (const p of [phone, again, laptop]) await p.context().close();
  });

  it('refuses a code that matches nothing, and an expired one, in words', async () => {
    const phone = await phoneContext();
    await phone.goto(server.origin + '/pair#code=ABCD-EFGH');
    await phone.getByRole('button', { name: 'Pair this device' }).click();
    const refusal = phone.locator('.pair-form [role="alert"]');
    await refusal.waitFor();
    assert.match(await refusal.innerText(), /no pairing code matches/);
    await phone.getByLabel('Pairing code').fill('0000-0000');
    await phone.getByRole('button', { name: 'Pair this device' }).click();
    await phone.locator('.pair-form [role="alert"]', { hasText: 'never holds 0, O, 1, I or L' }).waitFor();
    await phone.context().close();
  });
});

describe('inviting a teammate', () => {
  it('the owner makes a link in Settings; the teammate opens it signed out, joins, and answers an ask', async () => {
    const owner = await openInbox(browser, server, { viewport: LAPTOP, path: '/settings' });
    await owner.getByLabel('Their name').fill('Grace Hopper');
    await owner.getByLabel(/Their email/).fill('grace@example.com');
    await owner.getByRole('button', { name: 'Make invite link' }).click();
    const linkBox = owner.getByLabel('Invite link for Grace Hopper');
    await linkBox.waitFor();
    const link = await linkBox.inputValue();
    assert.match(link, new RegExp(`^${server.origin}/join#invite=lb_iv_`));
    await owner.locator('.invite-row[data-invite="pending"]', { hasText: 'Grace Hopper' }).waitFor();
    await owner.locator('.settings-section', { hasText: 'Devices and people' }).screenshot({ path: join(OUT, 'invite-settings.png'), animations: 'disabled' });

    const context = await browser.newContext({ viewport: LAPTOP });
    await setTriage(context); // her answer goes at once: undo is triage.test.mjs's
    const grace = await context.newPage();
    grace.errors = [];
    grace.on('pageerror', (e) => grace.errors.push(e.message));
    await grace.goto(link);
    const joinBtn = grace.getByRole('button', { name: 'Join as Grace Hopper' });
    await joinBtn.waitFor();
    assert.ok(!grace.url().includes('invite='), grace.url());
    assert.match(await grace.locator('.join').innerText(), /invited you/);
    await grace.screenshot({ path: join(OUT, 'invite-join.png'), animations: 'disabled' });
    await joinBtn.click();
    await grace.locator('[data-conn="live"]').waitFor({ timeout: 10_000 });
    await grace.locator('[data-notice]', { hasText: 'Welcome, Grace Hopper' }).waitFor();
    assert.match(await grace.locator('[data-notice]').innerText(), /Settings/);
    await grace.screenshot({ path: join(OUT, 'invite-joined.png'), animations: 'disabled' });

    // Grace answers an ask as herself.
    const agent = await new Agent(server, { name: 'e2e-agent' }).init();
    const p = 'invite-' + Date.now();
    const call = background(agent.call('ask_question', { project: p, question: 'Who reviews the schema change?', options: [{ label: 'Grace' }, { label: 'Ada' }] }));
    const ask = await waitForAsk(server, (a) => a.project === p);
    await grace.locator(`[data-ask-row="${ask.id}"]`).click();
    await grace.locator('.choice', { hasText: 'Grace' }).click();
    await grace.getByLabel(/In your own words/).fill('I will, today.');
    await grace.getByRole('button', { name: 'Send answer' }).click();
    const reply = await call;
    assert.deepEqual(reply.reply, { outcome: 'answered', selected: ['Grace'], text: 'I will, today.' });
    const { body } = await server.api('GET', `/asks/${ask.id}`);
    assert.equal(body.thread.at(-1).by.name, 'Grace Hopper');

    // The owner's list shows her joined; the link opens nothing a second time.
    await owner.reload();
    await owner.locator('.invite-row[data-invite="joined"]', { hasText: 'Grace Hopper' }).waitFor();
    const again = await (await browser.newContext()).newPage();
    await again.goto(link);
    await again.locator('.join [role="alert"]', { hasText: 'used already' }).waitFor();
    assert.equal(await again.getByRole('button', { name: 'Join as Grace Hopper' }).count(), 0);
    assert.deepEqual(grace.errors, []);
    for (const pg of [again, grace, owner]) await pg.context().close();
  });

  it('a revoked invite opens nothing', async () => {
    const owner = await openInbox(browser, server, { viewport: LAPTOP, path: '/settings' });
    await owner.getByLabel('Their name').fill('Linus');
    await owner.getByRole('button', { name: 'Make invite link' }).click();
    const link = await owner.getByLabel('Invite link for Linus').inputValue();
    await owner.getByRole('button', { name: 'Revoke the invite for Linus' }).click();
    await owner.locator('.invite-row[data-invite="revoked"]', { hasText: 'Linus' }).waitFor();
    const page = await (await browser.newContext()).newPage();
    await page.goto(link);
    await page.locator('.join [role="alert"]', { hasText: 'withdrawn' }).waitFor();
    for (const pg of [page, owner]) await pg.context().close();
  });
});

describe('accessibility of the new views (axe-core, WCAG 2.1 AA)', () => {
  it('the pairing dialog, Settings with invites, the pairing form and the join page have no violations', async () => {
    const found = [];
    const laptop = await openInbox(browser, server, { viewport: LAPTOP, path: '/settings', bypassCSP: true });
    await laptop.getByLabel('Their name').fill('Barbara Liskov');
    await laptop.getByRole('button', { name: 'Make invite link' }).click();
    const link = await laptop.getByLabel('Invite link for Barbara Liskov').inputValue();
    for (const v of await axe(laptop)) found.push(`settings: ${v}`);
    await laptop.getByRole('button', { name: 'Pair a phone', exact: true }).click();
    await laptop.locator('.pair-dialog .pair-code').waitFor();
    for (const v of await axe(laptop)) found.push(`pair dialog: ${v}`);
    const phone = await (await browser.newContext({ ...PHONE, bypassCSP: true })).newPage();
    await phone.goto(server.origin + '/');
    await phone.getByRole('button', { name: 'Enter a pairing code' }).click();
    await phone.getByLabel('Pairing code').waitFor();
    for (const v of await axe(phone)) found.push(`pairing form: ${v}`);
    await phone.goto(link);
    await phone.getByRole('button', { name: 'Join as Barbara Liskov' }).waitFor();
    for (const v of await axe(phone)) found.push(`join: ${v}`);
    for (const pg of [phone, laptop]) await pg.context().close();
    assert.deepEqual(found, []);
  });
});
