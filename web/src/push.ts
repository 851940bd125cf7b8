// Web Push on this device: what the bell can do here, and the browser's side of it (the service
// worker, the push subscription, the id the server gave it). state.ts runs the steps; the views show
// the state. The pure parts (derivePushState, base64UrlToBytes, isIOS) are unit tested.
//
// A subscription belongs to the browser, one per site, not to whoever is signed in. So the id the
// server returned for it (`POST /push/subscriptions`) is kept per sign-in (under a hash of the
// token), the bell shows *on* only when the browser's subscription is the one that id names, and
// signing out takes it off the server and out of the browser: nobody else signing in on this
// device gets the last person's notifications.

import { OPEN_MESSAGE } from './sw/policy';

/** What the bell shows. */
export type PushState =
  /** Finding out, or turning on or off. */
  | { kind: 'working'; doing: 'check' | 'on' | 'off' }
  /** Not here: `browser` (no service worker or Push API), `insecure` (http:// other than localhost),
   * `worker` (the service worker would not start), `server` (a Loopback without push: the routes 404). */
  | { kind: 'unsupported'; why: 'browser' | 'insecure' | 'worker' | 'server' }
  /** iPhone or iPad in Safari: Web Push works only from the Home Screen (iOS 16.4+). */
  | { kind: 'ios-home-screen' }
  /** The person (or a policy) blocked notifications for the site. */
  | { kind: 'denied' }
  | { kind: 'off' }
  /** This device gets notifications: the browser's subscription is the one the server knows. */
  | { kind: 'on' };

/** What the device can do: looked up once, at start-up. */
export interface DeviceFacts {
  secure: boolean;
  serviceWorker: boolean;
  pushManager: boolean;
  notification: boolean;
  ios: boolean;
  /** Opened from the Home Screen (or installed), not in a browser tab. */
  standalone: boolean;
}

/** Everything the bell's state is made from. */
export interface PushFacts extends DeviceFacts {
  permission: NotificationPermission | 'unsupported';
  worker: 'pending' | 'ready' | 'failed';
  /** Whether the server does push: 'no' once a push route answered 404. */
  server: 'unknown' | 'yes' | 'no';
  /** Whether the browser holds a subscription (null: not looked up yet). */
  subscribed: boolean | null;
  /** Whether that subscription is the one whose id is kept for this sign-in. */
  knownId: boolean;
  busy: null | 'check' | 'on' | 'off';
}

/** The bell's state, in the order that matters: what cannot change here first, then the person's choice. */
export function derivePushState(f: PushFacts): PushState {
  // Before the iPhone's advice: on http:// a phone gets no push from the Home Screen either.
  if (!f.secure) return { kind: 'unsupported', why: 'insecure' };
  if (f.ios && !f.standalone) return { kind: 'ios-home-screen' };
  if (!f.serviceWorker || !f.pushManager || !f.notification) return { kind: 'unsupported', why: 'browser' };
  if (f.worker === 'failed') return { kind: 'unsupported', why: 'worker' };
  if (f.busy === 'on' || f.busy === 'off') return { kind: 'working', doing: f.busy };
  if (f.server === 'no') return { kind: 'unsupported', why: 'server' };
  if (f.permission === 'denied') return { kind: 'denied' };
  if (f.busy === 'check' || f.worker === 'pending' || f.subscribed === null) return { kind: 'working', doing: 'check' };
  return f.subscribed && f.knownId ? { kind: 'on' } : { kind: 'off' };
}

/** Whether the in-page notifications of old (while this tab is open) are the ones to use: Web Push is not. */
export function usesTabNotifications(s: PushState): boolean {
  return s.kind === 'unsupported' && s.why !== 'insecure';
}

/** An iPhone, iPod or iPad, including an iPad that says it is a Mac (iPadOS's desktop-class Safari). */
export function isIOS(userAgent: string, platform: string, maxTouchPoints: number): boolean {
  return /\b(iPhone|iPad|iPod)\b/.test(userAgent) || (platform === 'MacIntel' && maxTouchPoints > 1);
}

export function deviceFacts(): DeviceFacts {
  const nav = navigator as Navigator & { standalone?: boolean };
  return {
    secure: typeof isSecureContext === 'boolean' ? isSecureContext : location.protocol === 'https:',
    serviceWorker: 'serviceWorker' in navigator,
    pushManager: typeof PushManager !== 'undefined',
    notification: typeof Notification !== 'undefined',
    ios: isIOS(navigator.userAgent, navigator.platform ?? '', navigator.maxTouchPoints ?? 0),
    standalone: nav.standalone === true || (typeof matchMedia === 'function' && matchMedia('(display-mode: standalone)').matches),
  };
}

/** What the bell knows on page load, before anything was looked up. */
export function initialPushFacts(permission: PushFacts['permission']): PushFacts {
  return { ...deviceFacts(), permission, worker: 'pending', server: 'unknown', subscribed: null, knownId: false, busy: 'check' };
}

/**
 * A VAPID public key (base64url, RFC 4648 §5, padding optional) as the bytes `applicationServerKey`
 * takes. Throws on anything that is not base64url.
 */
export function base64UrlToBytes(s: string): Uint8Array<ArrayBuffer> {
  const t = s.trim();
  if (!/^[A-Za-z0-9_-]*={0,2}$/.test(t) || t.replace(/=+$/, '').length % 4 === 1) throw new Error('not base64url');
  const b64 = t.replace(/=+$/, '').replace(/-/g, '+').replace(/_/g, '/');
  const bin = atob(b64 + '='.repeat((4 - (b64.length % 4)) % 4));
  const out = new Uint8Array(bin.length);
  for (let i = 0; i < bin.length; i++) out[i] = bin.charCodeAt(i);
  return out;
}

/** Whether a subscription was made with this key (a server whose key changed cannot push to it). */
export function sameKey(a: ArrayBuffer | null | undefined, b: Uint8Array): boolean {
  if (!a || a.byteLength !== b.length) return false;
  const x = new Uint8Array(a);
  return x.every((v, i) => v === b[i]);
}

// -------------------------------------------------------------------------- kept on the device --

/** What is kept for a sign-in whose device is subscribed: the server's id and the endpoint it names. */
export interface KeptSubscription {
  id: string;
  endpoint: string;
}

const PREFIX = 'loopback.push.';

/** Where a sign-in's subscription id is kept: a hash of its token, never the token itself. */
export async function keptKey(token: string): Promise<string> {
  const digest = await crypto.subtle.digest('SHA-256', new TextEncoder().encode(token));
  const hex = Array.from(new Uint8Array(digest).slice(0, 12), (b) => b.toString(16).padStart(2, '0')).join('');
  return PREFIX + hex;
}

export function readKept(key: string): KeptSubscription | null {
  try {
    const v = JSON.parse(localStorage.getItem(key) ?? 'null') as Partial<KeptSubscription> | null;
    return v && typeof v.id === 'string' && typeof v.endpoint === 'string' ? { id: v.id, endpoint: v.endpoint } : null;
  } catch {
    return null;
  }
}

export function writeKept(key: string, v: KeptSubscription): void {
  try {
    localStorage.setItem(key, JSON.stringify(v));
  } catch {
    // not kept: the bell will say *off* after a reload, and turning it on again registers it again
  }
}

export function forgetKept(key: string): void {
  try {
    localStorage.removeItem(key);
  } catch {
    // nothing kept
  }
}

// ------------------------------------------------------------------------------ the worker --

let registration: Promise<ServiceWorkerRegistration | null> | null = null;

/**
 * Registers the service worker (offline shell and push, src/sw/sw.ts) once the page has loaded, so
 * its first download of the shell does not compete with the page's own. Resolves with the
 * registration once its worker is active, or null when there is none (no support, http://, or the
 * worker failed to install).
 */
export function registerWorker(): Promise<ServiceWorkerRegistration | null> {
  registration ??= (async () => {
    if (!('serviceWorker' in navigator) || !isSecureContext) return null;
    if (document.readyState !== 'complete') await new Promise((r) => addEventListener('load', r, { once: true }));
    try {
      return await active(await navigator.serviceWorker.register('/sw.js', { scope: '/' }));
    } catch {
      return null; // no worker here (the CSP of an older deployment, a private mode without storage, …)
    }
  })();
  return registration;
}

/** The registration once its worker is active; null if the new worker fails and there is none. */
function active(reg: ServiceWorkerRegistration): Promise<ServiceWorkerRegistration | null> {
  if (reg.active) return Promise.resolve(reg);
  const w = reg.installing ?? reg.waiting;
  if (!w) return Promise.resolve(null);
  return new Promise((resolve) => {
    w.addEventListener('statechange', () => {
      if (w.state === 'activated') resolve(reg);
      else if (w.state === 'redundant') resolve(reg.active ? reg : null);
    });
  });
}

/**
 * Listens for the worker asking this page to open an ask (a notification was clicked): the page
 * opens it in place, without a reload, and says so on the port that came with the message.
 */
export function listenToWorker(open: (path: string) => void): void {
  if (!('serviceWorker' in navigator)) return;
  navigator.serviceWorker.addEventListener('message', (e) => {
    const m = e.data as { type?: unknown; path?: unknown } | null;
    if (m?.type !== OPEN_MESSAGE || typeof m.path !== 'string' || !m.path.startsWith('/')) return;
    open(m.path);
    e.ports[0]?.postMessage('opened');
  });
  navigator.serviceWorker.startMessages();
}
