// The person's own marks on asks (contract revision 6): read from the server with every snapshot
// (so they follow the person across devices, and a reconnect catches up) and when the tab comes
// back; an ask opened is marked read; read, unread and snooze changes go to the server.

import { api } from '../api';
import { getState, setState } from '../app';
import { applyMark, isUnread, lastChange, sameMarks, type AskMark, type MarkInput } from '../marks';
import type { Ask } from '../types';
import { toast } from './toasts';

/** The person's marks (those on open asks) as the server has them. */
export async function fetchMarks(): Promise<Map<string, AskMark>> {
  const r = await api('GET', '/marks');
  return new Map(r.items.map((m) => [m.askId, m as AskMark]));
}

/** Reads the person's marks (those on open asks). */
export async function loadMarks(): Promise<void> {
  try {
    const next = await fetchMarks();
    // Read again on every (re)connect: unchanged, the page keeps what it has and draws nothing.
    if (!sameMarks(getState().marks, next)) setState({ marks: next });
  } catch {
    // not now: the next snapshot reads them again
  }
}

/** Changes a mark: shown at once, then as the server has it. */
export async function setMark(askId: string, input: MarkInput): Promise<boolean> {
  const put = (m: AskMark) => setState((s) => ({ marks: new Map(s.marks).set(askId, m) }));
  put(applyMark(getState().marks.get(askId), askId, input, Date.now()));
  try {
    const m = await api('PUT', '/asks/{id}/mark', { path: { id: askId }, body: input });
    put(m as AskMark);
    return true;
  } catch (err) {
    toast((err as Error).message, 'error');
    void loadMarks();
    return false;
  }
}

const marking = new Map<string, number>();

/**
 * How long an ask stays open before it counts as read: a walk through the list with j passes asks
 * it does not read (and marking each would be a write and two redraws at every key).
 */
export const READ_AFTER_MS = 600;

/** The person opened an ask: it is read, if it was not since it came (once per change of it). */
export function markOpened(a: Ask): void {
  if (a.status === 'closed' || !isUnread(getState().marks.get(a.id), a, Date.now())) return;
  const change = lastChange(a);
  if (marking.get(a.id) === change) return;
  marking.set(a.id, change);
  void setMark(a.id, { read: true });
}

export function startMarks(): void {
  document.addEventListener('visibilitychange', () => {
    if (document.visibilityState === 'visible' && getState().liveReady) void loadMarks();
  });
}
