// Answering from the notification (issue 27, contract revision 4), in Debian's headless Chromium
// against the real binary, with an agent on the official MCP TypeScript SDK waiting for the answer.
//
//   make build && cd web && node --test test/e2e/push-actions.test.mjs
//
// How it is driven, exactly:
// - The server pushes for real: the page turns the bell on with a stand-in PushManager (headless
//   Chromium has no push service), whose endpoint is a push service on this machine
//   (lib/push.mjs) that decrypts the server's aes128gcm payload with the device's keys.
// - Those decrypted bytes are handed to the service worker with the DevTools protocol
//   (ServiceWorker.deliverPushMessage), from a blank page of another origin: the inbox's own
//   page is closed first, so no inbox tab is open when the push arrives or is answered.
// - Headless Chromium draws no notification, so nothing can be clicked. The click is a
//   `notificationclick` NotificationEvent dispatched inside the worker (Playwright's
//   Worker.evaluate, which runs in the service worker over the DevTools protocol), carrying the
//   very Notification object the worker showed (registration.getNotifications) and the button's
//   `action` id. It runs the worker's own listener; the only difference from a real click is
//   that a synthetic event cannot be extended with waitUntil, which the worker allows for.
// - The agent's blocking ask_question call (a real MCP client) returns with the answer; the ask's
//   thread says it came from a notification.
// A second part answers with an inbox window open, after the ask was answered elsewhere: the
// link is refused and the worker opens the ask in that window instead. A third sets quiet hours
// in Settings (its screenshot, push-quiet-hours.png, goes to docs/screenshots/ or to
// $LOOPBACK_SCREENSHOTS).

import assert from 'node:assert/strict';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { launch } from './lib/browser.mjs';
import { browserKeys, fakePushManager, pushService } from './lib/push.mjs';
import { Server } from './lib/server.mjs';

const here = dirname(fileURLToPath(import.meta.url));
const OUT = process.env.LOOPBACK_SCREENSHOTS ?? join(here, '../../../docs/screenshots');

/** The official MCP TypeScript SDK, as e2e/ installs it (make setup). */
async function sdk() {
  const req = createRequire(join(here, '../../../e2e/package.json'));
  let client, transport, types;
  try {
    client = req.resolve('@modelcontextprotocol/sdk/client/index.js');
    transport = req.resolve('@modelcontextprotocol/sdk/client/streamableHttp.js');
    types = req.resolve('@modelcontextprotocol/sdk/types.js');
  } catch {
    throw new Error('the MCP TypeScript SDK is not installed in e2e/node_modules: run `make setup` (or `cd e2e && npm ci`)');
  }
  const [c, t, ty] = await Promise.all([client, transport, types].map((f) => import(pathToFileURL(f).href)));
  return { Client: c.Client, StreamableHTTPClientTransport: t.StreamableHTTPClientTransport, CallToolResultSchema: ty.CallToolResultSchema };
}

let server;
let browser;
let mcp;
let agent;

before(async () => {
  // A server that may push to a push service on this machine (over http, on 127.0.0.1: tests only).
  process.env.LOOPBACK_PUSH_TEST_LOOPBACK = '1';
  try {
    server = await new Server().start();
  } finally {
    delete process.env.LOOPBACK_PUSH_TEST_LOOPBACK;
  }
  browser = await launch();
  mcp = await sdk();
  agent = new mcp.Client({ name: 'claude-code', version: '2.1.0' });
  await agent.connect(
    new mcp.StreamableHTTPClientTransport(new URL(server.origin + '/mcp'), {
      requestInit: { headers: { Authorization: `Bearer ${await server.createToken('claude-code')}` } },
    }),
  );
});

after(async () => {
  await agent?.close();
  await browser?.close();
  await server?.dispose();
});

/** Asks over MCP and waits for the person: resolves with the tool's structured result. */
function ask(args) {
  return agent
    .callTool({ name: 'ask_question', arguments: args, _meta: { progressToken: `p-${Math.random()}` } }, mcp.CallToolResultSchema, {
      timeout: 90_000,
      resetTimeoutOnProgress: true,
    })
    .then((r) => {
      if (r.isError) throw new Error(r.content?.map((c) => c.text).join(' '));
      return r.structuredContent;
    });
}

/** The service worker of `origin`, as Playwright holds it (it evaluates inside the worker). */
async function serviceWorker(context, origin) {
  return context.serviceWorkers().find((w) => w.url().startsWith(origin + '/')) ?? (await context.waitForEvent('serviceworker', { timeout: 10_000 }));
}

/** The notifications the worker's registration shows under a tag. */
function shown(sw, tag) {
  return sw.evaluate(
    async (tag) =>
      (await self.registration.getNotifications({ tag })).map((n) => ({ title: n.title, body: n.body, tag: n.tag, actions: n.actions, data: n.data })),
    tag,
  );
}

/** Polls fn until it returns something truthy. */
async function until(fn, what, timeoutMs = 10_000) {
  const end = Date.now() + timeoutMs;
  for (;;) {
    const v = await fn();
    if (v) return v;
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

/** A DevTools session on `host` (any page of the context) and the registration id of origin's worker. */
async function registrationFrom(host, origin) {
  const cdp = await host.context().newCDPSession(host);
  const found = new Promise((resolve) => {
    cdp.on('ServiceWorker.workerRegistrationUpdated', ({ registrations }) => {
      const r = registrations.find((x) => x.scopeURL === origin + '/' && !x.isDeleted);
      if (r) resolve(r.registrationId);
    });
  });
  await cdp.send('ServiceWorker.enable');
  return { cdp, registrationId: await found };
}

/** A context whose page has turned Web Push on against the stand-in push service; the page stays open. */
async function subscribedDevice(service, keys) {
  const context = await browser.newContext({ viewport: { width: 1280, height: 800 } });
  await context.grantPermissions(['notifications'], { origin: server.origin });
  await fakePushManager(context, keys, service.endpoint);
  const page = await context.newPage();
  await page.goto(server.origin + '/#token=' + server.token);
  await page.locator('[data-conn="live"]').waitFor();
  await page.locator('.bell-btn[data-push="off"]').waitFor({ timeout: 10_000 });
  const posted = page.waitForResponse((r) => r.url().endsWith('/api/v1/push/subscriptions') && r.request().method() === 'POST');
  await page.locator('.bell-btn').click();
  await page.locator('#bell-menu').getByRole('button', { name: 'Turn on for this device' }).click();
  assert.equal((await posted).status(), 201);
  await page.locator('.bell-btn[data-push="on"]').waitFor({ timeout: 10_000 });
  return { context, page };
}

describe('answers from the notification', () => {
  it('a button on the notification answers a question in the service worker, with no inbox tab open, and the agent gets the answer', async () => {
    const keys = browserKeys();
    const service = await pushService(keys);
    const { context, page } = await subscribedDevice(service, keys);
    try {
      const sw = await serviceWorker(context, server.origin);
      // The host of the DevTools session is a blank page: no inbox tab is left open.
      const blank = await context.newPage();
      await blank.goto('about:blank');
      const reg = await registrationFrom(blank, server.origin);
      await page.close();
      assert.deepEqual(
        await sw.evaluate(async () => (await self.clients.matchAll({ type: 'window', includeUncontrolled: true })).map((c) => c.url)),
        [],
        'no window of the inbox is open',
      );

      const answer = ask({ project: 'billing-service', question: 'Retry the webhook how?', options: [{ label: 'Backoff' }, { label: 'Fixed delay' }, { label: 'Never' }] });
      const push = await service.next();
      const notice = JSON.parse(push.text);
      // The decrypted payload: revision 4's group and two buttons, each with its own signed link.
      assert.equal(notice.project, 'billing-service');
      assert.match(notice.group, /^project-[\w-]+$/);
      assert.deepEqual(
        notice.actions.map((a) => [a.action, a.title]),
        [
          ['choice-0', 'Backoff'],
          ['choice-1', 'Fixed delay'],
        ],
      );
      for (const a of notice.actions) assert.match(a.url, /^\/api\/v1\/actions\/[\w.~-]+$/);
      assert.notEqual(notice.actions[0].url, notice.actions[1].url);

      await reg.cdp.send('ServiceWorker.deliverPushMessage', { origin: server.origin, registrationId: reg.registrationId, data: push.text });
      const [n] = await until(async () => (await shown(sw, notice.group)).filter((x) => x.body.includes('Retry')).length && shown(sw, notice.group), 'the notification');
      assert.equal(n.title, 'billing-service asks');
      assert.deepEqual(
        n.actions.map((a) => a.title),
        ['Backoff', 'Fixed delay'],
        'Chromium shows both buttons (Notification.maxActions is 2)',
      );

      // The click on "Fixed delay": a notificationclick with its action, dispatched in the worker.
      await sw.evaluate(
        async ({ tag, action }) => {
          const [shownNow] = await self.registration.getNotifications({ tag });
          self.dispatchEvent(new NotificationEvent('notificationclick', { notification: shownNow, action }));
        },
        { tag: notice.group, action: 'choice-1' },
      );

      // The agent, waiting all along, gets the person's answer.
      const result = await answer;
      assert.equal(result.askId, notice.askId);
      assert.deepEqual([result.reply.outcome, result.reply.selected], ['answered', ['Fixed delay']]);
      // The thread says where it came from, and who.
      const { body: a } = await server.api('GET', `/asks/${notice.askId}`);
      const last = a.thread[a.thread.length - 1];
      assert.equal(last.via, 'push');
      assert.ok(last.by?.id, 'the reply names the person');
      // The notification now says what was answered, and offers nothing more.
      const [done] = await until(async () => (await shown(sw, notice.group)).filter((x) => x.body.startsWith('You answered: Fixed delay')).length && shown(sw, notice.group), 'the confirmation');
      assert.deepEqual(done.actions, []);
      // Still no inbox tab.
      assert.equal(context.pages().filter((p) => p.url().startsWith(server.origin)).length, 0);

      // The server then tells every device the ask was answered (silently): a notice without buttons.
      const update = JSON.parse((await service.next()).text);
      assert.deepEqual([update.askId, update.answered?.via, update.actions], [notice.askId, 'push', undefined]);
      assert.match(update.body, /^Answered( by .+)? in a notification$/);
      // The same link again: refused, never a second answer.
      const again = await fetch(server.origin + notice.actions[1].url, { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: '{"choice":0}' });
      assert.ok(again.status >= 400 && again.status < 500, `a used link: ${again.status}`);
    } finally {
      await context.close();
      await service.close();
    }
  });

  it('a button whose ask was answered elsewhere opens the ask instead', async () => {
    const keys = browserKeys();
    const service = await pushService(keys);
    const { context, page } = await subscribedDevice(service, keys);
    try {
      const sw = await serviceWorker(context, server.origin);
      const reg = await registrationFrom(page, server.origin);
      const answer = ask({ project: 'web-shop', question: 'Ship the release?', options: [{ label: 'Ship' }, { label: 'Hold' }] });
      const push = await service.next();
      const notice = JSON.parse(push.text);
      await page.goto(server.origin + '/history');
      await page.locator('[data-conn="live"]').waitFor();
      // The inbox window is not focused, or the worker would (rightly) show nothing.
      await reg.cdp.send('Emulation.setFocusEmulationEnabled', { enabled: false });
      const away = await context.newPage();
      await away.goto('about:blank');
      await away.bringToFront();
      await until(
        async () => !(await sw.evaluate(async () => (await self.clients.matchAll({ type: 'window', includeUncontrolled: true })).some((c) => c.focused))),
        'the inbox to lose the focus',
      );
      await reg.cdp.send('ServiceWorker.deliverPushMessage', { origin: server.origin, registrationId: reg.registrationId, data: push.text });
      await until(async () => (await shown(sw, notice.group)).length, 'the notification');

      // Answered in the inbox first (another device, say).
      const replied = await server.api('POST', `/asks/${notice.askId}/reply`, { outcome: 'answered', selected: ['Hold'] });
      assert.equal(replied.status, 200);
      assert.deepEqual((await answer).reply.selected, ['Hold']);

      // The button is pressed late: its link is refused and the ask opens in the inbox window.
      await page.evaluate(
        ({ tag, action }) => navigator.serviceWorker.controller.postMessage({ type: 'loopback.test-notificationclick', tag, action }),
        { tag: notice.group, action: 'choice-0' },
      );
      await page.waitForURL(server.origin + notice.url);
      const { body: a } = await server.api('GET', `/asks/${notice.askId}`);
      assert.deepEqual(
        a.thread.filter((e) => e.author === 'human').map((e) => e.via ?? 'inbox'),
        ['inbox'],
        'one answer, the inbox’s',
      );
    } finally {
      await context.close();
      await service.close();
    }
  });

  it('the person sets and clears their quiet hours in Settings', async () => {
    const context = await browser.newContext({ viewport: { width: 1280, height: 800 } });
    try {
      const page = await context.newPage();
      await page.goto(server.origin + '/#token=' + server.token);
      await page.locator('[data-conn="live"]').waitFor();
      await page.locator('.account-btn').click();
      await page.locator('.account-settings').click();
      const form = page.getByRole('form', { name: 'Quiet hours' });
      await form.getByRole('status').filter({ hasText: /No quiet hours set\.|Quiet from/ }).waitFor();
      await form.getByLabel('Quiet from').fill('21:30');
      await form.getByLabel('until').fill('06:45');
      await form.getByLabel('Time zone').fill('Europe/Berlin');
      const saved = page.waitForResponse((r) => r.url().endsWith('/api/v1/push/quiet-hours') && r.request().method() === 'PUT');
      await form.getByRole('button', { name: 'Save quiet hours' }).click();
      assert.equal((await saved).status(), 200);
      await form.getByRole('status').filter({ hasText: 'Quiet from 21:30 to 06:45 (Europe/Berlin).' }).waitFor();
      await form.screenshot({ path: join(OUT, 'push-quiet-hours.png'), animations: 'disabled' });
      const { status, body } = await server.api('GET', '/push/quiet-hours');
      assert.deepEqual([status, body], [200, { start: '21:30', end: '06:45', timeZone: 'Europe/Berlin' }]);

      // A zone that is none: the server's words, and nothing changed.
      await form.getByLabel('Time zone').fill('Mars/Base');
      await form.getByRole('button', { name: 'Save quiet hours' }).click();
      await form.getByRole('alert').filter({ hasText: 'IANA time zone' }).waitFor();
      assert.equal((await server.api('GET', '/push/quiet-hours')).body.timeZone, 'Europe/Berlin');

      await form.getByRole('button', { name: 'No quiet hours' }).click();
      await form.getByRole('status').filter({ hasText: 'No quiet hours: pushes reach you at any hour.' }).waitFor();
      assert.equal((await server.api('GET', '/push/quiet-hours')).status, 404);
    } finally {
      await context.close();
    }
  });
});
