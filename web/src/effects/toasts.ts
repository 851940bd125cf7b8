// Toasts: one at a time, gone after a while (longer for an error; a held reply's until it is sent).

import { setState } from '../app';
import { toastExpired, toastShown } from '../store';

let toastSeq = 0;
let toastTimer: ReturnType<typeof setTimeout> | null = null;

export function toast(text: string, kind: 'ok' | 'error' = 'ok', opts: { undo?: boolean; ms?: number } = {}): void {
  const id = ++toastSeq;
  setState(toastShown(opts.undo ? { text, kind, id, undo: true } : { text, kind, id }));
  if (toastTimer) clearTimeout(toastTimer);
  toastTimer = setTimeout(() => setState((s) => toastExpired(s, id)), opts.ms ?? (kind === 'error' ? 8000 : 3500));
}
