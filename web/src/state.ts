// The inbox's state and everything that changes it: one small store the views subscribe to.

import { useLayoutEffect, useState } from 'preact/hooks';
import { api, ApiError, isForbidden, probe, sendAs, setHooks, setToken } from './api';
import {
  decideSwitch,
  describe,
  forgetToken,
  LATE_LINK_TEXT,
  refusalText,
  sameIdentity,
  storeToken,
  takeTokenFromFragment,
  type StartPlan,
  type TokenCheck,
} from './auth';
import { clearAllDrafts, clearDraft } from './drafts';
import { forgetFiles } from './files';
import { Live, type ConnState } from './live';
import { fromSnapshot, isNewer, mergeAsk, mergeAsks, mergeFrame, needsPerson, type AskMap } from './merge';
import { plainText } from './markdown';
import {
  base64UrlToBytes,
  derivePushState,
  deviceFacts,
  forgetKept,
  keptKey,
  readKept,
  registerWorker,
  sameKey,
  usesTabNotifications,
  writeKept,
  type PushFacts,
  type PushState,
} from './push';
import { compareTimes } from './time';
import type { Ask, AskPage, PushKey, PushSubscriptionCreated, Reply, Whoami } from './types';

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

/** A sign-in link's token that would replace the session: the person chooses (auth.ts). */
export interface Choice {
  /** The link's token, held here only until the person chooses; never stored before. */
  token: string;
  /** Who is signed in now (null when it could not be looked up). */
  current: Whoami | null;
  /** Who the link signs in as. */
  next: Whoami;
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
  toast: { text: string; kind: 'ok' | 'error'; id: number } | null;
  project: string;
  route: Route;
  /** The browser's permission for notifications, for Web Push and for the in-page ones alike. */
  notifications: NotificationPermission | 'unsupported';
  /** Web Push on this device: the bell (push.ts). */
  push: PushState;
  /** Why the bell's last step failed, shown in its menu until the next. */
  pushNote: string | null;
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
  project: readProject(),
  route: parseRoute(location.pathname),
  notifications: typeof Notification === 'undefined' ? 'unsupported' : Notification.permission,
  push: { kind: 'working', doing: 'check' },
  pushNote: null,
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
      if (!state.whoami) void confirmSession();
      // The server was not reachable when the bell looked (a start offline): look again now.
      if (pushFacts.server === 'unknown' && pushFacts.busy === null && pushPossible()) void checkPush();
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
    forbidden() {
      // The server says this credential may not read the inbox: an agent's, kept from before these
      // checks or taken while the server could not be asked. It is not kept.
      signOut(refusalText({ kind: 'agent', who: state.whoami }));
    },
  });
  live.start();
}

export function retryLive(): void {
  live?.retryNow();
}

// ------------------------------------------------------------------------------------ sign in/out --

/**
 * Asks the server about a token without using it for the page: whoami, then one small read of the
 * inbox, which an agent's credential is refused (403 auth.forbidden). Nothing is stored, and a
 * refusal here signs nobody out.
 */
export async function checkToken(token: string): Promise<TokenCheck> {
  let who: Whoami;
  try {
    who = await probe<Whoami>(token, 'GET', '/whoami');
  } catch (err) {
    return failedCheck(err, null);
  }
  try {
    await probe<AskPage>(token, 'GET', '/asks?limit=1');
  } catch (err) {
    const c = failedCheck(err, who);
    if (c.kind !== 'unreachable') return c;
    // whoami answered: a passing failure of the read is for the live connection to retry.
  }
  return { kind: 'person', who };
}

function failedCheck(err: unknown, who: Whoami | null): TokenCheck {
  if (err instanceof ApiError && err.status === 401) return { kind: 'refused', message: err.message };
  if (isForbidden(err)) return { kind: 'agent', who };
  return { kind: 'unreachable', message: problemText(err) };
}

/**
 * Signs in with a token from the sign-in form, or the one link or device brought when nobody is
 * signed in. It is checked first: refused (401) or an agent's (403), it is not kept and the sign-in
 * screen says why. When the server cannot be asked, the page uses it and keeps trying; it is stored
 * once the server has answered for it.
 */
export async function signIn(token: string): Promise<void> {
  setState({ signingIn: true, signInMessage: null });
  const c = await checkToken(token);
  setState({ signingIn: false });
  if (c.kind === 'person') adopt(token, c.who);
  else if (c.kind === 'unreachable') adopt(token, null);
  else refuse(refusalText(c));
}

/** What the page does on load (main.tsx), by the rules in auth.ts. */
export async function start(plan: StartPlan): Promise<void> {
  switch (plan.kind) {
    case 'signed-out':
      return;
    case 'sign-in':
      return plan.fromLink ? signIn(plan.token) : resume(plan.token);
    case 'choose': {
      setState({ signingIn: true, signInMessage: null });
      const [current, next] = await Promise.all([checkToken(plan.current), checkToken(plan.next)]);
      setState({ signingIn: false });
      const d = decideSwitch(current, next);
      switch (d.kind) {
        case 'take':
          adopt(plan.next, d.next);
          return;
        case 'neither':
          refuse(d.message);
          return;
        case 'keep':
          adopt(plan.current, current.kind === 'person' ? current.who : null);
          setState({ notice: d.notice });
          return;
        case 'ask':
          adopt(plan.current, d.current);
          setState({ choice: { token: plan.next, current: d.current, next: d.next } });
          return;
      }
    }
  }
}

/**
 * The person's answer to the switch dialog. Keeping changes nothing. Switching is a sign-out of the
 * current person (their drafts on this device go too, so nobody sends another's half-written reply)
 * and a sign-in as the link's.
 */
export function resolveChoice(take: boolean): void {
  const c = state.choice;
  if (!c) return;
  setState({ choice: null });
  if (!take) {
    if (state.whoami) toast(`Still signed in as ${describe(state.whoami)}.`);
    return;
  }
  signOut(null, !(c.current && sameIdentity(c.current, c.next)));
  adopt(c.token, c.next);
  toast(`Signed in as ${describe(c.next)}.`);
}

/** Uses a token for the page: kept on this device once the server has vouched for it (`who`). */
function adopt(token: string, who: Whoami | null): void {
  if (state.token && state.token !== token) signOut(); // another credential: nothing of the last one stays
  setToken(token);
  if (who) storeToken(token);
  setState({ token, whoami: who, signInMessage: null });
  startLive();
  void checkPush();
}

/** A token was refused: whatever it was, it is not kept, and the sign-in screen says why. */
function refuse(message: string): void {
  if (state.token) signOut(message);
  else {
    forgetToken();
    setState({ signInMessage: message });
  }
}

/**
 * The token kept on this device, on a page load without a link: the inbox shows at once, as the
 * server vouched for it before it was kept; whoami then says who it is. A 401 signs out as on any
 * call, and an agent's credential (kept before these checks) is refused by the inbox's first read.
 */
async function resume(token: string): Promise<void> {
  adopt(token, null);
  await confirmSession();
}

/** Looks up who the page's token is, and keeps it (a token used while the server could not be asked). */
async function confirmSession(): Promise<void> {
  const token = state.token;
  try {
    const who = await api<Whoami>('GET', '/whoami');
    if (state.token !== token || !token) return;
    storeToken(token);
    setState({ whoami: who });
  } catch (err) {
    // A 401 has signed out already; a server down: the next snapshot asks again.
    if (isForbidden(err) && state.token === token) signOut(refusalText({ kind: 'agent', who: null }));
  }
}

/**
 * The fragment changed after the page loaded: a link clicked in the page, or a script. Its token
 * leaves the address bar at once and is dropped, with a note: it never signs in, out or over.
 */
export function fragmentChanged(): void {
  if (takeTokenFromFragment()) setNotice(LATE_LINK_TEXT);
}

/** Says something about signing in until the person dismisses it (or `null` to dismiss). */
export function setNotice(text: string | null): void {
  if (!state.token) setState({ signInMessage: text });
  else setState({ notice: text });
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
  if (state.token) pushSignedOut(state.token);
  setToken(null);
  forgetToken();
  forgetFiles();
  setState({
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
    conn: { status: 'stopped' },
    unseen: 0,
    pushNote: null,
  });
}

setHooks({
  unauthorized(message) {
    if (!state.token) return;
    signOut(refusalText({ kind: 'refused', message }));
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
  // Where Web Push works, the service worker notifies (pushed by the server, even with the tab
  // closed); this page adds none of its own, which would come twice. Where it does not, the page
  // notifies while it is open, as it always did, once the person allowed it.
  if (state.notifications !== 'granted' || !usesTabNotifications(state.push)) return;
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

/** The in-page notifications (where Web Push does not work): asks the browser's permission. */
export async function enableNotifications(): Promise<void> {
  if (typeof Notification === 'undefined') return;
  const p = await Notification.requestPermission();
  setPush({ permission: p });
}

// ------------------------------------------------------------------------------------ push --
//
// The bell turns Web Push on and off for this device (push.ts has the rules). Every step runs in
// turn (`pushQueue`), so a sign-out's unsubscribe never crosses the next sign-in's check.

let pushFacts: PushFacts = {
  ...deviceFacts(),
  permission: state.notifications,
  worker: 'pending',
  server: 'unknown',
  subscribed: null,
  knownId: false,
  busy: 'check',
};
// Known at once where nothing can be looked up (http://, an iPhone's Safari tab).
state = { ...state, push: derivePushState(pushFacts) };
/** The server's key as bytes, once read (null: not yet, or the server has no push). */
let pushKeyBytes: Uint8Array<ArrayBuffer> | null = null;
let pushQueue: Promise<unknown> = Promise.resolve();

function setPush(patch: Partial<PushFacts>): void {
  pushFacts = { ...pushFacts, ...patch };
  setState({ push: derivePushState(pushFacts), notifications: pushFacts.permission });
}

function queued<T>(step: () => Promise<T>): Promise<T> {
  const run = pushQueue.then(step, step);
  pushQueue = run.catch(() => {});
  return run;
}

/** Whether there is anything to look up here at all (not on http://, not in an iPhone's Safari tab). */
function pushPossible(): boolean {
  const s = derivePushState({ ...pushFacts, worker: 'ready', server: 'yes', busy: null, subscribed: false, permission: 'default' });
  return s.kind === 'off';
}

/** A push route answered 404: this Loopback is older than push. */
function isNoPush(err: unknown): boolean {
  return err instanceof ApiError && err.status === 404;
}

/** Reads the server's key (once); false when the server has no push. */
async function loadPushKey(): Promise<boolean> {
  if (pushKeyBytes) return true;
  try {
    const { publicKey } = await api<PushKey>('GET', '/push/key');
    pushKeyBytes = base64UrlToBytes(publicKey);
    setPush({ server: 'yes' });
    return true;
  } catch (err) {
    if (isNoPush(err)) setPush({ server: 'no' });
    return false;
  }
}

/**
 * What the bell shows for the person signed in: whether this device is subscribed, and whether the
 * subscription is the one the server knows for them. A subscription the browser renewed by itself
 * (the worker's pushsubscriptionchange) is registered in place of the old one.
 */
export function checkPush(): Promise<void> {
  return queued(async () => {
    const token = state.token;
    if (!token) return;
    setPush({ busy: 'check', subscribed: null, knownId: false, permission: typeof Notification === 'undefined' ? 'unsupported' : Notification.permission });
    try {
      if (!pushPossible()) return;
      const reg = await registerWorker();
      setPush({ worker: reg ? 'ready' : 'failed' });
      if (!reg || !(await loadPushKey()) || state.token !== token) return;
      const sub = await reg.pushManager.getSubscription();
      const key = await keptKey(token);
      const kept = readKept(key);
      const usable = !!sub && sameKey(sub.options.applicationServerKey, pushKeyBytes!);
      if (kept && sub && usable && kept.endpoint === sub.endpoint) {
        setPush({ subscribed: true, knownId: true });
        return;
      }
      if (kept) {
        // The subscription this person had here is gone or was renewed: drop its id.
        forgetKept(key);
        api('DELETE', '/push/subscriptions/' + encodeURIComponent(kept.id)).catch(() => {});
        if (sub && usable && state.notifications === 'granted') {
          const { id } = await api<PushSubscriptionCreated>('POST', '/push/subscriptions', sub.toJSON());
          writeKept(key, { id, endpoint: sub.endpoint });
          setPush({ subscribed: true, knownId: true });
          return;
        }
      }
      setPush({ subscribed: !!sub, knownId: false });
    } catch (err) {
      if (isNoPush(err)) setPush({ server: 'no' });
      setPush({ subscribed: pushFacts.subscribed ?? false });
    } finally {
      setPush({ busy: null });
    }
  });
}

/**
 * Turns Web Push on for this device: the browser's permission (asked first, while the click still
 * counts as the person's, which Safari requires), a subscription with the server's key, and the
 * server's id for it, kept for this sign-in.
 */
export function turnPushOn(): Promise<void> {
  const token = state.token;
  if (!token || typeof Notification === 'undefined') return Promise.resolve();
  const asked = Notification.permission === 'default' ? Notification.requestPermission() : Promise.resolve(Notification.permission);
  setPush({ busy: 'on' });
  setState({ pushNote: null });
  return queued(async () => {
    let made: PushSubscription | null = null;
    setPush({ busy: 'on' }); // again: a check that ran first has cleared it
    try {
      const permission = await asked;
      setPush({ permission });
      if (permission !== 'granted') return;
      const reg = await registerWorker();
      if (!reg) return setPush({ worker: 'failed' });
      if (!(await loadPushKey())) {
        if (pushFacts.server !== 'no') setState({ pushNote: 'Loopback could not be reached. Try again when it is running.' });
        return;
      }
      let sub = await reg.pushManager.getSubscription();
      if (sub && !sameKey(sub.options.applicationServerKey, pushKeyBytes!)) {
        // Made with another key (the server's changed): it cannot be pushed to any more.
        await sub.unsubscribe();
        sub = null;
      }
      if (!sub) sub = made = await reg.pushManager.subscribe({ userVisibleOnly: true, applicationServerKey: pushKeyBytes! });
      const { id } = await api<PushSubscriptionCreated>('POST', '/push/subscriptions', sub.toJSON());
      if (state.token !== token) return;
      writeKept(await keptKey(token), { id, endpoint: sub.endpoint });
      setPush({ subscribed: true, knownId: true });
      toast('Notifications are on for this device.');
    } catch (err) {
      // A subscription the server did not take is not left behind.
      await made?.unsubscribe().catch(() => false);
      if (isNoPush(err)) setPush({ server: 'no' });
      else if (err instanceof DOMException && err.name === 'NotAllowedError' && Notification.permission === 'denied') setPush({ permission: 'denied' });
      else if (!(err instanceof ApiError && err.status === 401)) setState({ pushNote: pushProblem(err) });
    } finally {
      setPush({ busy: null });
    }
  });
}

/** Turns Web Push off for this device: off the server (by the kept id), and out of the browser. */
export function turnPushOff(): Promise<void> {
  const token = state.token;
  if (!token) return Promise.resolve();
  setPush({ busy: 'off' });
  setState({ pushNote: null });
  return queued(async () => {
    setPush({ busy: 'off' });
    try {
      const key = await keptKey(token);
      const kept = readKept(key);
      if (kept) {
        try {
          await api('DELETE', '/push/subscriptions/' + encodeURIComponent(kept.id));
        } catch (err) {
          // 404: already gone. Unreachable: once the browser drops the subscription below, the push
          // service refuses the server's next push to it, and the server forgets it then.
          if (err instanceof ApiError && err.status === 401) return;
        }
        forgetKept(key);
      }
      const reg = await registerWorker();
      await (await reg?.pushManager.getSubscription())?.unsubscribe();
      setPush({ subscribed: false, knownId: false });
      toast('Notifications are off for this device.');
    } catch (err) {
      setState({ pushNote: pushProblem(err) });
    } finally {
      setPush({ busy: null });
    }
  });
}

/**
 * The person signs out (or is signed out): this device stops getting their notifications. Their
 * subscription leaves the server (with the token on its way out; refused if it was revoked, and
 * then the browser's unsubscribe below ends it) and the browser.
 */
function pushSignedOut(token: string): void {
  pushKeyBytes = null;
  pushFacts = { ...pushFacts, server: 'unknown', subscribed: null, knownId: false, busy: 'check' };
  void queued(async () => {
    const key = await keptKey(token);
    const kept = readKept(key);
    if (!kept) return;
    forgetKept(key);
    await sendAs(token, 'DELETE', '/push/subscriptions/' + encodeURIComponent(kept.id)).catch(() => {});
    const reg = await registerWorker();
    const sub = await reg?.pushManager.getSubscription();
    if (sub && sub.endpoint === kept.endpoint) await sub.unsubscribe();
  });
}

function pushProblem(err: unknown): string {
  if (err instanceof ApiError) return err.message;
  const e = err as Error;
  if (e?.name === 'AbortError' || e?.name === 'NotSupportedError') {
    return `This browser could not subscribe to notifications (${e.message}). It needs its push service: is it online?`;
  }
  return e?.message ?? String(err);
}
