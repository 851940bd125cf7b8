// The service worker's decisions, as plain functions (unit tested in test/unit/push.test.ts): which
// requests it may answer from its cache, what a push becomes as a notification, and which window a
// click on one goes to. sw.ts does the I/O. Nothing here may need the DOM or the worker's globals:
// this module is type-checked and bundled for both.

import { carriesToken } from '../tokens';

/** Every cache this worker makes is named with this prefix and the build's version. */
export const CACHE_PREFIX = 'loopback-shell-';

/**
 * The inbox's own pages, served index.html: `/`, `/history`, `/rules`, `/asks/{id}`. The same rule as
 * web.IsAppRoute (web/embed.go), so offline the worker answers exactly the paths the server would.
 */
export function isAppPath(p: string): boolean {
  if (p === '/' || p === '/history' || p === '/history/' || p === '/rules' || p === '/rules/') return true;
  if (!p.startsWith('/asks/')) return false;
  const id = p.slice('/asks/'.length).replace(/\/$/, '');
  return id !== '' && !id.includes('/');
}

/** What the worker needs to know of a request (a Request is one). */
export interface RequestFacts {
  method: string;
  url: string;
  mode?: string;
  /** Whether it carries an Authorization header. */
  authorization?: boolean;
}

/**
 * What the worker does with a request:
 * - 'network': nothing. It goes to the network as if there were no worker, and is never stored.
 *   This is everything that is not the app shell: the API (`/api/…`, its event socket and files),
 *   MCP, any other origin, anything but GET, anything with credentials (an Authorization header, or
 *   `token` in its query or fragment, such as the sign-in link `/#token=lb_…`).
 * - 'navigate': one of the inbox's pages. From the network (so a new build shows at once), and
 *   from the cached shell when the network fails.
 * - 'shell': a file of the shell (the hashed assets, the icons, the manifest): from the cache,
 *   which the worker filled when it was installed, else from the network (and not stored).
 */
export function routeRequest(r: RequestFacts, origin: string): 'network' | 'navigate' | 'shell' {
  if (r.method !== 'GET' || r.authorization) return 'network';
  let u: URL;
  try {
    u = new URL(r.url);
  } catch {
    return 'network';
  }
  if (u.origin !== origin || carriesToken(r.url)) return 'network';
  const p = u.pathname;
  if (p === '/api' || p.startsWith('/api/') || p === '/mcp' || p.startsWith('/mcp/') || p === '/sw.js') return 'network';
  if (isAppPath(p)) return u.search === '' && (r.mode === undefined || r.mode === 'navigate') ? 'navigate' : 'network';
  return u.search === '' ? 'shell' : 'network';
}

/**
 * Whether the worker may store a response to this request in its cache. Only the shell ever is,
 * once, when the worker is installed; this is checked there too, so a mistake in the shell's list
 * can never put an API response or a tokened address in a cache.
 */
export function shouldCache(r: RequestFacts, origin: string): boolean {
  return routeRequest(r, origin) !== 'network';
}

// ----------------------------------------------------------------------------------- push --

/**
 * What the server pushes when an ask needs the person (PushNotice in spec/main.tsp): exactly
 * `{askId, title, body, tag, url}`.
 */
export interface PushNotice {
  askId: string;
  title: string;
  body: string;
  tag: string;
  url: string;
}

/** NotificationOptions with the members TypeScript's lib leaves out but browsers read. */
export interface ShownOptions extends NotificationOptions {
  /** Alert again when a notice replaces one with the same tag (the ask came back to the person). */
  renotify?: boolean;
  timestamp?: number;
}

export const ICON = '/icons/icon-192.png';
export const BADGE = '/icons/badge-96.png';
const TITLE_MAX = 120;
const BODY_MAX = 300;

/**
 * A push's data as a notice. The server sends JSON; anything else (or a field missing) still makes a
 * notification, a generic one opening the inbox, because a browser may withdraw the subscription of
 * a site whose pushes show nothing.
 */
export function parseNotice(text: string | null | undefined): PushNotice {
  let v: Record<string, unknown> = {};
  try {
    const parsed: unknown = JSON.parse(text ?? '');
    if (parsed && typeof parsed === 'object') v = parsed as Record<string, unknown>;
  } catch {
    // not JSON: the generic notice
  }
  const str = (x: unknown) => (typeof x === 'string' ? x.trim() : '');
  const askId = str(v.askId);
  return {
    askId,
    title: str(v.title) || 'Loopback',
    body: str(v.body) || 'An agent is waiting on you.',
    tag: str(v.tag) || (askId ? `ask-${askId}` : 'loopback'),
    url: noticePath({ url: v.url, askId }),
  };
}

/**
 * Where a notice leads: its `url` when that is one of the inbox's pages on this origin (a path, no
 * query, no fragment, no token), else the ask by its id, else the inbox. A push is the server's, but
 * a click must never lead anywhere else.
 */
export function noticePath(data: unknown): string {
  const d = (data && typeof data === 'object' ? data : {}) as { url?: unknown; askId?: unknown };
  if (typeof d.url === 'string' && /^\/(?![/\\])[^?#\s]*$/.test(d.url) && !carriesToken(d.url)) {
    try {
      const u = new URL(d.url, 'https://inbox.invalid');
      if (u.origin === 'https://inbox.invalid' && isAppPath(u.pathname)) return u.pathname;
    } catch {
      // not a path
    }
  }
  if (typeof d.askId === 'string' && d.askId && !d.askId.includes('/')) return '/asks/' + encodeURIComponent(d.askId);
  return '/';
}

/** A notice as the notification shown: its title and body (cut short), tag, where it leads, icons. */
export function notificationFor(n: PushNotice, now = Date.now()): { title: string; options: ShownOptions } {
  return {
    title: cut(n.title, TITLE_MAX),
    options: {
      body: cut(n.body, BODY_MAX),
      tag: n.tag,
      renotify: true,
      data: { url: n.url, askId: n.askId },
      icon: ICON,
      badge: BADGE,
      lang: 'en',
      timestamp: now,
    },
  };
}

function cut(s: string, max: number): string {
  const chars = Array.from(s);
  return chars.length <= max ? s : chars.slice(0, max - 1).join('').trimEnd() + '…';
}

// ---------------------------------------------------------------------------------- windows --

/** What the worker knows of a window (a WindowClient is one). */
export interface WindowFacts {
  url: string;
  focused: boolean;
  visibilityState?: string;
}

/** Whether a window shows the inbox: one of its pages, on this origin. */
export function isInboxWindow(w: WindowFacts, origin: string): boolean {
  try {
    const u = new URL(w.url);
    return u.origin === origin && isAppPath(u.pathname);
  } catch {
    return false;
  }
}

/**
 * Whether the person is looking at the inbox right now: then a push shows no notification, since
 * the page already shows the ask live.
 */
export function inboxFocused(windows: readonly WindowFacts[], origin: string): boolean {
  return windows.some((w) => w.focused && isInboxWindow(w, origin));
}

/**
 * The inbox window a click should bring forward, by its index: the focused one, else a visible one,
 * else the first (browsers list the most recently focused first); -1 when there is none, and a new
 * window is opened.
 */
export function pickWindow(windows: readonly WindowFacts[], origin: string): number {
  const inbox = windows.map((w, i) => ({ w, i })).filter(({ w }) => isInboxWindow(w, origin));
  const best = inbox.find(({ w }) => w.focused) ?? inbox.find(({ w }) => w.visibilityState === 'visible') ?? inbox[0];
  return best ? best.i : -1;
}

/** The message a window gets to open an ask in place (no reload), and answers on the port sent with it. */
export const OPEN_MESSAGE = 'loopback.open';

/**
 * A message from a page of the inbox asking the worker to act as if the person had clicked the
 * notification with this tag. Headless Chromium (the browser tests) draws no notification and has
 * no way to click one; this runs the very same click handler. It can do nothing the page could not
 * do itself (bring an inbox window forward and open an ask in it).
 */
export const TEST_CLICK_MESSAGE = 'loopback.test-notificationclick';
