// The inbox's state, pure: what the page holds, the changes that can be made to it, and a store that
// tells its subscribers of each change. Nothing here touches the DOM, the network or a timer; the
// edges (effects/*.ts) do, and come here only to read the state or to change it.

import type { ConnState } from './live';
import { isNewer, mergeAsk, mergeAsks, mergeFrame, needsPerson, type AskMap } from './merge';
import type { AskMark } from './marks';
import type { PushState } from './push';
import { compareTimes } from './time';
import type { Ask, AskKind, AskPage, Rule, Snapshot, Whoami } from './types';

export type Route =
  | { name: 'inbox' }
  | { name: 'history' }
  | { name: 'ask'; id: string }
  | { name: 'rules'; focus?: string }
  | { name: 'settings' }
  | { name: 'agents' }
  | { name: 'connect'; id: string };

export interface HistoryState {
  /** Closed asks read page by page, by id. */
  pages: AskMap;
  /** The cursor for the next page; null before the first page; undefined once the last was read. */
  nextBefore: string | null | undefined;
  /** closedAt of the oldest ask paged so far (null before the first page). */
  oldest: string | null;
  loading: boolean;
  error: string | null;
}

/** The space's rules (the Rules page), read when it is opened. */
export interface RulesState {
  /** Newest first, as the server lists them; null before the first read. */
  items: Rule[] | null;
  loading: boolean;
  /** Why the last read failed, in words. */
  error: string | null;
}

/** A sign-in link's token that would replace the session: the person chooses (auth.ts). */
export interface Choice {
  /** The link's token, held here only until the person chooses; never stored before. */
  token: string;
  /** Who is signed in now (null when it could not be looked up). */
  current: Whoami | null;
  /** Who the link signs in as. */
  next: Whoami;
}

export interface Toast {
  text: string;
  kind: 'ok' | 'error';
  id: number;
  /** A reply held for undo: the toast offers Undo while it waits (effects/triage.ts). */
  undo?: boolean;
}

/** Whose move the list shows: everyone's, the person's, or the agents'. */
export type MoveFilter = '' | 'yours' | 'agents' | 'snoozed';

/** A reply held on this page for a few seconds before it is sent, so the person can undo it. */
export interface PendingReply {
  askId: string;
  /** Every ask it is for: several when they are dismissed together (bulk dismiss). */
  ids?: string[];
  /** When it goes, in ms since the epoch. */
  due: number;
  /** What the toast says, such as "Answer sent". */
  label: string;
}

export interface AppState {
  token: string | null;
  signInMessage: string | null;
  /** A token is being checked before it is kept (the sign-in screen waits). */
  signingIn: boolean;
  whoami: Whoami | null;
  /** A link's token is waiting for the person's choice. */
  choice: Choice | null;
  /** Something about signing in the person should read, shown until dismissed. */
  notice: string | null;
  conn: ConnState;
  live: AskMap;
  liveReady: boolean;
  /** Asks read on their own (an old closed ask opened by link), by id. */
  extra: AskMap;
  missing: ReadonlySet<string>;
  history: HistoryState;
  banner: null | 'server-newer' | 'reload';
  unseen: number;
  toast: Toast | null;
  project: string;
  /** The list's other filters, over what the page holds (client-side): kind of ask, whose move. */
  kindFilter: AskKind | '';
  moveFilter: MoveFilter;
  /** Open asks that arrived while the list was shown, held behind the "N new" pill. */
  held: ReadonlySet<string>;
  /** Open asks picked in the list for a bulk action (checkbox, x, shift-click for a range). */
  picked: ReadonlySet<string>;
  /** The person's own marks on open asks (read, snoozed), by ask id: effects/marks.ts. */
  marks: ReadonlyMap<string, AskMark>;
  /** A reply waiting out its undo time. */
  pending: PendingReply | null;
  /** Whether the browser says it is online (navigator.onLine and its events). */
  online: boolean;
  /** The asks shown are the snapshot kept on this device, from this time (offline); null when live. */
  staleSince: string | null;
  route: Route;
  /** The shortcuts dialog is open. The dialog follows this flag (effects/help.ts), never the reverse. */
  help: boolean;
  /** The browser's permission for notifications, for Web Push and for the in-page ones alike. */
  notifications: NotificationPermission | 'unsupported';
  /** Web Push on this device: the bell (push.ts). */
  push: PushState;
  /** Why the bell's last step failed, shown in its menu until the next. */
  pushNote: string | null;
  rules: RulesState;
}

export type Patch = Partial<AppState> | ((s: AppState) => Partial<AppState>);

// ----------------------------------------------------------------------------------------- store --

export interface Store {
  get(): AppState;
  /** Applies a change and tells every subscriber, in the order they subscribed. */
  set(patch: Patch): void;
  /** Calls `listener` after every change; returns the unsubscribe. */
  subscribe(listener: (s: AppState) => void): () => void;
}

function unchanged(s: AppState, p: Partial<AppState>): boolean {
  for (const k in p) if (!Object.is(s[k as keyof AppState], p[k as keyof AppState])) return false;
  return true;
}

export function createStore(initial: AppState): Store {
  let state = initial;
  const listeners = new Set<(s: AppState) => void>();
  return {
    get: () => state,
    set(patch) {
      const p = typeof patch === 'function' ? patch(state) : patch;
      // A patch that changes nothing (a delta of asks already held, marks read again unchanged)
      // draws nothing: every view reads the store, and a render of them all is what a key waits on.
      if (unchanged(state, p)) return;
      state = { ...state, ...p };
      for (const l of [...listeners]) l(state);
    },
    subscribe(listener) {
      listeners.add(listener);
      return () => void listeners.delete(listener);
    },
  };
}

// ---------------------------------------------------------------------------------------- initial --

/** What the page knows before anything has happened: read from its surroundings by the caller. */
export interface Surroundings {
  project: string;
  route: Route;
  notifications: AppState['notifications'];
  push: PushState;
  online?: boolean;
}

export function initialHistory(): HistoryState {
  return { pages: new Map(), nextBefore: null, oldest: null, loading: false, error: null };
}

export function initialState(env: Surroundings): AppState {
  return {
    token: null,
    signInMessage: null,
    signingIn: false,
    whoami: null,
    choice: null,
    notice: null,
    conn: { status: 'stopped' },
    live: new Map(),
    liveReady: false,
    extra: new Map(),
    missing: new Set(),
    history: initialHistory(),
    banner: null,
    unseen: 0,
    toast: null,
    project: env.project,
    kindFilter: '',
    moveFilter: '',
    held: new Set(),
    picked: new Set(),
    marks: new Map(),
    pending: null,
    online: env.online ?? true,
    staleSince: null,
    route: env.route,
    help: false,
    notifications: env.notifications,
    push: env.push,
    pushNote: null,
    rules: initialRules(),
  };
}

export function initialRules(): RulesState {
  return { items: null, loading: false, error: null };
}

// ---------------------------------------------------------------------------------------- routes --

export function parseRoute(pathname: string, search = ''): Route {
  const m = /^\/asks\/([^/]+)\/?$/.exec(pathname);
  if (m) return { name: 'ask', id: decodeURIComponent(m[1]) };
  if (/^\/history\/?$/.test(pathname)) return { name: 'history' };
  if (/^\/agents\/?$/.test(pathname)) return { name: 'agents' };
  const c = /^\/connect\/([^/]+)\/?$/.exec(pathname);
  if (c) return { name: 'connect', id: decodeURIComponent(c[1]) };
  if (/^\/settings\/?$/.test(pathname)) return { name: 'settings' };
  if (/^\/rules\/?$/.test(pathname)) {
    const focus = new URLSearchParams(search).get('rule');
    return focus ? { name: 'rules', focus } : { name: 'rules' };
  }
  return { name: 'inbox' };
}

export function routePath(r: Route): string {
  switch (r.name) {
    case 'ask':
      return '/asks/' + encodeURIComponent(r.id);
    case 'history':
      return '/history';
    case 'settings':
      return '/settings';
    case 'rules':
      return r.focus ? '/rules?rule=' + encodeURIComponent(r.focus) : '/rules';
    case 'agents':
      return '/agents';
    case 'connect':
      return '/connect/' + encodeURIComponent(r.id);
    default:
      return '/';
  }
}

// --------------------------------------------------------------------------------------- changes --
//
// Each change is a function of the state (and what happened) to the part of it that changes, for
// Store.set. The edges decide when they happen.

/** Another page of the inbox: a modal left open (the help) would cover it. */
export function routed(r: Route): Partial<AppState> {
  return { route: r, help: false };
}

export function helpOpened(): Partial<AppState> {
  return { help: true };
}

export function helpClosed(): Partial<AppState> {
  return { help: false };
}

/** Everything of the last person goes: their asks, their session, what the page was doing for them. */
export function signedOut(message: string | null): Partial<AppState> {
  return {
    token: null,
    signInMessage: message,
    signingIn: false,
    whoami: null,
    choice: null,
    notice: null,
    live: new Map(),
    liveReady: false,
    extra: new Map(),
    missing: new Set(),
    history: initialHistory(),
    held: new Set(),
    picked: new Set(),
    marks: new Map(),
    pending: null,
    staleSince: null,
    conn: { status: 'stopped' },
    unseen: 0,
    pushNote: null,
    help: false,
    rules: initialRules(),
  };
}

/** Says something about signing in until dismissed: on the sign-in screen, or over the inbox. */
export function noticeSet(s: AppState, text: string | null): Partial<AppState> {
  return s.token ? { notice: text } : { signInMessage: text };
}

/** The socket's snapshot: the inbox starts again from it (and shows all of it). */
export function snapshotReceived(asks: AskMap): Partial<AppState> {
  return { live: asks, liveReady: true, held: new Set(), staleSince: null };
}

/**
 * A reconnect's delta (contract revision 6): the asks that changed since the watermark the page
 * offered, merged into what it holds as socket frames are (a tie takes the delta's copy); every
 * other ask held stands, since asks are never deleted.
 */
export function deltaReceived(s: AppState, d: Snapshot): Partial<AppState> {
  // Each ask as a frame: a new one waits behind the pill as a live arrival does.
  let cur: AppState = s;
  for (const a of [...(d.open ?? []), ...(d.recent ?? [])]) {
    const f = askFrame(cur, s.live.has(a.id) ? 'ask.updated' : 'ask.opened', a);
    if (f.patch) cur = { ...cur, ...f.patch };
  }
  return { live: cur.live, extra: cur.extra, held: cur.held, liveReady: true, staleSince: null };
}

/**
 * Whether a new open ask waits behind the "N new" pill rather than pushing the rows the person is
 * looking at down: when the list already shows open asks (an empty list has nothing to shift).
 */
export function holdsArrivals(s: AppState): boolean {
  for (const a of s.live.values()) if (a.status !== 'closed' && !s.held.has(a.id)) return true;
  return false;
}

/** The pill was pressed (or the person came back to the list): every held ask shows. */
export function arrivalsShown(s: AppState): Partial<AppState> {
  return s.held.size ? { held: new Set() } : {};
}

/**
 * An ask from the socket. `patch` is null when it changes nothing; `announce` says whether the
 * person should hear of it (the move is theirs now), and `isNew` whether it is a new ask.
 */
export function askFrame(
  s: AppState,
  type: 'ask.opened' | 'ask.updated',
  a: Ask,
): { patch: Partial<AppState> | null; announce: boolean; isNew: boolean } {
  const prev = s.live.get(a.id);
  const next = mergeFrame(s.live, a);
  if (next === s.live) return { patch: null, announce: false, isNew: false };
  const patch: Partial<AppState> = { live: next };
  if (s.extra.has(a.id)) patch.extra = mergeFrame(s.extra, a);
  const isNew = type === 'ask.opened' && !prev;
  if (isNew && a.status !== 'closed' && s.liveReady && holdsArrivals(s)) patch.held = new Set([...s.held, a.id]);
  else if (s.held.has(a.id) && a.status === 'closed') patch.held = new Set([...s.held].filter((id) => id !== a.id));
  return { patch, announce: needsPerson(prev, a), isNew };
}

/** An ask read on its own (GET /asks/{id}). */
export function askRead(s: AppState, a: Ask): Partial<AppState> {
  return { extra: mergeAsk(s.extra, a) };
}

/** An ask the server says does not exist (404). */
export function askMissing(s: AppState, id: string): Partial<AppState> {
  return { missing: new Set([...s.missing, id]) };
}

/** An ask the server returned (a reply's answer): applied wherever the page holds it. */
export function askAbsorbed(s: AppState, a: Ask): Partial<AppState> {
  return {
    live: s.live.has(a.id) || a.status !== 'closed' ? mergeAsk(s.live, a) : s.live,
    extra: s.extra.has(a.id) || !s.live.has(a.id) ? mergeAsk(s.extra, a) : s.extra,
  };
}

export function historyLoading(s: AppState): Partial<AppState> {
  return { history: { ...s.history, loading: true, error: null } };
}

export function historyPage(s: AppState, page: AskPage): Partial<AppState> {
  let oldest = s.history.oldest;
  for (const a of page.items) {
    const t = a.closedAt ?? a.updatedAt;
    if (oldest === null || compareTimes(t, oldest) < 0) oldest = t;
  }
  return {
    history: {
      pages: mergeAsks(s.history.pages, page.items),
      nextBefore: page.nextBefore ?? undefined,
      // Once the last page is read, every closed ask the socket holds belongs in the list.
      oldest: page.nextBefore ? oldest : '',
      loading: false,
      error: null,
    },
  };
}

export function historyFailed(s: AppState, error: string): Partial<AppState> {
  return { history: { ...s.history, loading: false, error } };
}

export function rulesLoading(s: AppState): Partial<AppState> {
  return { rules: { ...s.rules, loading: true, error: null } };
}

export function rulesRead(items: Rule[]): Partial<AppState> {
  return { rules: { items, loading: false, error: null } };
}

export function rulesFailed(s: AppState, error: string): Partial<AppState> {
  return { rules: { ...s.rules, loading: false, error } };
}

/** A rule made or changed: in its place, or first (the list is newest first). */
export function ruleSaved(s: AppState, r: Rule): Partial<AppState> {
  const items = s.rules.items ?? [];
  const i = items.findIndex((x) => x.id === r.id);
  return { rules: { ...s.rules, items: i < 0 ? [r, ...items] : items.map((x) => (x.id === r.id ? r : x)) } };
}

export function ruleRemoved(s: AppState, id: string): Partial<AppState> {
  return { rules: { ...s.rules, items: (s.rules.items ?? []).filter((x) => x.id !== id) } };
}

export function toastShown(toast: Toast): Partial<AppState> {
  return { toast };
}

/** A toast's time is up: it goes, unless another has taken its place. */
export function toastExpired(s: AppState, id: number): Partial<AppState> {
  return s.toast?.id === id ? { toast: null } : {};
}

/** Something new while the page is hidden. */
export function unseenAdded(s: AppState): Partial<AppState> {
  return { unseen: s.unseen + 1 };
}

// ------------------------------------------------------------------------------------- selectors --

/** The freshest copy of an ask the page holds, from the socket or read on its own. */
export function findAsk(s: AppState, id: string): Ask | undefined {
  const a = s.live.get(id);
  const b = s.extra.get(id) ?? s.history.pages.get(id);
  if (!a) return b;
  if (!b) return a;
  return isNewer(b, a) ? b : a;
}

/** The page's title: how many asks wait on the person, and how many came while it was hidden. */
export function titleOf(s: AppState): string {
  let open = 0;
  for (const a of s.live.values()) if (a.status === 'awaiting_human') open++;
  const base = open ? `Loopback (${open} waiting on you)` : 'Loopback';
  return s.unseen ? `(${s.unseen}) ${base}` : base;
}
