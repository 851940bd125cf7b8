// The official TypeScript SDK's OAuth client (v1, `@modelcontextprotocol/sdk`) signs in to
// `loopback serve` (and, with LOOPBACK_E2E_TARGET=aws-local, to the AWS deployment's own
// Lambdas on moto) with the MCP URL alone: the 401's challenge, discovery, Dynamic Client
// Registration, PKCE, the person's consent in headless Chromium (Debian's, driven by
// playwright-core from web/node_modules; never a downloaded browser), the code on the client's
// loopback callback, finishAuth, then a tool call as the person's agent. Then several refreshes of
// one refresh token at once (each gets a pair, within the grace), and the person disconnecting
// the agent: its access token is refused at once, its refresh token is dead.
//
//   go build -o bin/loopback ./cmd/loopback && cd e2e && node --test oauth.test.mjs
//   … && LOOPBACK_E2E_TARGET=aws-local node --test oauth.test.mjs

import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { pathToFileURL } from 'node:url';

import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { UnauthorizedError } from '@modelcontextprotocol/sdk/client/auth.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';

import { LoopbackServer } from './lib/server.mjs';
import { TARGET } from './lib/target.mjs';

const { chromium } = await import(pathToFileURL(join(import.meta.dirname, '../web/node_modules/playwright-core/index.mjs')).href);

let server;
let browser;

before(async () => {
  server = await new LoopbackServer().start();
  browser = await chromium.launch({ executablePath: process.env.CHROMIUM ?? '/usr/bin/chromium', headless: true, args: ['--no-sandbox', '--disable-gpu', '--no-first-run'] });
});
after(async () => {
  await browser?.close();
  await server?.dispose();
});

/** A native client's loopback listener: `code` resolves with the query of the redirect it gets. */
async function callback() {
  let deliver;
  const code = new Promise((r) => (deliver = r));
  const srv = createServer((req, res) => {
    res.end('Authentication complete. You may close this window.');
    deliver(new URL(req.url, 'http://127.0.0.1').searchParams);
  });
  await new Promise((r) => srv.listen(0, '127.0.0.1', r));
  return { uri: `http://127.0.0.1:${srv.address().port}/callback`, code, close: () => srv.close() };
}

/** The SDK's OAuthClientProvider, in memory; the browser it "opens" is given to `open`. */
class Provider {
  constructor(redirect, open) {
    this.redirect = redirect;
    this.open = open;
    this.info = undefined;
    this.saved = undefined;
    this.verifier = undefined;
  }
  get redirectUrl() {
    return this.redirect;
  }
  get clientMetadata() {
    return { client_name: 'TypeScript SDK agent', redirect_uris: [this.redirect], grant_types: ['authorization_code', 'refresh_token'], response_types: ['code'], token_endpoint_auth_method: 'none' };
  }
  clientInformation() {
    return this.info;
  }
  saveClientInformation(info) {
    this.info = info;
  }
  tokens() {
    return this.saved;
  }
  saveTokens(tokens) {
    this.saved = tokens;
  }
  redirectToAuthorization(url) {
    this.open(url);
  }
  saveCodeVerifier(v) {
    this.verifier = v;
  }
  codeVerifier() {
    return this.verifier;
  }
}

test(`the TypeScript SDK signs in with the URL alone and calls a tool (${TARGET})`, async () => {
  const cb = await callback();
  const context = await browser.newContext();
  try {
    const page = await context.newPage();
    await page.goto(server.origin + '/#token=' + server.token);
    await page.locator('.app').waitFor();
    let opened;
    const authorized = new Promise((r) => (opened = r));
    const provider = new Provider(cb.uri, (url) => opened(url));
    const connect = () => {
      const transport = new StreamableHTTPClientTransport(new URL(server.mcp), { authProvider: provider });
      const client = new Client({ name: 'ts-sdk-oauth-e2e', version: '1.0.0' });
      return { client, transport, done: client.connect(transport) };
    };
    const first = connect();
    await assert.rejects(first.done, UnauthorizedError);
    assert.ok(provider.info?.client_id, 'the SDK registered no client');

    // The person: the browser opens the authorization URL, lands on the consent page, approves.
    const url = await authorized;
    assert.equal(url.searchParams.get('code_challenge_method'), 'S256');
    assert.ok(url.searchParams.get('resource')?.startsWith(server.origin), url.href);
    await page.goto(url.href);
    await page.waitForURL(/\/connect\//);
    assert.match(await page.locator('.connect-facts').innerText(), /TypeScript SDK agent/);
    await page.getByRole('button', { name: 'Approve' }).click();
    const q = await cb.code;
    assert.equal(q.get('iss'), server.origin);
    await first.transport.finishAuth(q.get('code'));
    assert.equal(provider.saved?.token_type, 'Bearer');
    assert.equal(provider.saved?.expires_in, 3600);

    const second = connect();
    await second.done;
    const result = await second.client.callTool({ name: 'get_inbox_link', arguments: {} });
    assert.ok(!result.isError, JSON.stringify(result));
    assert.ok(result.structuredContent.url.startsWith(server.origin), JSON.stringify(result.structuredContent));
    await second.client.close();

    // Refreshes of one refresh token at once (a client's processes): each gets a pair of its own.
    const clientId = provider.info.client_id;
    const refresh = (token) =>
      fetch(server.origin + '/oauth/token', {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams({ grant_type: 'refresh_token', refresh_token: token, client_id: clientId }),
      });
    const answers = await Promise.all([1, 2, 3, 4].map(() => refresh(provider.saved.refresh_token)));
    const pairs = await Promise.all(answers.map((r) => r.json()));
    for (const [i, r] of answers.entries()) assert.equal(r.status, 200, JSON.stringify(pairs[i]));
    assert.equal(new Set(pairs.map((p) => p.access_token)).size, 4, 'each refresh gets its own access token');
    assert.equal(new Set(pairs.map((p) => p.refresh_token)).size, 4, 'each refresh gets its own refresh token');

    // A fresh access token works; the person disconnects the agent; it is refused at once, and
    // neither refresh token works any more.
    const mcpStatus = async (access) =>
      (
        await fetch(server.mcp, {
          method: 'POST',
          headers: { authorization: 'Bearer ' + access, 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
          body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'oauth-e2e', version: '1.0.0' } } }),
        })
      ).status;
    assert.equal(await mcpStatus(pairs[0].access_token), 200);
    const person = { authorization: 'Bearer ' + server.token };
    const agents = await (await fetch(server.api + '/agents', { headers: person })).json();
    const agent = agents.items.find((a) => a.client === clientId);
    assert.ok(agent, JSON.stringify(agents));
    const gone = await fetch(server.api + '/agents/' + encodeURIComponent(agent.id), { method: 'DELETE', headers: person });
    assert.equal(gone.status, 204, await gone.text());
    assert.equal(await mcpStatus(pairs[1].access_token), 401);
    for (const p of [pairs[2], provider.saved]) {
      const r = await refresh(p.refresh_token);
      const body = await r.json();
      assert.equal(r.status, 400, JSON.stringify(body));
      assert.equal(body.error, 'invalid_grant');
    }
    // On aws-local every AWS call each function made is one its role in template.yaml allows.
    assert.deepEqual(server.log.filter((l) => l.includes('IAM:')), []);
  } finally {
    await context.close();
    cb.close();
  }
});
