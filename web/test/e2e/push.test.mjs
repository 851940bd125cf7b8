// Loopback on a phone: the inbox as an installable app (the manifest, its icons, the tags iOS
// reads), its service worker (the app shell offline; never the API, never a token), and Web Push (a
// push becomes the ask's notification, a click opens the ask, the bell subscribes this device), in
// Debian's headless Chromium against the real binary.
//
//   make build && cd web && node --test test/e2e/push.test.mjs
//
// Headless Chromium has no push service to subscribe with and draws no notification. So a push is
// delivered to the worker through the DevTools protocol (ServiceWorker.deliverPushMessage), the
// notification is read back with registration.getNotifications(), a click is the worker's own click
// handler run through its test message (src/sw/policy.ts, TEST_CLICK_MESSAGE), and the bell's
// subscription is the browser's PushManager stood in for by the page (an endpoint and real P-256
// keys), which the real server then registers. Screenshots (push-*.png) go to docs/screenshots/, or
// to $LOOPBACK_SCREENSHOTS.

import assert from 'node:assert/strict';
import { mkdir } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { launch } from './lib/browser.mjs';
import { background, cspViolations, openInbox, uploadPng, waitForAsk } from './lib/helpers.mjs';
import { Agent } from './lib/mcp.mjs';
import { browserKeys, fakePushManager, pushService } from './lib/push.mjs';
import { Server } from './lib/server.mjs';


const OUT = process.env.LOOPBACK_SCREENSHOTS ?? join(dirname(fileURLToPath(import.meta.url)), '../../../docs/screenshots');
const PHONE = { viewport: { width: 390, height: 844 }, deviceScaleFactor: 2, isMobile: true, hasTouch: true };
const IPHONE_SAFARI =
  'Mozilla/5.0 (iPhone; CPU iPhone OS 17_5 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.5 Mobile/15E148 Safari/604.1';
const ICONS = ['/icons/icon-192.png', '/icons/icon-512.png', '/icons/maskable-512.png', '/icons/apple-touch-icon.png', '/icons/badge-96.png'];

let server;
let agent;
let browser;
let seq = 0;
const project = (name) => `${name}-${++seq}`;

before(async () => {
  await mkdir(OUT, { recursive: true });
  server = await new Server().start();
  agent = await new Agent(server, { name: 'claude-code', version: '2.1.0' }).init();
  browser = await launch();
  // The server has the push routes (contract revision 2): every test below relies on them.
  const key = await server.api('GET', '/push/key');
  assert.equal(key.status, 200, `GET /api/v1/push/key: ${key.status}`);
});

after(async () => {
  await browser?.close();
  await server?.dispose();
});

// ---------------------------------------------------------------------------------- helpers --

/** Waits until the page's service worker is active and controls the page; returns its registration. */
async function workerReady(page) {
  return page.evaluate(async () => {
    const r = await navigator.serviceWorker.ready;
    if (!navigator.serviceWorker.controller) {
      await new Promise((resolve) => navigator.serviceWorker.addEventListener('controllerchange', resolve, { once: true }));
    }
    // The page is claimed while the worker activates.
    while (r.active.state !== 'activated') await new Promise((resolve) => r.active.addEventListener('statechange', resolve, { once: true }));
    return { scope: r.scope, script: r.active.scriptURL, state: r.active.state };
  });
}

/** Every URL in every cache the origin has, by cache. */
async function cachedUrls(page) {
  return page.evaluate(async () => {
    const out = {};
    for (const name of await caches.keys()) out[name] = (await (await caches.open(name)).keys()).map((r) => r.url);
    return out;
  });
}

/** The notifications the worker's registration holds (a notification is not drawn in headless Chromium). */
async function notifications(page, tag) {
  return page.evaluate(async (tag) => {
    const r = await navigator.serviceWorker.ready;
    return (await r.getNotifications(tag ? { tag } : {})).map((n) => ({ title: n.title, body: n.body, tag: n.tag, data: n.data, icon: n.icon, badge: n.badge }));
  }, tag);
}

/** A DevTools session on the page, and the id of the worker's registration for the scope `/`. */
async function registration(page, origin = server.origin) {
  const cdp = await page.context().newCDPSession(page);
  const found = new Promise((resolve) => {
    cdp.on('ServiceWorker.workerRegistrationUpdated', ({ registrations }) => {
      const r = registrations.find((x) => x.scopeURL === origin + '/' && !x.isDeleted);
      if (r) resolve(r.registrationId);
    });
  });
  await cdp.send('ServiceWorker.enable');
  return { cdp, registrationId: await found };
}

/**
 * Waits until the service worker itself sees no focused window of `origin`: what its push handler
 * asks before it shows a notification. (bringToFront takes effect a moment later on a busy machine.)
 */
async function lostFocus(context, origin) {
  const worker = context.serviceWorkers().find((w) => w.url().startsWith(origin + '/')) ?? (await context.waitForEvent('serviceworker'));
  const end = Date.now() + 10_000;
  while (await worker.evaluate(async () => (await self.clients.matchAll({ type: 'window', includeUncontrolled: true })).some((c) => c.focused))) {
    if (Date.now() > end) throw new Error(`a window of ${origin} still has the focus`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

/**
 * Delivers a push while no inbox window has the focus, and waits until its notification (by tag)
 * is shown. Headless Chromium can hand the focus back to the inbox a moment after another page
 * came to the front (a busy machine): then the worker rightly shows nothing, and the push is
 * delivered again, at most three times.
 */
async function deliverWhileAway(page, { cdp, registrationId }, origin, data, tag) {
  for (let attempt = 1; ; attempt++) {
    await lostFocus(page.context(), origin);
    await cdp.send('ServiceWorker.deliverPushMessage', { origin, registrationId, data });
    try {
      return await until(page, async (t) => (await (await navigator.serviceWorker.ready).getNotifications({ tag: t })).length === 1, tag, 4_000);
    } catch (e) {
      if (attempt === 3) throw e;
    }
  }
}

function deliver({ cdp, registrationId }, payload) {
  return cdp.send('ServiceWorker.deliverPushMessage', { origin: server.origin, registrationId, data: JSON.stringify(payload) });
}

/**
 * Waits until `fn` (run in the page, and awaited there) returns something truthy. waitForFunction
 * would take the promise of an async function as its truthy answer.
 */
async function until(page, fn, arg, timeoutMs = 10_000) {
  const end = Date.now() + timeoutMs;
  for (;;) {
    const v = await page.evaluate(fn, arg);
    if (v) return v;
    if (Date.now() > end) throw new Error(`timed out waiting for ${fn}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

function pngSize(buf) {
  assert.equal(buf.subarray(1, 4).toString('latin1'), 'PNG');
  return `${buf.readUInt32BE(16)}x${buf.readUInt32BE(20)}`;
}

/** Signs a page in through the link, as openInbox does, on a context made by the test. */
async function signedIn(context, path = '/') {
  const page = await context.newPage();
  page.errors = [];
  page.on('pageerror', (e) => page.errors.push(e.message));
  await page.goto(server.origin + path + '#token=' + server.token);
  await page.locator('[data-conn="live"]').waitFor();
  return page;
}

async function openBell(page) {
  await page.locator('.bell-btn').click();
  await page.locator('#bell-menu').waitFor();
  return page.locator('#bell-menu');
}

async function bellState(page, kind) {
  await page.locator(`.bell-btn[data-push="${kind}"]`).waitFor({ timeout: 10_000 });
}

async function shoot(page, name) {
  await page.evaluate(() => document.fonts.ready);
  await page.waitForTimeout(150);
  await page.screenshot({ path: join(OUT, name + '.png'), animations: 'disabled' });
}

// ----------------------------------------------------------------------------- installable --

describe('an installable inbox', () => {
  it('links a web app manifest that Chromium reads without errors, with the icons and tags a home-screen app needs', async () => {
    const page = await openInbox(browser, server);
    assert.equal(await page.locator('link[rel="manifest"]').getAttribute('href'), '/manifest.webmanifest');
    const res = await fetch(server.origin + '/manifest.webmanifest');
    assert.equal(res.status, 200);
    assert.equal(res.headers.get('content-type'), 'application/manifest+json');
    assert.match(res.headers.get('content-security-policy'), /manifest-src 'self'/);
    const m = await res.json();
    assert.deepEqual(
      [m.name, m.short_name, m.start_url, m.scope, m.display],
      ['Loopback', 'Loopback', '/', '/', 'standalone'],
    );
    assert.match(m.theme_color, /^#[0-9a-f]{6}$/i);
    assert.match(m.background_color, /^#[0-9a-f]{6}$/i);
    const pngs = m.icons.filter((i) => i.type === 'image/png');
    assert.deepEqual(pngs.map((i) => `${i.sizes} ${i.purpose}`).sort(), ['192x192 any', '512x512 any', '512x512 maskable']);
    for (const icon of pngs) {
      const r = await fetch(server.origin + icon.src);
      assert.equal(r.headers.get('content-type'), 'image/png', icon.src);
      assert.equal(pngSize(Buffer.from(await r.arrayBuffer())), icon.sizes, icon.src);
    }

    // What iOS reads for a home-screen app.
    const touch = await page.locator('link[rel="apple-touch-icon"]').getAttribute('href');
    assert.equal(pngSize(Buffer.from(await (await fetch(server.origin + touch)).arrayBuffer())), '180x180');
    const meta = (name) => page.locator(`meta[name="${name}"]`).getAttribute('content');
    assert.equal(await meta('apple-mobile-web-app-capable'), 'yes');
    assert.equal(await meta('mobile-web-app-capable'), 'yes');
    assert.equal(await meta('apple-mobile-web-app-title'), 'Loopback');
    assert.ok(['default', 'black', 'black-translucent'].includes(await meta('apple-mobile-web-app-status-bar-style')));

    // Chromium's own reading of it: no manifest error, and nothing that keeps it from being installed.
    const cdp = await page.context().newCDPSession(page);
    const manifest = await cdp.send('Page.getAppManifest');
    assert.equal(manifest.url, server.origin + '/manifest.webmanifest');
    assert.deepEqual(manifest.errors, []);
    await workerReady(page);
    const { installabilityErrors } = await cdp.send('Page.getInstallabilityErrors');
    // A Playwright context is an incognito profile, where Chromium installs nothing; that is the only
    // error allowed.
    assert.deepEqual(installabilityErrors.filter((e) => e.errorId !== 'in-incognito'), []);
    assert.deepEqual(await cspViolations(page), []);
    await page.context().close();
  });
});

// ---------------------------------------------------------------------------- the worker --

describe('the service worker', () => {
  it('is served at /sw.js, uncached, and registers with the scope /, activates and controls the page', async () => {
    const res = await fetch(server.origin + '/sw.js');
    assert.equal(res.status, 200);
    assert.equal(res.headers.get('content-type'), 'text/javascript; charset=utf-8');
    assert.equal(res.headers.get('cache-control'), 'no-cache');
    assert.match(res.headers.get('content-security-policy'), /worker-src 'self'/);

    const page = await openInbox(browser, server);
    const reg = await workerReady(page);
    assert.deepEqual(reg, { scope: server.origin + '/', script: server.origin + '/sw.js', state: 'activated' });
    assert.equal(await page.evaluate(() => navigator.serviceWorker.controller?.scriptURL), server.origin + '/sw.js');
    assert.deepEqual(await cspViolations(page), []);
    assert.deepEqual(page.errors, []);
    await page.context().close();
  });

  it('shows the app shell offline after one visit: the inbox, its other pages, the sign-in screen', async () => {
    const page = await openInbox(browser, server);
    await workerReady(page);
    await until(page, async () => (await caches.match('/')) !== undefined);
    const context = page.context();
    await context.setOffline(true);
    try {
      await page.reload();
      // The inbox, signed in from the token kept on the device, saying it has no network.
      await page.locator('.topbar .brand').waitFor();
      await page.locator('[data-conn="offline"], [data-conn="retrying"]').waitFor();
      assert.equal(page.url(), server.origin + '/');

      // A page of the inbox never opened before, in a new tab.
      const other = await context.newPage();
      await other.goto(server.origin + '/history');
      await other.locator('.topbar .brand').waitFor();
      await other.goto(server.origin + '/asks/ask_not_seen_yet');
      await other.locator('.topbar .brand').waitFor();

      // The sign-in screen, for someone signed out.
      await other.evaluate(() => localStorage.removeItem('loopback.token'));
      await other.goto(server.origin + '/');
      await other.getByRole('button', { name: 'Sign in' }).waitFor();

      // Nothing but the shell is the worker's: the API is the network's.
      await assert.rejects(other.evaluate(() => fetch('/api/v1/whoami').then((r) => r.status)), /Failed to fetch/);
      // A sign-in link carries a token: the worker does not answer it, and offline it fails as it
      // would with no worker (Chromium's error page).
      // (Another path than the page's: `/#token=` from `/` would change only the fragment, no request.)
      // (The worker hands the navigation preload's failure on: ERR_FAILED, where no worker gives
      // ERR_INTERNET_DISCONNECTED.)
      await assert.rejects(other.goto(server.origin + '/history#token=' + server.token), /ERR_INTERNET_DISCONNECTED|ERR_FAILED/);
    } finally {
      await context.setOffline(false);
    }
    // Back online, the page reconnects by itself.
    await page.locator('[data-conn="live"]').waitFor({ timeout: 20_000 });
    assert.deepEqual(page.errors, []);
    await context.close();
  });

  it('stores only the app shell: no API response, no uploaded file, nothing that carries a token', async () => {
    const p = project('cache');
    const shot = await uploadPng(agent);
    background(agent.call('request_review', {
      project: p,
      title: 'Check the chart',
      content: [{ type: 'markdown', text: 'The error rate:' }, { type: 'image', uploadId: shot, caption: 'Last 24 h' }],
    }));
    const ask = await waitForAsk(server, (a) => a.project === p);

    const page = await openInbox(browser, server);
    await workerReady(page);
    const responses = [];
    page.on('response', (r) => responses.push({ url: r.url(), fromWorker: r.fromServiceWorker(), type: r.request().resourceType() }));
    // Now controlled by the worker: a reload, the ask with its image (read from the API with the token).
    await page.reload();
    await page.locator('[data-conn="live"]').waitFor();
    await page.locator(`[data-ask-row="${ask.id}"]`).click();
    await page.waitForFunction(() => [...document.querySelectorAll('.ask-view img')].some((i) => i.src.startsWith('blob:') && i.complete && i.naturalWidth > 0));

    // The worker answered the page itself, and left every API request to the network.
    assert.ok(responses.some((r) => r.type === 'document' && r.url === server.origin + '/' && r.fromWorker), 'the page came through the worker');
    const api = responses.filter((r) => r.url.startsWith(server.origin + '/api/'));
    assert.ok(api.some((r) => r.url.includes('/api/v1/files/')), 'the image was read from the API');
    assert.deepEqual(api.filter((r) => r.fromWorker), [], 'no API response came from the worker');

    // What is stored: exactly this build's shell, in one cache.
    const byCache = await cachedUrls(page);
    const names = Object.keys(byCache);
    assert.equal(names.length, 1, names.join(', '));
    assert.match(names[0], /^loopback-shell-[0-9a-f]{16}$/);
    const stored = byCache[names[0]].map((u) => u.slice(server.origin.length)).sort();
    for (const u of stored) assert.doesNotMatch(u, /^\/api\/|^\/mcp|token|^\/sw\.js/i, u);
    const html = await (await fetch(server.origin + '/')).text();
    const assets = [...html.matchAll(/(?:src|href)="(\/assets\/[^"]+)"/g)].map((m) => m[1]);
    assert.ok(assets.length >= 2, 'a script and a stylesheet');
    // The chunks the first script loads later (highlight.js, issue 29), kept for offline use too.
    const entry = assets.find((a) => a.endsWith('.js'));
    const script = await (await fetch(server.origin + entry)).text();
    const lazy = [...new Set([...script.matchAll(/["'`]\.\/([\w.-]+\.js)["'`]/g)].map((m) => '/assets/' + m[1]))];
    assert.ok(lazy.some((u) => /^\/assets\/hljs-/.test(u)), `highlight.js is a chunk of its own: ${lazy.join(', ')}`);
    assert.deepEqual(stored, ['/', ...assets, ...lazy, '/favicon.svg', ...ICONS, '/manifest.webmanifest'].sort());
    await page.context().close();
  });
});

// -------------------------------------------------------------------------------- web push --

describe('Web Push', () => {
  it('shows a push as the ask’s notification when no inbox window has the focus, none when one has; a click opens the ask', async () => {
    const context = await browser.newContext({ viewport: { width: 1280, height: 800 } });
    await context.grantPermissions(['notifications'], { origin: server.origin });
    const page = await signedIn(context);
    await workerReady(page);
    const sw = await registration(page);

    const p = 'billing-service';
    background(agent.call('ask_question', {
      project: p,
      question: 'Should the webhook retry queue use **exponential backoff** or a fixed delay?',
      options: [{ label: 'Exponential backoff' }, { label: 'Fixed 30 s delay' }],
    }));
    const ask = await waitForAsk(server, (a) => a.project === p);
    // Exactly what the server pushes (PushNotice in spec/main.tsp).
    const payload = {
      askId: ask.id,
      title: `${p} asks`,
      body: 'Should the webhook retry queue use exponential backoff or a fixed delay?',
      tag: `ask-${ask.id}`,
      url: `/asks/${ask.id}`,
    };

    // The person is looking at the inbox (Playwright's page has the focus): no notification.
    await deliver(sw, { ...payload, tag: 'while-focused' });
    await page.waitForTimeout(800);
    assert.deepEqual(await notifications(page), []);

    // Another window in front: the inbox has lost the focus, and the push shows. (Playwright tells
    // every page it has the focus; that is turned off for this one, so that it can lose it.)
    await sw.cdp.send('Emulation.setFocusEmulationEnabled', { enabled: false });
    const elsewhere = await context.newPage();
    await elsewhere.goto('about:blank');
    await elsewhere.bringToFront();
    await deliverWhileAway(page, sw, server.origin, JSON.stringify(payload), payload.tag);
    const shown = await notifications(page);
    assert.deepEqual(shown, [{
      title: payload.title,
      body: payload.body,
      tag: payload.tag,
      data: { url: payload.url, askId: ask.id },
      icon: server.origin + '/icons/icon-192.png',
      badge: server.origin + '/icons/badge-96.png',
    }]);

    // The ask comes back to the person: the newer notice replaces the older (same tag).
    await deliver(sw, { ...payload, body: 'The agent answered your question back.' });
    await until(page, async (tag) => {
      const n = await (await navigator.serviceWorker.ready).getNotifications({ tag });
      return n.length === 1 && n[0].body === 'The agent answered your question back.';
    }, payload.tag);
    assert.equal((await notifications(page)).length, 1);

    // A click: the worker's click handler (run through its test message: headless Chromium draws no
    // notification to click) opens the ask in the inbox window already open, in place.
    await page.evaluate(() => {
      window.__samePage = true;
    });
    await page.evaluate((tag) => navigator.serviceWorker.controller.postMessage({ type: 'loopback.test-notificationclick', tag }), payload.tag);
    await page.waitForURL(server.origin + `/asks/${ask.id}`);
    await page.locator('.ask-view').getByRole('button', { name: 'Exponential backoff' }).waitFor();
    assert.equal(await page.evaluate(() => window.__samePage), true, 'opened without a reload');
    assert.deepEqual(await notifications(page), [], 'the clicked notification is closed');
    assert.equal(context.pages().length, 2, 'no new window');
    assert.deepEqual(page.errors, []);

    // The notification as it would look (headless Chromium draws none): drawn by the test from the
    // one Chromium held, its title, body and icon.
    await drawNotification(shown[0]);
    await context.close();
  });

  it('the bell says so when this server has no Web Push (a 404 on its routes), and offers the in-tab notifications instead', async () => {
    const context = await browser.newContext({ viewport: { width: 1280, height: 800 } });
    const page = await context.newPage();
    // An older Loopback: the push routes are not there.
    await page.route('**/api/v1/push/**', (r) =>
      r.fulfill({ status: 404, contentType: 'application/json', body: JSON.stringify({ code: 'route.not_found', message: 'no such endpoint' }) }),
    );
    await page.goto(server.origin + '/#token=' + server.token);
    await bellState(page, 'unsupported');
    assert.equal(await page.locator('.bell-btn').getAttribute('aria-label'), 'Notifications: not sent by this server');
    const menu = await openBell(page);
    await menu.getByText('This Loopback sends no notifications').waitFor();
    await menu.getByRole('button', { name: 'Notify me while this tab is open' }).waitFor();
    await page.keyboard.press('Escape');
    await menu.waitFor({ state: 'detached' });
    await context.close();
  });

  it('the bell sends an iPhone in Safari to the Home Screen first', async () => {
    const context = await browser.newContext({ ...PHONE, userAgent: IPHONE_SAFARI });
    const page = await signedIn(context);
    await bellState(page, 'ios-home-screen');
    const menu = await openBell(page);
    await menu.getByText('iPhone/iPad: add Loopback to your Home Screen first').waitFor();
    await menu.getByText(/tap Share, then Add to Home Screen/).waitFor();
    assert.equal(await menu.getByRole('button').count(), 0, 'nothing to turn on here');
    await shoot(page, 'push-bell-ios');
    await context.close();
  });

  it('the bell says notifications are blocked, and how to allow them', async () => {
    const context = await browser.newContext({ viewport: { width: 1280, height: 800 } });
    const cdp = await browser.newBrowserCDPSession();
    await cdp.send('Browser.setPermission', { permission: { name: 'notifications' }, setting: 'denied', origin: server.origin, browserContextId: await contextId(context) });
    const page = await context.newPage();
    await page.goto(server.origin + '/#token=' + server.token);
    await bellState(page, 'denied');
    const menu = await openBell(page);
    await menu.getByText('Notifications are blocked').waitFor();
    await menu.getByText(/set Notifications to Allow/).waitFor();
    await context.close();
  });

  it('the bell turns Web Push on and off for this device, with the server’s key and its id for the subscription', async (t) => {
    const publicKey = (await server.api('GET', '/push/key')).body.publicKey;
    assert.equal(Buffer.from(publicKey, 'base64url').length, 65);
    const context = await browser.newContext({ viewport: { width: 1280, height: 800 } });
    await context.grantPermissions(['notifications'], { origin: server.origin });
    await fakePushManager(context);
    const page = await signedIn(context);
    const push = [];
    page.on('response', (r) => {
      if (r.url().includes('/api/v1/push/subscriptions')) push.push({ method: r.request().method(), url: r.url(), status: r.status(), body: r.request().postDataJSON?.() });
    });
    const kept = () => page.evaluate(() => Object.entries(localStorage).filter(([k]) => k.startsWith('loopback.push.')).map(([, v]) => JSON.parse(v)));

    await bellState(page, 'off');
    let menu = await openBell(page);
    await menu.getByText('Off for this device').waitFor();
    await menu.getByRole('button', { name: 'Turn on for this device' }).click();
    await bellState(page, 'on');
    const sub = await page.evaluate(() => window.__push.subscription);
    // Subscribed with the server's key, and registered as PushSubscription.toJSON() gives it.
    assert.deepEqual(Buffer.from(sub.key).toString('base64url'), publicKey);
    const posted = push.find((r) => r.method === 'POST');
    assert.equal(posted.status, 201);
    assert.equal(posted.body.endpoint, sub.endpoint);
    assert.equal(posted.body.expirationTime, null);
    assert.deepEqual(Object.keys(posted.body.keys).sort(), ['auth', 'p256dh']);
    const [record] = await kept();
    assert.match(record.id, /^push_/);
    assert.equal(record.endpoint, sub.endpoint);
    menu = page.locator('#bell-menu');
    await menu.getByText('On for this device').waitFor();

    // A reload knows the subscription by its id: on.
    await page.reload();
    await bellState(page, 'on');
    // A subscription whose id this sign-in does not know is not shown as on.
    await page.evaluate(() => {
      for (const k of Object.keys(localStorage)) if (k.startsWith('loopback.push.')) localStorage.removeItem(k);
    });
    await page.reload();
    await bellState(page, 'off');

    // On again (the browser's subscription is reused), then off: DELETE by the id, and unsubscribed.
    await (await openBell(page)).getByRole('button', { name: 'Turn on for this device' }).click();
    await bellState(page, 'on');
    const [again] = await kept();
    await page.locator('#bell-menu').getByRole('button', { name: 'Turn off for this device' }).click();
    await bellState(page, 'off');
    const deleted = push.find((r) => r.method === 'DELETE');
    assert.deepEqual([deleted.url, deleted.status], [`${server.origin}/api/v1/push/subscriptions/${encodeURIComponent(again.id)}`, 204]);
    assert.deepEqual(await kept(), []);
    assert.equal(await page.evaluate(() => window.__push.subscription), null);
    assert.deepEqual(page.errors, []);
    await context.close();
  });

  it('the bell shows the server’s reason when it refuses a subscription (422), and keeps none', async (t) => {
    const context = await browser.newContext({ viewport: { width: 1280, height: 800 } });
    await context.grantPermissions(['notifications'], { origin: server.origin });
    await fakePushManager(context, { p256dh: 'AAAA', auth: 'AAAA' }); // not a P-256 point, not 16 bytes
    const page = await signedIn(context);
    await bellState(page, 'off');
    const refused = page.waitForResponse((r) => r.url().endsWith('/api/v1/push/subscriptions') && r.request().method() === 'POST');
    await (await openBell(page)).getByRole('button', { name: 'Turn on for this device' }).click();
    const res = await refused;
    assert.equal(res.status(), 422);
    const problem = await res.json();
    assert.equal(problem.code, 'push.invalid');
    await bellState(page, 'off');
    await page.locator('#bell-menu .bell-note').getByText(problem.message).waitFor();
    assert.equal(await page.evaluate(() => window.__push.subscription), null, 'the subscription the server refused was dropped');
    await context.close();
  });

  it('signing out takes this device off the server and out of the browser', async (t) => {
    const context = await browser.newContext({ viewport: { width: 1280, height: 800 } });
    await context.grantPermissions(['notifications'], { origin: server.origin });
    await fakePushManager(context);
    const page = await signedIn(context);
    await bellState(page, 'off');
    await (await openBell(page)).getByRole('button', { name: 'Turn on for this device' }).click();
    await bellState(page, 'on');
    await page.keyboard.press('Escape');
    const gone = page.waitForResponse((r) => r.url().includes('/api/v1/push/subscriptions/') && r.request().method() === 'DELETE');
    await page.locator('.account-btn').click();
    await page.getByRole('button', { name: 'Sign out' }).click();
    assert.equal((await gone).status(), 204);
    await page.waitForFunction(() => window.__push.subscription === null);
    assert.equal(await page.evaluate(() => Object.keys(localStorage).some((k) => k.startsWith('loopback.push.'))), false);
    await context.close();
  });
});

describe('Web Push, end to end', () => {
  it('an ask an agent opens is pushed by the server, through a push service, to the worker, and shown', async (t) => {
    // A server of its own that may push to a push service on this machine (over http, on a loopback
    // address: for tests only).
    process.env.LOOPBACK_PUSH_TEST_LOOPBACK = '1';
    const own = new Server();
    try {
      await own.start();
    } finally {
      delete process.env.LOOPBACK_PUSH_TEST_LOOPBACK;
    }
    const keys = browserKeys();
    const service = await pushService(keys);
    const context = await browser.newContext({ viewport: { width: 1280, height: 800 } });
    try {
      await context.grantPermissions(['notifications'], { origin: own.origin });
      await fakePushManager(context, keys, service.endpoint);
      const page = await context.newPage();
      await page.goto(own.origin + '/#token=' + own.token);
      await page.locator('[data-conn="live"]').waitFor();
      await bellState(page, 'off');
      const posted = page.waitForResponse((r) => r.url().endsWith('/api/v1/push/subscriptions') && r.request().method() === 'POST');
      await (await openBell(page)).getByRole('button', { name: 'Turn on for this device' }).click();
      assert.equal((await posted).status(), 201, 'the server stores the subscription (the tests\' switch lets it reach 127.0.0.1)');
      await bellState(page, 'on');

      const ownAgent = await new Agent(own, { name: 'claude-code', version: '2.1.0' }).init();
      background(ownAgent.call('ask_question', { project: 'billing-service', question: 'Should the webhook **retry** with backoff?' }));
      const ask = await waitForAsk(own, (a) => a.project === 'billing-service');
      const push = await service.next();
      assert.match(push.headers.authorization ?? '', /^vapid t=[\w-]+\.[\w-]+\.[\w-]+, k=[\w-]+$/);
      const notice = JSON.parse(push.text);
      // Revision 2's fields, and revision 4's project and group (a question in words has no buttons).
      assert.deepEqual(Object.keys(notice).sort(), ['askId', 'body', 'group', 'project', 'tag', 'title', 'url']);
      assert.deepEqual([notice.askId, notice.tag, notice.url, notice.project], [ask.id, `ask-${ask.id}`, `/asks/${ask.id}`, 'billing-service']);
      assert.match(notice.group, /^project-[\w-]+$/);
      assert.match(notice.title, /billing-service/);
      assert.match(notice.body, /webhook/);

      // The push service's hop to the browser: the very bytes it decrypted, to the worker.
      const sw = await registration(page, own.origin);
      await sw.cdp.send('Emulation.setFocusEmulationEnabled', { enabled: false });
      const elsewhere = await context.newPage();
      await elsewhere.goto('about:blank');
      await elsewhere.bringToFront();
      // One notification per project: its tag is the group's.
      await deliverWhileAway(page, sw, own.origin, push.text, notice.group);
      const [shown] = await notifications(page, notice.group);
      assert.deepEqual([shown.title, shown.body, shown.data.url], [notice.title, notice.body, notice.url]);
      await page.evaluate((tag) => navigator.serviceWorker.controller.postMessage({ type: 'loopback.test-notificationclick', tag }), notice.group);
      await page.waitForURL(own.origin + notice.url);
    } finally {
      await context.close();
      await service.close();
      await own.dispose();
    }
  });
});

// ----------------------------------------------------------------------------- screenshots --

describe('screenshots', () => {
  it('the bell, off and on, on a phone', async () => {
    const context = await browser.newContext({ ...PHONE });
    await context.grantPermissions(['notifications'], { origin: server.origin });
    await fakePushManager(context);
    const page = await context.newPage();
    await page.goto(server.origin + '/#token=' + server.token);
    await page.locator('[data-conn="live"]').waitFor();
    await bellState(page, 'off');
    await openBell(page);
    await shoot(page, 'push-bell-off');
    await page.locator('#bell-menu').getByRole('button', { name: 'Turn on for this device' }).tap();
    await bellState(page, 'on');
    // The toast goes; the menu stays open.
    await page.locator('.toast').waitFor({ state: 'detached', timeout: 10_000 });
    await shoot(page, 'push-bell-on');
    await context.close();
  });
});

/**
 * A notification drawn as a phone shows one, from what Chromium holds for it (headless Chromium
 * draws no notification itself). Written to push-notification.png.
 */
async function drawNotification(n) {
  const page = await browser.newPage({ viewport: { width: 390, height: 260 }, deviceScaleFactor: 2 });
  const icon = Buffer.from(await (await fetch(n.icon)).arrayBuffer()).toString('base64');
  const esc = (s) => s.replace(/[&<>"]/g, (c) => `&#${c.charCodeAt(0)};`);
  await page.setContent(`<!doctype html><html><body>
    <style>
      body { margin: 0; height: 100vh; background: linear-gradient(160deg, #312e81, #0f172a); font: 14px/1.35 system-ui, sans-serif; }
      .card { margin: 28px 14px 0; padding: 12px 14px; border-radius: 20px; background: rgba(245, 246, 248, 0.94); color: #15181d; display: flex; gap: 12px; box-shadow: 0 8px 24px rgba(0,0,0,.3); }
      .card img { width: 38px; height: 38px; border-radius: 9px; flex: none; }
      .top { display: flex; justify-content: space-between; color: #5a6371; font-size: 12px; }
      .title { font-weight: 650; margin-top: 1px; }
      .note { margin: 14px 18px; color: #c7d2fe; font-size: 11px; }
    </style>
    <div class="card"><img src="data:image/png;base64,${icon}" alt="">
      <div><div class="top"><span>Loopback</span><span>now</span></div>
      <div class="title">${esc(n.title)}</div><div>${esc(n.body)}</div></div></div>
    <p class="note">Drawn by the browser test from the notification the service worker showed in headless Chromium
    (registration.getNotifications(): title, body, icon; tag ${esc(n.tag)}, opens ${esc(n.data.url)}).</p>
  </body></html>`);
  await page.screenshot({ path: join(OUT, 'push-notification.png') });
  await page.close();
}

/** The DevTools id of a Playwright context, for Browser.setPermission. */
async function contextId(context) {
  const page = await context.newPage();
  const cdp = await context.newCDPSession(page);
  const { targetInfo } = await cdp.send('Target.getTargetInfo');
  await page.close();
  return targetInfo.browserContextId;
}
