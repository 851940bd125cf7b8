// The inbox's state and everything that changes it: one small store the views subscribe to.

import { useLayoutEffect, useState } from 'preact/hooks';
import { api, ApiError, setHooks, setToken } from './api';
import { forgetToken, storeToken } from './auth';
import { clearAllDrafts, clearDraft } from './drafts';
import { forgetFiles } from './files';
import { Live, type ConnState } from './live';
import { fromSnapshot, isNewer, mergeAsk, mergeAsks, mergeFrame, needsPerson, type AskMap } from './merge';
import { plainText } from './markdown';
import { compareTimes } from './time';
import type { Ask, AskPage, Reply, Whoami } from './types';

export type Route = { name: 'inbox' } | { name: 'history' } | { name: 'ask'; id: string };

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

export interface AppState {
  token: string | null;
  signInMessage: string | null;
  whoami: Whoami | null;
  conn: ConnState;
  live: AskMap;
  liveReady: boolean;
  /** Asks read on their own (an old closed ask opened by link), by id. */
  extra: AskMap;
  missing: ReadonlySet<string>;
  history: HistoryState;
  banner: null | 'server-newer' | 'reload';
  unseen: number;
  toast: { text: string; kind: 'ok' | 'error'; id: number } | null;
  project: string;
  route: Route;
  notifications: NotificationPermission | 'unsupported';
}

const PROJECT_KEY = 'loopback.project';

function initialHistory(): HistoryState {
  return { pages: new Map(), nextBefore: null, oldest: null, loading: false, error: null };
}

function readProject(): string {
  try {
    return localStorage.getItem(PROJECT_KEY) ?? '';
  } catch {
    return '';
  }
}

export function parseRoute(pathname: string): Route {
  const m = /^\/asks\/([^/]+)\/?$/.exec(pathname);
  if (m) return { name: 'ask', id: decodeURIComponent(m[1]) };
  if (/^\/history\/?$/.test(pathname)) return { name: 'history' };
  return { name: 'inbox' };
}

export function routePath(r: Route): string {
  switch (r.name) {
    case 'ask':
      return '/asks/' + encodeURIComponent(r.id);
    case 'history':
      return '/history';
    default:
      return '/';
  }
}

let state: AppState = {
  token: null,
  signInMessage: null,
  whoami: null,
  conn: { status: 'stopped' },
  live: new Map(),
  liveReady: false,
  extra: new Map(),
  missing: new Set(),
  history: initialHistory(),
  banner: null,
  unseen: 0,
  toast: null,
  project: readProject(),
  route: parseRoute(location.pathname),
  notifications: typeof Notification === 'undefined' ? 'unsupported' : Notification.permission,
};

const listeners = new Set<() => void>();

export function getState(): AppState {
  return state;
}

export function setState(patch: Partial<AppState> | ((s: AppState) => Partial<AppState>)): void {
  const p = typeof patch === 'function' ? patch(state) : patch;
  state = { ...state, ...p };
  for (const l of listeners) l();
  updateTitle();
}

/**
 * The app state in a component, re-rendering on every change. A component subscribes only after
 * it has rendered, so a change made in between (a fast 401 to the first whoami, say) is caught by
 * comparing the state it rendered with the state at subscription.
 */
export function useApp(): AppState {
  const [, force] = useState(0);
  const rendered = state;
  useLayoutEffect(() => {
    const l = () => force((n) => n + 1);
    listeners.add(l);
    if (state !== rendered) l();
    return () => void listeners.delete(l);
  }, []);
  return state;
}

// ------------------------------------------------------------------------------------------ live --

let live: Live | null = null;

function startLive() {
  live?.stop();
  live = new Live({
    snapshot(s) {
      setState({ live: fromSnapshot(s), liveReady: true });
    },
    ask(type, a) {
      const prev = state.live.get(a.id);
      const next = mergeFrame(state.live, a);
      if (next === state.live) return;
      const patch: Partial<AppState> = { live: next };
      if (state.extra.has(a.id)) patch.extra = mergeFrame(state.extra, a);
      setState(patch);
      if (needsPerson(prev, a)) announce(a, type === 'ask.opened' && !prev);
    },
    state(conn) {
      setState({ conn });
    },
  });
  live.start();
}

export function retryLive(): void {
  live?.retryNow();
}

// ------------------------------------------------------------------------------------ sign in/out --

export async function signIn(token: string, message: string | null = null): Promise<void> {
  if (state.token && state.token !== token) signOut(); // another credential: nothing of the last one stays
  setToken(token);
  setState({ token, signInMessage: message });
  try {
    const who = await api<Whoami>('GET', '/whoami');
    storeToken(token);
    setState({ whoami: who });
    startLive();
  } catch (err) {
    if (err instanceof ApiError && err.status === 401) return; // signOut has run
    // The server is down or refusing for another reason: keep the token and keep trying.
    storeToken(token);
    startLive();
  }
}

/**
 * Signs out: forgets the token, the asks and the images' blob URLs. Drafts are kept when Loopback
 * refused the token (the person signs in again and carries on), and forgotten when the person
 * signs out themselves (`forgetDrafts`).
 */
export function signOut(message: string | null = null, forgetDrafts = false): void {
  if (forgetDrafts) clearAllDrafts();
  live?.stop();
  live = null;
  setToken(null);
  forgetToken();
  forgetFiles();
  setState({
    token: null,
    signInMessage: message,
    whoami: null,
    live: new Map(),
    liveReady: false,
    extra: new Map(),
    missing: new Set(),
    history: initialHistory(),
    conn: { status: 'stopped' },
    unseen: 0,
  });
}

setHooks({
  unauthorized(message) {
    if (!state.token) return;
    signOut(
      'Loopback did not accept your sign-in' +
        (message ? ` (${message.replace(/\.$/, '')})` : '') +
        '. The token may have been revoked or mistyped: open the inbox link that `loopback serve` printed, or paste the token below.',
    );
  },
  reload(kind) {
    if (state.banner !== kind) setState({ banner: kind });
  },
});

// ----------------------------------------------------------------------------------------- asks --

/** The freshest copy of an ask the page holds, from the socket or read on its own. */
export function findAsk(s: AppState, id: string): Ask | undefined {
  const a = s.live.get(id);
  const b = s.extra.get(id) ?? s.history.pages.get(id);
  if (!a) return b;
  if (!b) return a;
  return isNewer(b, a) ? b : a;
}

/** Reads an ask the socket does not hold (an older closed one). */
export async function loadAsk(id: string): Promise<void> {
  try {
    const a = await api<Ask>('GET', '/asks/' + encodeURIComponent(id));
    setState((s) => ({ extra: mergeAsk(s.extra, a) }));
  } catch (err) {
    if (err instanceof ApiError && err.status === 404) {
      setState((s) => ({ missing: new Set([...s.missing, id]) }));
    } else {
      toast((err as Error).message, 'error');
    }
  }
}

/** Applies an ask the server returned, wherever the page holds it. */
function absorb(a: Ask) {
  setState((s) => ({
    live: s.live.has(a.id) || a.status !== 'closed' ? mergeAsk(s.live, a) : s.live,
    extra: s.extra.has(a.id) || !s.live.has(a.id) ? mergeAsk(s.extra, a) : s.extra,
  }));
}

/**
 * Sends a reply. On success the ask as the server left it is merged in, and the ask's draft is
 * removed. A refusal is shown and rethrown; a 409 (someone else moved first) also refreshes the ask.
 */
export async function sendReply(a: Ask, reply: Reply): Promise<Ask> {
  try {
    const updated = await api<Ask>('POST', `/asks/${encodeURIComponent(a.id)}/reply`, reply);
    clearDraft(a.id);
    absorb(updated);
    toast(doneMessage(reply), 'ok');
    return updated;
  } catch (err) {
    if (err instanceof ApiError && err.status === 409 && err.code !== 'reload') {
      void loadAsk(a.id);
    }
    if (!(err instanceof ApiError && err.status === 401)) toast(problemText(err), 'error');
    throw err;
  }
}

function doneMessage(r: Reply): string {
  switch (r.outcome) {
    case 'answered':
      return 'Answer sent.';
    case 'approved':
      return 'Approved.';
    case 'changes_requested':
      return 'Changes requested.';
    case 'follow_up':
      return 'Question sent to the agent.';
    case 'dismissed':
      return 'Dismissed.';
    case 'responded':
      return 'Replies sent.';
  }
}

export function problemText(err: unknown): string {
  if (err instanceof ApiError) {
    switch (err.code) {
      case 'ask.closed':
        return 'This ask is already closed; it was answered elsewhere.';
      case 'ask.awaiting_agent':
        return "It is the agent's move on this ask now.";
      case 'reload':
        return 'This page is newer than the server. Reload to continue.';
      default:
        return err.message;
    }
  }
  return (err as Error)?.message ?? String(err);
}

// -------------------------------------------------------------------------------------- history --

export const HISTORY_PAGE = 20;

export async function loadHistoryPage(): Promise<void> {
  const h = state.history;
  if (h.loading || h.nextBefore === undefined) return;
  setState({ history: { ...h, loading: true, error: null } });
  try {
    const q = new URLSearchParams({ limit: String(HISTORY_PAGE) });
    if (h.nextBefore) q.set('before', h.nextBefore);
    const page = await api<AskPage>('GET', '/asks?' + q.toString());
    setState((s) => {
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
    });
  } catch (err) {
    setState((s) => ({ history: { ...s.history, loading: false, error: problemText(err) } }));
  }
}

// --------------------------------------------------------------------------------------- routing --

export function navigate(r: Route, replace = false): void {
  const path = routePath(r);
  if (location.pathname !== path) {
    if (replace) history.replaceState(null, '', path);
    else history.pushState(null, '', path);
  }
  setState({ route: r });
  closeDialogs();
  if (r.name !== 'ask') window.scrollTo(0, 0);
}

/** A modal left open would cover the page that was just navigated to (a notification's click, Back). */
function closeDialogs(): void {
  for (const d of document.querySelectorAll<HTMLDialogElement>('dialog[open]')) d.close();
}

let detailFocus = false;

/** The next ask opened should take the focus (it was opened from the keyboard). */
export function requestDetailFocus(): void {
  detailFocus = true;
}

export function takeDetailFocus(): boolean {
  const f = detailFocus;
  detailFocus = false;
  return f;
}

addEventListener('popstate', () => {
  setState({ route: parseRoute(location.pathname) });
  closeDialogs();
});

export function setProject(project: string): void {
  try {
    if (project) localStorage.setItem(PROJECT_KEY, project);
    else localStorage.removeItem(PROJECT_KEY);
  } catch {
    // not kept
  }
  setState({ project });
}

// ----------------------------------------------------------------------------- toasts, title, … --

let toastSeq = 0;
let toastTimer: ReturnType<typeof setTimeout> | null = null;

export function toast(text: string, kind: 'ok' | 'error' = 'ok'): void {
  const id = ++toastSeq;
  setState({ toast: { text, kind, id } });
  if (toastTimer) clearTimeout(toastTimer);
  toastTimer = setTimeout(() => {
    if (state.toast?.id === id) setState({ toast: null });
  }, kind === 'error' ? 8000 : 3500);
}

let lastTitle = '';
function updateTitle() {
  const open = [...state.live.values()].filter((a) => a.status === 'awaiting_human').length;
  const base = open ? `Loopback (${open} waiting on you)` : 'Loopback';
  const title = state.unseen ? `(${state.unseen}) ${base}` : base;
  if (title !== lastTitle) {
    lastTitle = title;
    document.title = title;
  }
}

/** A new ask, or one whose move came back to the person, while the page is hidden: count it and notify. */
function announce(a: Ask, isNew: boolean) {
  if (document.visibilityState !== 'hidden') return;
  setState((s) => ({ unseen: s.unseen + 1 }));
  if (state.notifications !== 'granted') return;
  try {
    const what = a.kind === 'question' ? plainText(a.prompt.question, 120) : a.prompt.title.slice(0, 120);
    const n = new Notification(
      `${a.project ?? 'An agent'}: ${isNew ? `new ${a.kind}` : `your move on a ${a.kind}`}`,
      { body: what, tag: a.id },
    );
    n.onclick = () => {
      window.focus();
      navigate({ name: 'ask', id: a.id });
      n.close();
    };
  } catch {
    // notifications unavailable in this context
  }
}

document.addEventListener('visibilitychange', () => {
  if (document.visibilityState === 'visible' && state.unseen) setState({ unseen: 0 });
});

export async function enableNotifications(): Promise<void> {
  if (typeof Notification === 'undefined') return;
  const p = await Notification.requestPermission();
  setState({ notifications: p });
}
