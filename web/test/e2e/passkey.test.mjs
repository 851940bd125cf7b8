// Passkeys in a real browser (Debian's headless Chromium) against the real binary: WebAuthn runs
// for real, on Chromium's virtual authenticator through the DevTools protocol (ctap2, internal
// transport, resident keys, user verification). A signed-in person adds a passkey in Settings; a
// fresh, signed-out browser signs in with it and the inbox works; once the passkey is removed, a
// sign-in with it is refused with a clear message, while the browser it signed in stays signed in
// until its own credential is revoked. At a laptop's size and a phone's; screenshots of the
// Passkeys section and the sign-in page go to docs/screenshots/.
//
// The inbox is opened at http://localhost:PORT: WebAuthn refuses IP addresses as relying party ids,
// and Chromium treats localhost as a secure context (the server's relying party is "localhost"
// when it listens on 127.0.0.1).
//
//   make build && cd web && node --test test/e2e/passkey.test.mjs

import assert from 'node:assert/strict';
import { mkdir } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { after, before, describe, it } from 'node:test';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { launch } from './lib/browser.mjs';
import { background, setTriage, scrollsSideways } from './lib/helpers.mjs';
import { Agent } from './lib/mcp.mjs';
import { BIN, Server } from './lib/server.mjs';
import { TARGET, tokenCommand } from '../../../e2e/lib/target.mjs';

const OUT = process.env.LOOPBACK_SCREENSHOTS ?? join(dirname(fileURLToPath(import.meta.url)), '../../../docs/screenshots');
const LAPTOP = { viewport: { width: 1280, height: 860 } };
const PHONE = { viewport: { width: 390, height: 844 }, deviceScaleFactor: 2, isMobile: true, hasTouch: true };

let server;
let browser;
let origin;

before(async () => {
  await mkdir(OUT, { recursive: true });
  server = await new Server().start();
  browser = await launch();
  origin = server.origin.replace('127.0.0.1', 'localhost');
});

after(async () => {
  await browser?.close();
  await server?.dispose();
});

/** A new browser context with a virtual platform authenticator (holding `credentials`, if any). */
async function device(size, credentials = []) {
  const context = await browser.newContext(size);
  await setTriage(context); // an answer here goes at once: undo is triage.test.mjs's
  const page = await context.newPage();
  page.errors = [];
  page.on('pageerror', (e) => page.errors.push(e.message));
  const cdp = await context.newCDPSession(page);
  await cdp.send('WebAuthn.enable');
  const { authenticatorId } = await cdp.send('WebAuthn.addVirtualAuthenticator', {
    options: {
      protocol: 'ctap2',
      transport: 'internal',
      hasResidentKey: true,
      hasUserVerification: true,
      isUserVerified: true,
      automaticPresenceSimulation: true,
    },
  });
  for (const credential of credentials) await cdp.send('WebAuthn.addCredential', { authenticatorId, credential });
  page.passkeys = async () => (await cdp.send('WebAuthn.getCredentials', { authenticatorId })).credentials;
  return page;
}

/** The token this page keeps (localStorage), or null. */
const keptToken = (page) => page.evaluate(() => localStorage.getItem('loopback.token'));

/**
 * On the sign-in page, a passkey sign-in: by the "Use a passkey" button (`via: 'button'`: the
 * browser's autofill offer is turned off first), or by the token field's autofill (conditional
 * mediation), which Chromium's virtual authenticator answers by itself with the one passkey it holds.
 */
async function signInWithPasskey(page, via) {
  if (via === 'button') {
    await page.addInitScript(() => {
      PublicKeyCredential.isConditionalMediationAvailable = async () => false;
    });
  }
  await page.goto(origin + '/');
  if (via === 'button') await page.getByRole('button', { name: 'Use a passkey' }).click();
  // As a person does: into the token field, where the browser offers the passkey.
  else await page.getByLabel('Or paste your token').focus().catch(() => {}); // gone already: signed in
}

async function settings(page) {
  await page.goto(origin + '/settings');
  await page.getByRole('heading', { name: 'Passkeys' }).waitFor();
}

// On aws-local (LOOPBACK_E2E_TARGET=aws-local) the same flows run through ApiPasskeysFunction on
// moto; the screenshots are the local binary's only (the same pages).
const SHOTS = TARGET !== 'aws-local';

describe('passkeys', () => {
  let synced; // the passkey as the first device's authenticator holds it (to "sync" to others)
  let signedIn; // the token of the browser the passkey signed in
  let signedInID; // its credential's id

  it('a signed-in person adds a passkey in Settings (laptop)', async () => {
    const page = await device(LAPTOP);
    await page.goto(origin + '/#token=' + server.token);
    await page.locator('[data-conn="live"]').waitFor({ timeout: 10_000 });
    await settings(page);
    await page.getByText('No passkeys yet.').waitFor();
    await page.getByLabel('Name for a new passkey').fill('Work laptop');
    await page.getByRole('button', { name: 'Add a passkey' }).click();
    await page.getByText('Added “Work laptop”').waitFor();
    const row = page.locator('.passkey-item', { hasText: 'Work laptop' });
    await row.getByText('never used').waitFor();
    const held = await page.passkeys();
    assert.equal(held.length, 1, 'the authenticator holds one passkey');
    assert.equal(held[0].isResidentCredential, true, 'a discoverable credential');
    assert.equal(held[0].rpId, 'localhost');
    synced = held[0];
    // The API lists it, and agents cannot.
    const list = await server.api('GET', '/passkeys');
    assert.equal(list.status, 200);
    assert.deepEqual(list.body.items.map((p) => p.name), ['Work laptop']);
    assert.deepEqual(page.errors, []);
    await page.context().close();
  });

  it('a fresh signed-out browser signs in with it by the button, and the inbox works (laptop)', async () => {
    const page = await device(LAPTOP, [synced]);
    await signInWithPasskey(page, 'button');
    await page.locator('[data-conn="live"]').waitFor({ timeout: 10_000 });
    const token = await keptToken(page);
    assert.ok(token && token.startsWith('lb_') && token !== server.token, 'a new credential of its own, kept');
    assert.deepEqual(page.errors, []);
    // The passkey as it now is (its signature counter moved on), for the next device: a copy from
    // before would be refused as a clone.
    synced = (await page.passkeys())[0];
    await page.context().close();
  });

  it('a fresh signed-out browser signs in with it from the autofill, and the inbox works (phone)', async () => {
    const page = await device(PHONE, [synced]);
    const answer = page.waitForResponse((r) => r.url().includes('/api/v1/passkey-sign-ins/') && r.request().method() === 'POST');
    await signInWithPasskey(page, 'autofill');
    signedInID = (await (await answer).json()).credentialId;
    await page.locator('[data-conn="live"]').waitFor({ timeout: 10_000 });
    signedIn = await keptToken(page);
    assert.ok(signedIn && signedIn.startsWith('lb_') && signedIn !== server.token, 'a new credential of its own, kept');
    assert.equal(page.url().includes(signedIn), false, 'the token is never in the address');
    const who = await server.api('GET', '/whoami', undefined, { as: signedIn });
    assert.equal(who.status, 200);
    // The inbox works: an ask raised now shows up, live, and is answered from it.
    const agent = await new Agent(server, { name: 'claude-code', version: '2.1.0' }).init();
    const asked = background(agent.call('ask_question', { project: 'passkeys', question: 'Ship the passkey sign-in today?', options: [{ label: 'Yes' }, { label: 'Not yet' }] }));
    // Opened from the keyboard: on a phone's list the bulk-dismiss pick box lies over the row's text.
    const row = page.locator('[data-ask-row]', { hasText: 'Ship the passkey sign-in today?' });
    await row.focus();
    await page.keyboard.press('Enter');
    const view = page.locator('.ask-view', { hasText: 'Ship the passkey sign-in today?' });
    await view.getByRole('button', { name: /Not yet/ }).first().click();
    const send = view.getByRole('button', { name: /^(Send|Answer)/ }).first();
    if (await send.isVisible().catch(() => false)) await send.click();
    const reply = await asked;
    assert.match(JSON.stringify(reply), /Not yet/);
    assert.equal(await scrollsSideways(page), false);
    // The sign-in is listed as a credential, and the passkey as used.
    const list = await server.api('GET', '/passkeys');
    assert.ok(list.body.items[0].lastUsedAt, 'last used is set');
    await settings(page);
    await page.locator('.passkey-item', { hasText: 'Work laptop' }).getByText('last used').waitFor();
    assert.equal(await scrollsSideways(page), false);
    await page.locator('#settings-passkeys').scrollIntoViewIfNeeded();
    if (SHOTS) await page.screenshot({ path: join(OUT, 'phone-passkeys.png'), animations: 'disabled' });
    assert.deepEqual(page.errors, []);
    await page.context().close();
  });

  it('screenshots: the Passkeys section (laptop) and the sign-in page (laptop, phone)', { skip: !SHOTS && 'the local run takes them' }, async () => {
    const page = await device(LAPTOP);
    await page.goto(origin + '/#token=' + server.token);
    await page.locator('[data-conn="live"]').waitFor({ timeout: 10_000 });
    await settings(page);
    await page.locator('.passkey-item').first().waitFor();
    await page.locator('#settings-passkeys').scrollIntoViewIfNeeded();
    await page.screenshot({ path: join(OUT, 'desktop-passkeys.png'), animations: 'disabled' });
    await page.context().close();
    for (const [size, name] of [
      [LAPTOP, 'desktop-signin-passkey'],
      [PHONE, 'phone-signin-passkey'],
    ]) {
      const p = await device(size);
      await p.goto(origin + '/');
      await p.getByRole('button', { name: 'Use a passkey' }).waitFor();
      assert.equal(await scrollsSideways(p), false, `${name} scrolls sideways`);
      await p.screenshot({ path: join(OUT, name + '.png'), animations: 'disabled' });
      await p.context().close();
    }
  });

  it('removed, the passkey signs nobody in, and says so; the browser it signed in stays until revoked (laptop)', async () => {
    const page = await device(LAPTOP);
    await page.goto(origin + '/#token=' + server.token);
    await page.locator('[data-conn="live"]').waitFor({ timeout: 10_000 });
    await settings(page);
    const row = page.locator('.passkey-item', { hasText: 'Work laptop' });
    await row.getByRole('button', { name: 'Remove Work laptop' }).click();
    await row.getByText('Browsers it signed in stay signed in.').waitFor();
    await row.getByRole('button', { name: 'Remove', exact: true }).click();
    await page.getByText('No passkeys yet.').waitFor();
    await page.context().close();

    for (const [size, via] of [
      [LAPTOP, 'button'],
      [PHONE, 'autofill'],
    ]) {
      const p = await device(size, [synced]);
      await signInWithPasskey(p, via);
      const alert = p.getByRole('alert');
      await alert.waitFor();
      assert.match(await alert.innerText(), /not registered with Loopback/);
      assert.equal(await keptToken(p), null, 'nothing kept');
      await p.getByRole('button', { name: 'Use a passkey' }).waitFor(); // still the sign-in page
      await p.context().close();
    }

    // The browser it signed in: still in (a restart of the server changes nothing), until its own
    // credential is revoked, as any credential is.
    assert.equal((await server.api('GET', '/whoami', undefined, { as: signedIn })).status, 200);
    await server.restart();
    const who = await server.api('GET', '/whoami', undefined, { as: signedIn });
    assert.equal(who.status, 200, 'still signed in after a restart');
    assert.equal(who.body.actor.id, (await server.api('GET', '/whoami')).body.actor.id);
    const where = await tokenCommand(server);
    const { stdout } = await promisify(execFile)(BIN, ['token', 'list', ...where.args], { env: { ...process.env, ...where.env } });
    assert.ok(stdout.includes(signedInID), `loopback token list shows the browser's credential ${signedInID}:\n${stdout}`);
    await promisify(execFile)(BIN, ['token', 'revoke', signedInID, ...where.args], { env: { ...process.env, ...where.env } });
    assert.equal((await server.api('GET', '/whoami', undefined, { as: signedIn })).status, 401, 'revoked: signed out');
  });

  it('agents can neither register nor list passkeys', async () => {
    const agent = await server.createToken('some-agent');
    for (const [method, path, body] of [
      ['GET', '/passkeys'],
      ['POST', '/passkey-registrations', { name: 'x' }],
    ]) {
      const r = await server.api(method, path, body, { as: agent });
      assert.equal(r.status, 403, `${method} ${path}`);
      assert.equal(r.body.code, 'auth.forbidden');
    }
  });
});
