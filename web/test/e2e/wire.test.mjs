// What crosses the wire between the inbox and Loopback (issue 29 item 4; contract revision 6), in
// Chromium against the real binary: the first load reads the whole snapshot over HTTP, gzipped, and
// the socket then sends only a delta; a reconnect offers the newest updatedAt the page holds and gets
// only what changed while it was away, and the list is right afterwards; the socket negotiates
// permessage-deflate. The server runs with `--delta-slack 1ms`, so that asks made a moment apart in
// a test fall on either side of a watermark (the default, 2 minutes, would resend them all).

import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { launch } from './lib/browser.mjs';
import { setTriage } from './lib/helpers.mjs';
import { LAPTOP, q, seed, TaskAgent } from './lib/seed.mjs';
import { Server } from './lib/server.mjs';
import { TARGET } from '../../../e2e/lib/target.mjs';

let browser;
before(async () => {
  browser = await launch();
});
after(async () => {
  await browser?.close();
});

/** The inbox, signed in, with every socket's URL, handshake response headers and frames recorded. */
async function watched(server) {
  const context = await browser.newContext({ viewport: LAPTOP });
  const page = await context.newPage();
  await setTriage(page);
  const sockets = [];
  page.on('websocket', (ws) => {
    const s = { url: ws.url(), frames: [] };
    sockets.push(s);
    ws.on('framereceived', (f) => s.frames.push(JSON.parse(String(f.payload))));
  });
  const handshakes = [];
  const cdp = await context.newCDPSession(page);
  await cdp.send('Network.enable');
  cdp.on('Network.webSocketHandshakeResponseReceived', (e) => handshakes.push(e.response.headers));
  const snapshots = [];
  page.on('response', (r) => {
    if (r.url() === server.origin + '/api/v1/snapshot') snapshots.push(r);
  });
  await page.goto(server.origin + '/#token=' + server.token);
  await page.locator('[data-conn="live"]').waitFor({ timeout: 15_000 });
  return { page, sockets, handshakes, snapshots };
}

const rowIds = (page) => page.locator('[data-ask-row]').evaluateAll((rows) => rows.map((r) => r.dataset.askRow));
const ids = (snap) => [...snap.open, ...snap.recent].map((a) => a.id);

describe('the snapshot over the wire', { skip: TARGET === 'aws-local' && 'the --delta-slack flag is loopback serve’s' }, () => {
  it('first load: the whole snapshot over HTTP (gzip), then a delta on a compressed socket', async (t) => {
    const server = await new Server({ args: ['--delta-slack', '1ms'] }).start();
    t.after(() => server.dispose());
    const agent = await new TaskAgent(server, { name: 'claude-code', version: '2.1.0' }).init();
    const asks = await seed(server, agent, [q('Ship A?'), q('Ship B?'), q('Ship C?')]);
    const { page, sockets, handshakes, snapshots } = await watched(server);

    // The snapshot came over HTTP, gzipped.
    assert.equal(snapshots.length, 1);
    assert.equal((await snapshots[0].allHeaders())['content-encoding'], 'gzip');
    // The socket offered the newest updatedAt of that snapshot, and its first frame is a delta
    // holding only the newest ask (the one at the watermark itself).
    assert.equal(sockets.length, 1);
    const since = new URL(sockets[0].url).searchParams.get('since');
    assert.equal(since, asks[2].updatedAt);
    const first = sockets[0].frames[0];
    assert.equal(first.type, 'snapshot');
    assert.ok(first.since, 'the first frame is a delta');
    assert.deepEqual(ids(first.snapshot), [asks[2].id]);
    // permessage-deflate, without context takeover (an idle socket holds no compressor).
    const ext = Object.entries(handshakes[0]).find(([k]) => k.toLowerCase() === 'sec-websocket-extensions')?.[1] ?? '';
    assert.match(ext, /permessage-deflate/);
    assert.match(ext, /server_no_context_takeover/);
    assert.deepEqual(await rowIds(page), asks.map((a) => a.id).reverse());

    // A returning load (the token kept): each of the first reads is made once.
    const reads = [];
    page.on('request', (r) => r.url().startsWith(server.origin + '/api/') && reads.push(r.method() + ' ' + r.url().slice(server.origin.length).split('?')[0]));
    await page.reload();
    await page.locator('[data-conn="live"]').waitFor({ timeout: 15_000 });
    await page.locator('[data-ask-row]').first().waitFor();
    for (const path of ['GET /api/v1/whoami', 'GET /api/v1/snapshot', 'POST /api/v1/events/tickets'])
      assert.equal(reads.filter((r) => r === path).length, 1, `${path} in ${reads.join(', ')}`);
    await page.context().close();
  });

  it('a reconnect gets only what changed while it was away, and the list is right afterwards', async (t) => {
    const server = await new Server({ args: ['--delta-slack', '1ms'] }).start();
    t.after(() => server.dispose());
    const agent = await new TaskAgent(server, { name: 'claude-code', version: '2.1.0' }).init();
    const [a, b, c, d] = await seed(server, agent, [q('Keep A?'), q('Answer B?'), q('Keep C?'), q('Newest D?')]);
    const { page, sockets } = await watched(server);
    assert.equal((await rowIds(page)).length, 4);

    // Away: meanwhile B is answered elsewhere and E arrives.
    await page.context().setOffline(true);
    await page.locator('[data-conn="offline"]').waitFor();
    const r = await server.api('POST', `/asks/${b.id}/reply`, { outcome: 'answered', selected: ['Yes'] });
    assert.equal(r.status, 200);
    const [e] = await seed(server, agent, [q('New E?')]);
    await page.context().setOffline(false);
    await page.locator('[data-conn="live"]').waitFor({ timeout: 20_000 });

    assert.equal(sockets.length, 2);
    const since = new URL(sockets[1].url).searchParams.get('since');
    assert.equal(since, d.updatedAt, 'the reconnect offers the newest updatedAt the page held');
    const delta = sockets[1].frames[0];
    assert.equal(delta.type, 'snapshot');
    assert.ok(delta.since, 'a delta');
    // Only what changed since (and D, at the watermark itself): never A or C again.
    assert.deepEqual(ids(delta.snapshot).sort(), [b.id, d.id, e.id].sort());
    assert.deepEqual(delta.snapshot.recent.map((x) => x.id), [b.id]);
    // The list: E, D, C, A (B answered), exactly what a fresh load shows.
    await page.locator(`[data-ask-row="${e.id}"]`).waitFor();
    assert.deepEqual(await rowIds(page), [e.id, d.id, c.id, a.id]);
    const again = await watched(server);
    assert.deepEqual(await rowIds(again.page), [e.id, d.id, c.id, a.id]);
    await again.page.context().close();
    await page.context().close();
  });
});
