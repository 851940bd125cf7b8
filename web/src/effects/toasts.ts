// Toasts: one at a time, gone after a while (longer for an error).

import { setState } from '../app';
import { toastExpired, toastShown } from '../store';

let toastSeq = 0;
let toastTimer: ReturnType<typeof setTimeout> | null = null;

export function toast(text: string, kind: 'ok' | 'error' = 'ok'): void {
  const id = ++toastSeq;
  setState(toastShown({ text, kind, id }));
  if (toastTimer) clearTimeout(toastTimer);
  toastTimer = setTimeout(() => setState((s) => toastExpired(s, id)), kind === 'error' ? 8000 : 3500);
}
