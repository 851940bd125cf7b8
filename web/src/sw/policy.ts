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
  if (p === '/' || p === '/history' || p === '/history/' || p === '/rules' || p === '/rules/' || p === '/settings' || p === '/settings/' || p === '/act' || p === '/act/') return true;
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
 * - 'network': nothing. It goes to the network as if there were no worker, and is never stored
 *   (a navigation among them is answered with the navigation preload's response, so that the
 *   server is asked once: a single sign-on callback is good for one request).
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
  // The sign-in protocols' own pages (single sign-on's /auth/oidc/*, MCP OAuth's /oauth/*): the
  // server's, never the shell's.
  if (p.startsWith('/auth/') || p.startsWith('/oauth/')) return 'network';
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
  // Revision 4 (each present only when the server sent it):
  /** The ask's project. */
  project?: string;
  /** The tag a project's asks share: one notification per project, with a count. */
  group?: string;
  /** Answers offered as buttons, each POSTing its own signed action link. */
  actions?: PushAction[];
  /** The ask was answered (on any surface): a notification still showing it says who, where, when. */
  answered?: PushAnswered;
  /** The ask closed without an answer: a notification still showing it goes. */
  closed?: boolean;
}

/** An answer a notification offers (PushAction in spec/main.tsp). */
export interface PushAction {
  action: string;
  title: string;
  /** The signed action link, `/api/v1/actions/{token}`, POSTed when the button is clicked. */
  url: string;
}

/** Who answered, where and when (PushAnswered in spec/main.tsp). */
export interface PushAnswered {
  by?: string;
  via: string;
  at: string;
}

/** NotificationOptions with the members TypeScript's lib leaves out but browsers read. */
export interface ShownOptions extends NotificationOptions {
  /** Buttons (revision 4's actions), where the platform shows them (Notification.maxActions). */
  actions?: { action: string; title: string }[];
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
  const n: PushNotice = {
    askId,
    title: str(v.title) || 'Loopback',
    body: str(v.body) || 'An agent is waiting on you.',
    tag: str(v.tag) || (askId ? `ask-${askId}` : 'loopback'),
    url: noticePath({ url: v.url, askId }),
  };
  if (str(v.project)) n.project = str(v.project);
  if (/^[A-Za-z0-9_-]{1,64}$/.test(str(v.group))) n.group = str(v.group);
  const actions = Array.isArray(v.actions) ? v.actions.map(parseAction).filter((a): a is PushAction => a !== null) : [];
  if (actions.length && askId) n.actions = actions.slice(0, MAX_ACTIONS);
  const a = v.answered as Record<string, unknown> | undefined;
  if (a && typeof a === 'object' && str(a.via)) n.answered = { ...(str(a.by) ? { by: str(a.by) } : {}), via: str(a.via), at: str(a.at) };
  if (v.closed === true) n.closed = true;
  return n;
}

/** The most buttons a notice offers (the server sends at most two). */
const MAX_ACTIONS = 2;

/**
 * An action link the worker may POST: a path of this origin under `/api/v1/actions/`, one segment, no
 * query. Anything else a push might name is dropped: a click must never send a request elsewhere.
 */
export function isActionPath(p: unknown): p is string {
  return typeof p === 'string' && /^\/api\/v1\/actions\/[A-Za-z0-9._~-]{1,4096}$/.test(p);
}

function parseAction(x: unknown): PushAction | null {
  if (!x || typeof x !== 'object') return null;
  const { action, title, url } = x as Record<string, unknown>;
  if (typeof action !== 'string' || !/^[a-z0-9-]{1,32}$/.test(action) || typeof title !== 'string' || !title.trim() || !isActionPath(url)) return null;
  return { action, title: cut(title.trim(), 40), url };
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

// ----------------------------------------------------------------------------------- groups --

/** One ask a project's notification stands for. */
export interface GroupedAsk {
  askId: string;
  title: string;
  body: string;
  url: string;
  actions?: PushAction[];
}

/** What a notification of revision 4 keeps in its data: the asks of its group still waiting, oldest first. */
export interface GroupData {
  url: string;
  askId: string;
  group: string;
  asks: GroupedAsk[];
}

/** How many asks a group's notification keeps in its data (the count shown goes on). */
const GROUP_KEEP = 20;

/** A notification's data as a group's, or null when it is not one (an older notice, another tag). */
export function groupData(data: unknown): GroupData | null {
  const d = data as Partial<GroupData> | null;
  if (!d || typeof d !== 'object' || typeof d.group !== 'string' || !Array.isArray(d.asks)) return null;
  return d as GroupData;
}

/** Who answered, where and when, in words: "Answered by Ada in Slack, 10:42". */
export function answeredLine(n: PushNotice, timeZone?: string): string {
  let s = n.body || 'Answered';
  const at = n.answered?.at ? new Date(n.answered.at) : null;
  if (at && !Number.isNaN(at.getTime())) {
    s += ', ' + at.toLocaleTimeString('en-GB', { hour: '2-digit', minute: '2-digit', ...(timeZone ? { timeZone } : {}) });
  }
  return s;
}

/** What a device shows: a notification's title and options, or null to close the group's notification. */
export type Shown = { title: string; options: ShownOptions } | null;

/**
 * A revision-4 notice (one with a group) against the notification its group shows now (`prev`,
 * that notification's data, or null): the notification to show in its place.
 *
 * - An ask that needs the person joins its group's list (once) and is shown on top, with how many
 *   wait, its own answers as buttons (at most `maxActions`: 0 on iOS, where a tap opens the ask),
 *   and it rings (renotify).
 * - An ask answered or closed elsewhere leaves the list, silently: the next one is shown, or, when it
 *   was the last, "Answered by Ada in Slack, 10:42"; a closed last one closes the notification.
 *   `undefined` when the group's notification does not show that ask: nothing to change.
 */
export function groupedNotification(
  prev: GroupData | null,
  n: PushNotice,
  opts: { now?: number; maxActions?: number; timeZone?: string } = {},
): Shown | undefined {
  const now = opts.now ?? Date.now();
  const group = n.group ?? n.tag;
  const others = (prev?.asks ?? []).filter((a) => a.askId !== n.askId);
  if (n.answered || n.closed) {
    if (!prev || others.length === prev.asks.length) return undefined;
    if (others.length) return showGroup(group, others, now, opts.maxActions ?? 0, false);
    if (n.closed) return null;
    return {
      title: cut(n.title, TITLE_MAX),
      options: {
        body: cut(answeredLine(n, opts.timeZone), BODY_MAX),
        tag: group,
        renotify: false,
        silent: true,
        data: { url: n.url, askId: n.askId, group, asks: [] } satisfies GroupData,
        icon: ICON,
        badge: BADGE,
        lang: 'en',
        timestamp: now,
      },
    };
  }
  const mine: GroupedAsk = { askId: n.askId, title: n.title, body: n.body, url: n.url, ...(n.actions?.length ? { actions: n.actions } : {}) };
  return showGroup(group, [...others, mine].slice(-GROUP_KEEP), now, opts.maxActions ?? 0, true);
}

/** A group's notification showing its newest ask, with the count of those waiting. */
function showGroup(group: string, asks: GroupedAsk[], now: number, maxActions: number, ring: boolean): Shown {
  const top = asks[asks.length - 1];
  const title = asks.length > 1 ? `${top.title} · ${asks.length} waiting` : top.title;
  const actions = (top.actions ?? []).slice(0, Math.max(0, maxActions)).map(({ action, title }) => ({ action, title }));
  return {
    title: cut(title, TITLE_MAX),
    options: {
      body: cut(top.body, BODY_MAX),
      tag: group,
      renotify: ring,
      ...(ring ? {} : { silent: true }),
      ...(actions.length ? { actions } : {}),
      data: { url: top.url, askId: top.askId, group, asks } satisfies GroupData,
      icon: ICON,
      badge: BADGE,
      lang: 'en',
      timestamp: ring ? now : undefined,
    },
  };
}

/** The action link a click on button `action` of a group's notification POSTs, or null. */
export function actionFor(data: unknown, action: string): { ask: GroupedAsk; url: string } | null {
  const d = groupData(data);
  const top = d?.asks[d.asks.length - 1];
  const a = top?.actions?.find((x) => x.action === action);
  return top && a && isActionPath(a.url) ? { ask: top, url: a.url } : null;
}

/** The body an action link is POSTed with: the one reply its token gives. */
export const ACTION_BODY = JSON.stringify({ choice: 0 });

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
 * notification with this tag (or, with `action`, that button of it). Headless Chromium (the browser tests) draws no notification and has
 * no way to click one; this runs the very same click handler. It can do nothing the page could not
 * do itself (bring an inbox window forward and open an ask in it).
 */
export const TEST_CLICK_MESSAGE = 'loopback.test-notificationclick';
