// Small helpers for the browser tests: a signed-in page that records what it requests, waiting for
// an ask to exist, and a real PNG made on the spot.

import { deflateSync } from 'node:zlib';

/** Polls the API's snapshot until an open or recent ask matches. */
export async function waitForAsk(server, match, timeoutMs = 10_000) {
  const until = Date.now() + timeoutMs;
  for (;;) {
    const { body } = await server.api('GET', '/snapshot');
    const a = [...body.open, ...body.recent].find(match);
    if (a) return a;
    if (Date.now() > until) throw new Error('no such ask appeared');
    await new Promise((r) => setTimeout(r, 100));
  }
}

/**
 * A new browser context and page, signed in through the link `loopback serve` prints. The page's
 * requests to anywhere but the server (and blob:/data: URLs it made itself) are collected in
 * `foreign`, page errors in `errors`, and CSP violations in `violations` (read with cspViolations).
 */
/**
 * The triage settings (web/src/triage.ts) the suites that test other things run with: replies sent
 * at once, no next ask opened after an answer, arrivals shown in place. test/e2e/triage.test.mjs
 * passes `triage: null` for the inbox's own defaults (undo, auto-advance, the "N new" pill).
 */
export const PLAIN_TRIAGE = { undoSeconds: 0, advance: false, hold: false };

/** Triage settings for every page a context (or page) loads from now on: openInbox's, or a suite's own. */
export function setTriage(pageOrContext, triage = PLAIN_TRIAGE) {
  return pageOrContext.addInitScript((t) => localStorage.setItem('loopback.triage', t), JSON.stringify(triage));
}

export async function openInbox(
  browser,
  server,
  { viewport = { width: 1280, height: 800 }, path = '/', signIn = true, triage = PLAIN_TRIAGE, beforeLoad, ...opts } = {},
) {
  const context = await browser.newContext({ viewport, ...opts });
  const page = await context.newPage();
  if (beforeLoad) await beforeLoad(page); // such as a route on the event socket
  if (triage) await setTriage(page, triage);
  page.foreign = [];
  page.errors = [];
  page.requests = [];
  page.apiHeaders = [];
  page.on('request', (r) => {
    const url = r.url();
    page.requests.push(url);
    if (url.startsWith(server.origin + '/api/v1/') && !url.startsWith(server.origin + '/api/v1/events?') && url !== server.origin + '/api/v1/events') {
      page.apiHeaders.push({ url, revision: r.headers()['loopback-revision'], auth: r.headers()['authorization'] });
    }
    if (!url.startsWith(server.origin + '/') && !url.startsWith('blob:') && !url.startsWith('data:')) page.foreign.push(url);
  });
  page.on('websocket', (ws) => page.requests.push(ws.url()));
  page.on('pageerror', (e) => page.errors.push(e.message));
  page.on('dialog', (d) => {
    page.errors.push('dialog: ' + d.message());
    void d.dismiss();
  });
  await page.addInitScript(() => {
    window.__violations = [];
    document.addEventListener('securitypolicyviolation', (e) => window.__violations.push(`${e.violatedDirective} ${e.blockedURI}`));
  });
  await page.goto(server.origin + path + (signIn ? '#token=' + server.token : ''));
  if (signIn) await page.locator('[data-conn="live"]').waitFor({ timeout: 10_000 });
  return page;
}

export async function cspViolations(page) {
  return page.evaluate(() => window.__violations);
}

/** Whether the page can be scrolled sideways (it should never be). */
export async function scrollsSideways(page) {
  return page.evaluate(() => document.documentElement.scrollWidth > window.innerWidth + 0.5);
}

// ------------------------------------------------------------------------------------------ PNG --

const CRC_TABLE = new Uint32Array(256).map((_, n) => {
  let c = n;
  for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
  return c >>> 0;
});

function crc32(buf) {
  let c = 0xffffffff;
  for (const b of buf) c = CRC_TABLE[(c ^ b) & 0xff] ^ (c >>> 8);
  return (c ^ 0xffffffff) >>> 0;
}

function chunk(type, data) {
  const len = Buffer.alloc(4);
  len.writeUInt32BE(data.length);
  const td = Buffer.concat([Buffer.from(type, 'ascii'), data]);
  const crc = Buffer.alloc(4);
  crc.writeUInt32BE(crc32(td));
  return Buffer.concat([len, td, crc]);
}

/** A w×h RGB PNG: a soft diagonal gradient with a few "UI" bars, so it looks like a screenshot. */
export function png(w = 480, h = 270) {
  const rows = [];
  for (let y = 0; y < h; y++) {
    const row = Buffer.alloc(1 + w * 3);
    for (let x = 0; x < w; x++) {
      let r = 238 - Math.round((y / h) * 30);
      let g = 240 - Math.round((x / w) * 20);
      let b = 252;
      const bar = (y > 20 && y < 44) || (y > 70 && y < 80 && x < w * 0.7) || (y > 95 && y < 105 && x < w * 0.5);
      if (y < 12) [r, g, b] = [79, 70, 229];
      else if (bar && x > 20 && x < w - 20) [r, g, b] = [199, 203, 230];
      else if (y > 130 && y < h - 24 && x > 20 && x < w / 2 - 10) [r, g, b] = [224, 231, 255];
      else if (y > 130 && y < h - 24 && x > w / 2 + 10 && x < w - 20) [r, g, b] = [209, 250, 229];
      row[1 + x * 3] = r;
      row[2 + x * 3] = g;
      row[3 + x * 3] = b;
    }
    rows.push(row);
  }
  const ihdr = Buffer.alloc(13);
  ihdr.writeUInt32BE(w, 0);
  ihdr.writeUInt32BE(h, 4);
  ihdr[8] = 8; // bit depth
  ihdr[9] = 2; // RGB
  return Buffer.concat([
    Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]),
    chunk('IHDR', ihdr),
    chunk('IDAT', deflateSync(Buffer.concat(rows))),
    chunk('IEND', Buffer.alloc(0)),
  ]);
}

/**
 * Uploads a PNG as an agent does: request_upload, then PUT to the ticket's URL with the headers its
 * printed command sends. Returns the uploadId. The contract's route answers 201; on the AWS path the
 * URL is a presigned S3 PUT (create-only, If-None-Match: *), which S3 answers 200, and the upload is
 * checked after (an image block naming it waits for the verdict).
 */
export async function uploadPng(agent, bytes = png()) {
  const ticket = await agent.call('request_upload', { contentType: 'image/png' });
  const headers = { 'Content-Type': 'image/png' };
  if (/If-None-Match: \*/.test(ticket.command)) headers['If-None-Match'] = '*';
  const res = await fetch(ticket.uploadUrl, { method: 'PUT', headers, body: bytes });
  const route = new URL(ticket.uploadUrl).pathname.startsWith('/api/v1/uploads/');
  if (res.status !== (route ? 201 : 200)) throw new Error(`upload: ${res.status} ${await res.text()}`);
  return ticket.uploadId;
}

/** A tool call left waiting in the background: its failure when the server stops is expected. */
export function background(promise) {
  promise.catch(() => {});
  return promise;
}

const markOf = async (server, id) => (await server.api('GET', '/marks')).body.items.find((m) => m.askId === id);

/**
 * Waits until the server holds a mark on the ask that passes `ok`. The page draws a mark before its
 * write reaches the server, so a test that reads the server right after the page would race it.
 */
export async function serverMark(server, id, ok) {
  for (let i = 0; i < 100; i++) {
    const m = await markOf(server, id);
    if (ok(m)) return m;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`the server's mark on ${id} never became as expected: ${JSON.stringify(await markOf(server, id))}`);
}
