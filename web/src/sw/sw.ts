// The inbox's service worker, served at /sw.js with the scope `/` (built by vite.config.ts into
// dist/sw.js, a classic script). It does two things:
//
// - Offline: when it is installed it stores the app shell (index.html, as `/`, and this build's
//   hashed assets, icons and manifest, listed by the build in SHELL) in a cache named after the
//   build. The inbox's pages come from the network and, when that fails, from that cache; the shell's
//   files come from the cache. Nothing else is ever stored or answered: the API, the event socket,
//   MCP, and anything that carries a token go straight to the network (policy.ts, routeRequest).
//   (The page itself keeps its last snapshot of the asks in a cache of its own, for an offline
//   load: effects/offline.ts. The worker neither reads nor deletes it.)
// - Web Push: a push from Loopback (an ask needs the person) becomes a notification, unless an
//   inbox window has the focus, since that already shows the ask. A click brings an inbox window
//   forward on the ask, or opens one. From revision 4, a project's asks share one notification
//   (with how many wait), its buttons answer the ask on top (each POSTs the signed action link the
//   push carried for this device's person), and an ask answered or closed elsewhere leaves it.
//
// The worker never sees the token: it is in the page's localStorage, which a worker cannot read, and
// the worker makes no request of its own but the shell's, and the action links a push gave it.

import {
  ACTION_BODY,
  actionFor,
  CACHE_PREFIX,
  groupData,
  groupedNotification,
  inboxFocused,
  noticePath,
  notificationFor,
  OPEN_MESSAGE,
  parseNotice,
  pickWindow,
  routeRequest,
  shouldCache,
  TEST_CLICK_MESSAGE,
  type PushNotice,
} from './policy';

declare const self: ServiceWorkerGlobalScope;
/** The shell's paths, from the build. */
declare const SHELL: string[];
/** A hash of the shell's contents, from the build: a new build is a new worker with a new cache. */
declare const VERSION: string;

const CACHE = CACHE_PREFIX + VERSION;
const ORIGIN = self.location.origin;
/** How long a page's request waits for the network before the cached shell answers it. */
const NAVIGATION_TIMEOUT_MS = 4000;

self.addEventListener('install', (e) => {
  e.waitUntil(
    (async () => {
      const cache = await caches.open(CACHE);
      const urls = SHELL.map((p) => new URL(p, ORIGIN).href).filter((url) => shouldCache({ method: 'GET', url }, ORIGIN));
      // 'reload': past the HTTP cache, so the shell is this build's, all of it or nothing.
      await cache.addAll(urls.map((url) => new Request(url, { cache: 'reload', credentials: 'omit' })));
      // The shell is one page with one script: nothing an older page loaded is missing from the new
      // cache in a way that could break it, so the new worker takes over at once.
      await self.skipWaiting();
    })(),
  );
});

self.addEventListener('activate', (e) => {
  e.waitUntil(
    (async () => {
      for (const name of await caches.keys()) {
        if (name.startsWith(CACHE_PREFIX) && name !== CACHE) await caches.delete(name);
      }
      // A page's request for the inbox starts at once, while the worker is starting.
      await self.registration.navigationPreload?.enable();
      // The page that registered the worker is served by it from now on, not from its next load.
      await self.clients.claim();
    })(),
  );
});

self.addEventListener('fetch', (e) => {
  const r = e.request;
  const how = routeRequest({ method: r.method, url: r.url, mode: r.mode, authorization: r.headers.has('Authorization') }, ORIGIN);
  if (how === 'network') {
    // A navigation the worker does not serve (a sign-in protocol's page, a tokened link): the
    // navigation preload has asked the network already, so its answer is the answer. Left
    // unanswered, the browser would ask the server a second time, and a one-time address (single
    // sign-on's callback) would be spent by the first request and refused to the second.
    if (r.mode === 'navigate') e.respondWith(preloaded(e));
    return; // otherwise not answered: the browser goes to the network as without a worker
  }
  e.respondWith(how === 'navigate' ? page(e) : shellFile(r));
});

/** A navigation's answer from the network: the navigation preload's, or else a fetch of its own. */
async function preloaded(e: FetchEvent): Promise<Response> {
  return (await e.preloadResponse) ?? fetch(e.request);
}

/** One of the inbox's pages: the network's answer, or the cached shell when the network fails or hangs. */
async function page(e: FetchEvent): Promise<Response> {
  const fromNetwork = (async () => (await e.preloadResponse) ?? fetch(e.request))();
  fromNetwork.catch(() => {}); // it may lose the race below; its failure is not an error then
  const timeout = new Promise<null>((resolve) => setTimeout(() => resolve(null), NAVIGATION_TIMEOUT_MS));
  try {
    const res = await Promise.race([fromNetwork, timeout]);
    if (res) return res;
  } catch {
    // offline, or the server is down
  }
  const shell = await caches.match('/', { cacheName: CACHE });
  return shell ?? fromNetwork;
}

async function shellFile(r: Request): Promise<Response> {
  return (await caches.match(r, { cacheName: CACHE })) ?? fetch(r);
}

// ------------------------------------------------------------------------------------ push --

self.addEventListener('push', (e) => {
  e.waitUntil(showNotice(e.data));
});

async function showNotice(data: PushMessageData | null): Promise<void> {
  let text: string | null = null;
  try {
    text = data ? data.text() : null;
  } catch {
    // unreadable: the generic notice
  }
  const notice = parseNotice(text);
  if (notice.group) return showGrouped(notice);
  const { title, options } = notificationFor(notice);
  const windows = await self.clients.matchAll({ type: 'window', includeUncontrolled: true });
  // The person is looking at the inbox, which shows the ask live: no notification on top of it.
  // (Chromium asks for a notification per push only when no page of the site is visible.)
  if (inboxFocused(windows, ORIGIN)) return;
  await self.registration.showNotification(title, options);
}

/** How many buttons this platform shows on a notification: 0 where it shows none (iOS). */
function maxActions(): number {
  const n = (self as unknown as { Notification?: { maxActions?: number } }).Notification;
  return typeof n?.maxActions === 'number' ? n.maxActions : 0;
}

/**
 * A revision-4 notice: its project's one notification, updated in place (policy.ts,
 * groupedNotification). An update of an ask answered or closed elsewhere is silent, and is shown
 * even while an inbox window has the focus, so that no notification says an ask waits once it is
 * answered.
 */
async function showGrouped(notice: PushNotice): Promise<void> {
  const tag = notice.group!;
  const [current] = await self.registration.getNotifications({ tag });
  const rings = !notice.answered && !notice.closed;
  if (rings) {
    const windows = await self.clients.matchAll({ type: 'window', includeUncontrolled: true });
    if (inboxFocused(windows, ORIGIN)) return;
  }
  const next = groupedNotification(groupData(current?.data), notice, { maxActions: maxActions() });
  if (next === undefined) {
    // Nothing on this device shows the ask (answered here, or never shown). A push must show a
    // notification, or Chromium soon shows one of its own: the group's, if any, is shown again as
    // it is, silently.
    if (current && !rings) {
      const c = current as Notification & { actions?: { action: string; title: string }[] };
      await self.registration.showNotification(c.title, {
        body: c.body, tag, data: c.data, icon: c.icon, badge: c.badge, silent: true, lang: c.lang,
        ...(c.actions?.length ? { actions: c.actions.map(({ action, title }) => ({ action, title })) } : {}),
      } as NotificationOptions);
    }
    return;
  }
  if (next === null) {
    current?.close();
    return;
  }
  await self.registration.showNotification(next.title, next.options);
}

self.addEventListener('notificationclick', (e) => {
  e.notification.close();
  const done = e.action ? answerFrom(e.notification, e.action) : openNotice(e.notification.data);
  try {
    e.waitUntil(done);
  } catch {
    // An event the page did not get from the browser (the browser tests dispatch one in the worker,
    // since headless Chromium draws no notification to click) cannot be extended; it runs all the same.
  }
});

/**
 * A button of a notification: the answer it offers, given by POSTing its signed action link (no
 * session, no inbox window: the link is the credential, for this device's person, once). Then
 * the group's notification shows what was answered (or the next ask of the project waiting);
 * when the link is refused (expired, used, the ask answered meanwhile) or the network fails, the
 * ask opens in the inbox instead.
 */
async function answerFrom(n: Notification, action: string): Promise<void> {
  const found = actionFor(n.data, action);
  if (!found) return openNotice(n.data);
  let ok = false;
  try {
    const res = await fetch(new URL(found.url, ORIGIN).href, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: ACTION_BODY,
      credentials: 'omit',
      cache: 'no-store',
      redirect: 'error',
    });
    ok = res.ok;
  } catch {
    // offline, or the server is down: the ask opens
  }
  if (!ok) return openNotice({ url: found.ask.url, askId: found.ask.askId });
  const d = groupData(n.data)!;
  const chosen = found.ask.actions?.find((a) => a.action === action)?.title ?? '';
  const answered: PushNotice = {
    askId: found.ask.askId,
    title: found.ask.title,
    body: chosen ? `You answered: ${chosen}` : 'Answered',
    tag: d.group,
    url: found.ask.url,
    group: d.group,
    answered: { via: 'push', at: new Date().toISOString() },
  };
  const next = groupedNotification(d, answered, { maxActions: maxActions() });
  if (next) await self.registration.showNotification(next.title, next.options);
}

/**
 * Opens what a notification leads to: in an inbox window already open (brought forward, and told to
 * open the ask in place, without reloading), else in a new window.
 */
async function openNotice(data: unknown): Promise<void> {
  const path = noticePath(data);
  const url = new URL(path, ORIGIN).href;
  const windows = await self.clients.matchAll({ type: 'window', includeUncontrolled: true });
  const i = pickWindow(windows, ORIGIN);
  if (i >= 0) {
    const w = windows[i] as WindowClient;
    try {
      await w.focus();
    } catch {
      // not allowed outside a click (the test hook): the window is opened on the ask all the same
    }
    if (await openInPlace(w, path)) return;
    try {
      // A page that did not answer (an older build): load the ask in it. Only a page this worker
      // controls can be navigated.
      if (await w.navigate(url)) return;
    } catch {
      // not controlled: a new window
    }
  }
  await self.clients.openWindow(url);
}

/** Asks an inbox page to open a path itself; true once it says it did. */
function openInPlace(w: WindowClient, path: string): Promise<boolean> {
  return new Promise((resolve) => {
    const channel = new MessageChannel();
    const timer = setTimeout(() => resolve(false), 1500);
    channel.port1.onmessage = () => {
      clearTimeout(timer);
      resolve(true);
    };
    try {
      w.postMessage({ type: OPEN_MESSAGE, path }, [channel.port2]);
    } catch {
      clearTimeout(timer);
      resolve(false);
    }
  });
}

self.addEventListener('message', (e) => {
  const m = e.data as { type?: unknown; tag?: unknown; action?: unknown } | null;
  if (m?.type !== TEST_CLICK_MESSAGE || typeof m.tag !== 'string') return;
  const tag = m.tag;
  const action = typeof m.action === 'string' ? m.action : '';
  e.waitUntil(
    (async () => {
      for (const n of await self.registration.getNotifications({ tag })) {
        n.close();
        await (action ? answerFrom(n, action) : openNotice(n.data));
      }
    })(),
  );
});

// A browser that renews a subscription by itself (Firefox does) fires this. The worker has no token
// to tell the server, so it only subscribes again with the same key; the page, on its next load,
// sees a subscription it does not know and registers it (state.ts, checkPush).
self.addEventListener('pushsubscriptionchange', (e) => {
  const ev = e as PushSubscriptionChangeEvent;
  const options = ev.oldSubscription?.options;
  if (ev.newSubscription || !options?.applicationServerKey) return;
  ev.waitUntil(
    self.registration.pushManager
      .subscribe({ userVisibleOnly: true, applicationServerKey: options.applicationServerKey })
      .then(() => undefined, () => undefined),
  );
});
