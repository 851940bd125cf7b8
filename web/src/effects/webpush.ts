// Web Push for this device: the bell's steps (push.ts has the rules), run against the browser's
// service worker and push manager and the server's push routes, their outcome put in the store.

import { api, ApiError, sendAs } from '../api';
import { getState, setState, startingPushFacts } from '../app';
import {
  base64UrlToBytes,
  derivePushState,
  forgetKept,
  keptKey,
  readKept,
  registerWorker,
  sameKey,
  writeKept,
  type PushFacts,
} from '../push';
import type { PushSubscriptionInput } from '../types';
import { toast } from './toasts';

// ------------------------------------------------------------------------------------ push --
//
// The bell turns Web Push on and off for this device (push.ts has the rules). Every step runs in
// turn (`pushQueue`), so a sign-out's unsubscribe never crosses the next sign-in's check.

let pushFacts: PushFacts = startingPushFacts;
/** The server's key as bytes, once read (null: not yet, or the server has no push). */
let pushKeyBytes: Uint8Array<ArrayBuffer> | null = null;
let pushQueue: Promise<unknown> = Promise.resolve();

export function setPush(patch: Partial<PushFacts>): void {
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

/** The server was not reachable when the bell looked (a start offline): look again now. */
export function recheckPushIfUnknown(): void {
  if (pushFacts.server === 'unknown' && pushFacts.busy === null && pushPossible()) void checkPush();
}

/** A push route answered 404: this Loopback is older than push. */
function isNoPush(err: unknown): boolean {
  return err instanceof ApiError && err.status === 404;
}

/** Reads the server's key (once); false when the server has no push. */
/** A subscription as the server takes it: the browser's own JSON form of it (the contract's PushSubscriptionInput). */
function subscriptionInput(sub: PushSubscription): PushSubscriptionInput {
  return sub.toJSON() as PushSubscriptionInput;
}

async function loadPushKey(): Promise<boolean> {
  if (pushKeyBytes) return true;
  try {
    const { publicKey } = await api('GET', '/push/key');
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
    const token = getState().token;
    if (!token) return;
    setPush({ busy: 'check', subscribed: null, knownId: false, permission: typeof Notification === 'undefined' ? 'unsupported' : Notification.permission });
    try {
      if (!pushPossible()) return;
      const reg = await registerWorker();
      setPush({ worker: reg ? 'ready' : 'failed' });
      if (!reg || !(await loadPushKey()) || getState().token !== token) return;
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
        api('DELETE', '/push/subscriptions/{id}', { path: { id: kept.id } }).catch(() => {});
        if (sub && usable && getState().notifications === 'granted') {
          const { id } = await api('POST', '/push/subscriptions', { body: subscriptionInput(sub) });
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
  const token = getState().token;
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
      const { id } = await api('POST', '/push/subscriptions', { body: subscriptionInput(sub) });
      if (getState().token !== token) return;
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
  const token = getState().token;
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
          await api('DELETE', '/push/subscriptions/{id}', { path: { id: kept.id } });
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
export function pushSignedOut(token: string): void {
  pushKeyBytes = null;
  pushFacts = { ...pushFacts, server: 'unknown', subscribed: null, knownId: false, busy: 'check' };
  void queued(async () => {
    const key = await keptKey(token);
    const kept = readKept(key);
    if (!kept) return;
    forgetKept(key);
    await sendAs(token, 'DELETE', '/push/subscriptions/{id}', { path: { id: kept.id } }).catch(() => {});
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
