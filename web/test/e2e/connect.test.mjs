// Connecting an agent with the MCP URL alone (MCP OAuth), with the consent given in a real browser
// (Debian's headless Chromium) against the real binary. The test plays the agent's client: it
// registers (DCR), listens on a loopback callback as native clients do, and opens the
// authorization URL in the browser; the person approves on the inbox's consent page; the client
// gets the code, redeems it with PKCE and calls a tool. Connected agents lists and revokes it.
//
//   go build -o bin/loopback ./cmd/loopback && cd web && node --test test/e2e/connect.test.mjs
//   … && LOOPBACK_E2E_TARGET=aws-local node --test test/e2e/connect.test.mjs

import assert from 'node:assert/strict';
import { createHash, randomBytes } from 'node:crypto';
import { mkdir } from 'node:fs/promises';
import { createServer } from 'node:http';
import { dirname, join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { launch } from './lib/browser.mjs';
import { cspViolations, openInbox } from './lib/helpers.mjs';
import { Agent } from './lib/mcp.mjs';
import { Server } from './lib/server.mjs';
import { TARGET } from '../../../e2e/lib/target.mjs';

// The consent page, the starting browser's waiting page and Connected agents, as screenshots.
const OUT = process.env.LOOPBACK_SCREENSHOTS ?? join(dirname(fileURLToPath(import.meta.url)), '../../../docs/screenshots');
const shot = async (page, name) => {
  await mkdir(OUT, { recursive: true });
  await page.screenshot({ path: join(OUT, name + '.png'), animations: 'disabled' });
};

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

/** A native client's loopback listener: resolves `next` with the query of the redirect it gets. */
async function callback() {
  let deliver;
  const got = new Promise((r) => (deliver = r));
  const srv = createServer((req, res) => {
    res.writeHead(200, { 'Content-Type': 'text/plain' });
    res.end('Authentication complete. You may close this window.');
    deliver(new URL(req.url, 'http://127.0.0.1').searchParams);
  });
  await new Promise((r) => srv.listen(0, '127.0.0.1', r));
  return { uri: `http://127.0.0.1:${srv.address().port}/callback`, next: got, close: () => srv.close() };
}

async function register(name, redirect) {
  const res = await fetch(server.origin + '/oauth/register', {
    method: 'POST',
    headers: { 'Content-Type': 'application/json' },
    body: JSON.stringify({ client_name: name, redirect_uris: [redirect], token_endpoint_auth_method: 'none' }),
  });
  assert.equal(res.status, 201, await res.clone().text());
  return (await res.json()).client_id;
}

function pkce() {
  const verifier = randomBytes(32).toString('base64url');
  return { verifier, challenge: createHash('sha256').update(verifier).digest('base64url') };
}

function authorizeURL(client, redirect, challenge, state) {
  const q = new URLSearchParams({
    response_type: 'code',
    client_id: client,
    redirect_uri: redirect,
    code_challenge: challenge,
    code_challenge_method: 'S256',
    state,
    scope: 'mcp',
    resource: server.origin + '/mcp/',
  });
  return server.origin + '/oauth/authorize?' + q;
}

async function redeem(client, redirect, code, verifier) {
  const res = await fetch(server.origin + '/oauth/token', {
    method: 'POST',
    headers: { 'Content-Type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ grant_type: 'authorization_code', code, client_id: client, redirect_uri: redirect, code_verifier: verifier }),
  });
  const body = await res.json();
  assert.equal(res.status, 200, JSON.stringify(body));
  assert.equal(body.token_type, 'Bearer');
  assert.equal(body.expires_in, 3600);
  return body;
}

// On both targets: `loopback serve`, and (LOOPBACK_E2E_TARGET=aws-local) the AWS deployment's own
// functions, where the consent page's API and Connected agents are ApiConnectFunction's.
describe(`connecting an agent with the URL alone (${TARGET})`, () => {
  it('is one click for a person signed in where the sign-in starts, and the agent then asks', async () => {
    const cb = await callback();
    try {
      const client = await register('Chromium e2e agent', cb.uri);
      const { verifier, challenge } = pkce();
      const page = await openInbox(browser, server);
      await page.locator('.app').waitFor();
      await page.goto(authorizeURL(client, cb.uri, challenge, 'st-1'));
      // The waiting page forwards a signed-in browser to the inbox's consent page.
      await page.waitForURL(/\/connect\/authz_/);
      const code = page.locator('#connect-code');
      await code.waitFor();
      const facts = await page.locator('.connect-facts').innerText();
      assert.match(facts, /Chromium e2e agent/);
      assert.match(facts, /unverified/);
      assert.match(facts, new RegExp(new URL(cb.uri).host.replace('.', '\\.')));
      assert.match(await code.innerText(), /^[A-Z2-9]{4}-[A-Z2-9]{4}$/);
      await shot(page, 'desktop-consent');
      await page.getByRole('button', { name: 'Approve' }).click();
      const q = await cb.next;
      await page.waitForURL(/\/callback\?/);
      assert.equal(q.get('state'), 'st-1');
      assert.equal(q.get('iss'), server.origin);
      const tokens = await redeem(client, cb.uri, q.get('code'), verifier);

      const agent = await new Agent(server, { token: tokens.access_token, name: 'chromium-e2e' }).init();
      const link = await agent.call('get_inbox_link', {});
      assert.ok(link.url.startsWith(server.origin), JSON.stringify(link));

      // Connected agents lists it; revoking it shuts the client out at once.
      await page.goto(server.origin + '/agents');
      const row = page.locator('.agent-item', { hasText: 'Chromium e2e agent' });
      await row.waitFor();
      assert.match(await row.innerText(), /unverified app/);
      await shot(page, 'desktop-agents');
      await row.getByRole('button', { name: 'Revoke Chromium e2e agent' }).click();
      await row.getByRole('button', { name: 'Revoke', exact: true }).click();
      await row.waitFor({ state: 'detached' });
      await assert.rejects(agent.call('get_inbox_link', {}), /HTTP 401/);
      assert.deepEqual(await cspViolations(page), []);
      assert.deepEqual(page.errors, []);
      await page.context().close();
    } finally {
      cb.close();
    }
  });

  it('is approved from another signed-in device showing the same code, and only the starting browser gets the code', async () => {
    const cb = await callback();
    try {
      const client = await register('Second device agent', cb.uri);
      const { verifier, challenge } = pkce();
      // The browser where the sign-in starts is not signed in: it shows the code and waits.
      const starting = await (await browser.newContext()).newPage();
      await starting.goto(authorizeURL(client, cb.uri, challenge, 'st-2'));
      await starting.waitForURL(/\/oauth\/continue\?request=/);
      const shown = (await starting.locator('#match-code').innerText()).trim();
      await shot(starting, 'desktop-oauth-waiting');
      const id = new URL(starting.url()).searchParams.get('request');

      // Another device, signed in, opens the consent page: the same code, and a warning to check it.
      const phone = await openInbox(browser, server, { path: '/connect/' + id, viewport: { width: 390, height: 844 }, isMobile: true, hasTouch: true });
      const code = phone.locator('#connect-code');
      await code.waitFor();
      assert.equal((await code.innerText()).trim(), shown);
      assert.match(await phone.locator('.connect-facts').innerText(), /Approve only if the browser where you started/);
      await shot(phone, 'phone-consent');
      await phone.getByRole('button', { name: 'Approve' }).click();
      await phone.locator('.connect-done').waitFor();
      assert.match(await phone.locator('.connect-done').innerText(), /moves on by itself/);

      // The phone gets no code; the starting browser moves on to the client by itself.
      const q = await cb.next;
      assert.equal(q.get('state'), 'st-2');
      await redeem(client, cb.uri, q.get('code'), verifier);
      assert.deepEqual(phone.errors, []);
      await phone.context().close();
      await starting.context().close();
    } finally {
      cb.close();
    }
  });
});
