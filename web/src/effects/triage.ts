// The triage flow's edges: a reply held for a few seconds so it can be undone (then sent; the toast
// says so, and the draft stays until it is sent), the next ask opened after an answer, and the
// list's position kept while an ask is open on a phone.

import { getState, setState } from '../app';
import { readSettings } from '../triage';
import { nextAfter } from '../triage';
import type { Ask, Reply } from '../types';
import { sendReply } from './asks';
import { navigate } from './router';
import { toast } from './toasts';

interface Held {
  /** One ask, or several dismissed together (bulk dismiss). */
  asks: Ask[];
  reply: Reply;
  timer: ReturnType<typeof setTimeout>;
  settle: (sent: boolean) => void;
}

let held: Held | null = null;

/**
 * Sends a reply after the undo time (at once when it is 0). Resolves true once the server took it,
 * false when it was undone or refused (a refusal is shown by sendReply).
 */
export function queueReply(ask: Ask, reply: Reply, label: string): Promise<boolean> {
  return hold([ask], reply, label);
}

/**
 * Dismisses several open asks in one action (bulk dismiss), held for the undo time like any reply:
 * Undo keeps every one of them open. Resolves true once the server took every dismissal.
 */
export function queueDismissAll(asks: Ask[]): Promise<boolean> {
  if (asks.length === 1) return hold(asks, { outcome: 'dismissed' }, 'Dismissing');
  return hold(asks, { outcome: 'dismissed' }, `Dismissing ${asks.length} asks`);
}

function hold(asks: Ask[], reply: Reply, label: string): Promise<boolean> {
  const { undoSeconds } = readSettings();
  if (undoSeconds <= 0) return deliver(asks, reply);
  // One at a time: a reply still held goes now, before this one is held.
  flushPending();
  return new Promise<boolean>((settle) => {
    const due = Date.now() + undoSeconds * 1000;
    const timer = setTimeout(() => void go(), undoSeconds * 1000);
    held = { asks, reply, timer, settle };
    setState({ pending: { askId: asks[0].id, ids: asks.map((a) => a.id), due, label } });
    const keeps = asks.length > 1 ? 'Undo keeps them open.' : 'Undo keeps your draft.';
    toast(`${label} in ${undoSeconds} s. ${keeps}`, 'ok', { undo: true, ms: undoSeconds * 1000 });
  });
}

async function deliver(asks: Ask[], reply: Reply): Promise<boolean> {
  let ok = 0;
  for (const a of asks) {
    try {
      await sendReply(a, reply, asks.length > 1);
      ok++;
    } catch {
      // shown by sendReply; the others still go
    }
  }
  if (asks.length > 1 && ok === asks.length) toast(`Dismissed ${ok} asks.`, 'ok');
  return ok === asks.length;
}

async function go(): Promise<void> {
  const h = held;
  if (!h) return;
  held = null;
  clearTimeout(h.timer);
  const ok = await deliver(h.asks, h.reply);
  setState((s) => (s.pending?.askId === h.asks[0].id ? { pending: null } : {}));
  h.settle(ok);
}

/** Sends a held reply now (another reply, the page going away). */
export function flushPending(): void {
  if (held) void go();
}

/** Undoes the held reply: nothing is sent, the ask opens again with its draft. */
export function undoPending(): boolean {
  const h = held;
  if (!h) return false;
  held = null;
  clearTimeout(h.timer);
  setState({ pending: null, toast: null });
  h.settle(false);
  if (h.asks.length > 1) {
    toast(`Undone: nothing was dismissed. The ${h.asks.length} asks stay open.`);
    return true;
  }
  navigate({ name: 'ask', id: h.asks[0].id });
  toast('Undone: nothing was sent. Your draft is kept.');
  return true;
}

/** Whether the page is wide enough for the list and an ask side by side. */
export function wide(): boolean {
  return matchMedia('(min-width: 960px)').matches;
}

/**
 * After an answer (held or sent): on a wide screen the next ask whose move is the person's opens and
 * its row takes the focus, so `j` goes on from there; on a phone the list comes back where it was.
 * `list` is the list as shown when the answer was given.
 */
export function advanceFrom(askId: string, list: readonly Ask[], focusRow: (id: string) => void): void {
  if (!readSettings().advance) return;
  const s = getState();
  if (s.route.name !== 'ask' || s.route.id !== askId) return; // the person has moved on already
  const skip = new Set<string>(s.pending ? (s.pending.ids ?? [s.pending.askId]) : []);
  if (!wide()) {
    navigate({ name: 'inbox' });
    return;
  }
  const next = nextAfter(list, askId, skip);
  if (!next) {
    navigate({ name: 'inbox' });
    return;
  }
  navigate({ name: 'ask', id: next });
  requestAnimationFrame(() => focusRow(next));
}

/**
 * The page going away, or hidden (a phone switching apps freezes its timers), sends what it holds
 * at once; its draft stays until the server has it.
 */
export function startTriage(): void {
  addEventListener('pagehide', flushPending);
  document.addEventListener('visibilitychange', () => {
    if (document.visibilityState === 'hidden') flushPending();
  });
  addEventListener('online', () => setState({ online: true }));
  addEventListener('offline', () => setState({ online: false }));
}
