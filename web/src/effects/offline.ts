// The last snapshot, readable offline. The page keeps what the event socket last told it (the open
// asks and the recent closed ones) in a cache of its own (the Cache API, beside the service worker's
// shell: the worker never touches it), tagged with a digest of the token it was read with. A load
// that cannot reach Loopback shows it, read-only in effect (Send is disabled offline), with a banner
// saying when it was heard; the live snapshot replaces it as soon as the socket is back. Signing
// out deletes it.

import { getState, setState } from '../app';
import { fromSnapshot } from '../merge';
import type { Ask } from '../types';

const CACHE = 'loopback-last-snapshot';
const KEY = '/__loopback/last-snapshot';

interface Kept {
  tag: string;
  savedAt: string;
  asks: Ask[];
}

async function tagOf(token: string): Promise<string> {
  const d = await crypto.subtle.digest('SHA-256', new TextEncoder().encode('loopback-snapshot:' + token));
  return Array.from(new Uint8Array(d).slice(0, 12), (b) => b.toString(16).padStart(2, '0')).join('');
}

function available(): boolean {
  return typeof caches !== 'undefined' && typeof crypto !== 'undefined' && !!crypto.subtle;
}

let saveTimer: ReturnType<typeof setTimeout> | null = null;

/** Keeps what the page holds now, a second after the last change (a burst writes once), when idle. */
export function keepSnapshot(): void {
  if (!available()) return;
  if (saveTimer) clearTimeout(saveTimer);
  saveTimer = setTimeout(() => {
    saveTimer = null;
    // When the page has nothing better to do: a person's key never waits behind this copy.
    if (typeof requestIdleCallback === 'function') requestIdleCallback(() => keepNow(), { timeout: 5000 });
    else keepNow();
  }, 1000);
}

function keepNow(): void {
  const s = getState();
  if (!s.token || !s.liveReady || s.staleSince) return;
  const token = s.token;
  void (async () => {
    try {
      const kept: Kept = { tag: await tagOf(token), savedAt: new Date().toISOString(), asks: [...s.live.values()] };
      const cache = await caches.open(CACHE);
      await cache.put(KEY, new Response(JSON.stringify(kept), { headers: { 'Content-Type': 'application/json' } }));
    } catch {
      // no room, or no cache here: nothing is kept
    }
  })();
}

/** Shows the kept snapshot when the page has nothing live to show (an offline load). */
export async function showKeptSnapshot(): Promise<boolean> {
  if (!available()) return false;
  const token = getState().token;
  if (!token || getState().liveReady) return false;
  try {
    const cache = await caches.open(CACHE);
    const res = await cache.match(KEY);
    if (!res) return false;
    const kept = (await res.json()) as Kept;
    if (kept.tag !== (await tagOf(token))) return false;
    const s = getState();
    if (s.token !== token || s.liveReady) return false;
    setState({ live: fromSnapshot({ open: kept.asks.filter((a) => a.status !== 'closed'), recent: kept.asks.filter((a) => a.status === 'closed') } as never), liveReady: true, staleSince: kept.savedAt });
    return true;
  } catch {
    return false;
  }
}

/** Signing out forgets it. */
export function forgetKeptSnapshot(): void {
  if (saveTimer) clearTimeout(saveTimer);
  saveTimer = null;
  if (available()) void caches.delete(CACHE).catch(() => {});
}
