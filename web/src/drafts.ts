// Drafts: whatever the person has typed or picked on an ask, kept in localStorage under the ask's
// id as they go, so a reload, a crash or a closed tab loses nothing. A draft is removed when its
// reply is sent (and accepted), and drafts untouched for 30 days are pruned at start-up.

import { useState } from 'preact/hooks';

const PREFIX = 'loopback.draft.';
const MAX_AGE_MS = 30 * 24 * 3600 * 1000;

interface Stored<T> {
  savedAt: number;
  value: T;
}

export function loadDraft<T>(askId: string): T | null {
  try {
    const raw = localStorage.getItem(PREFIX + askId);
    if (!raw) return null;
    return (JSON.parse(raw) as Stored<T>).value ?? null;
  } catch {
    return null;
  }
}

export function saveDraft<T>(askId: string, value: T): void {
  try {
    localStorage.setItem(PREFIX + askId, JSON.stringify({ savedAt: Date.now(), value } satisfies Stored<T>));
  } catch {
    // storage full or unavailable: the draft lives as long as the page
  }
}

export function clearDraft(askId: string): void {
  try {
    localStorage.removeItem(PREFIX + askId);
  } catch {
    // nothing kept
  }
}

export function hasDraft(askId: string): boolean {
  try {
    return localStorage.getItem(PREFIX + askId) !== null;
  } catch {
    return false;
  }
}

/** Forgets every draft (on signing out). */
export function clearAllDrafts(): void {
  pruneDrafts(Number.POSITIVE_INFINITY);
}

export function pruneDrafts(now = Date.now()): void {
  try {
    for (let i = localStorage.length - 1; i >= 0; i--) {
      const key = localStorage.key(i);
      if (!key?.startsWith(PREFIX)) continue;
      try {
        const s = JSON.parse(localStorage.getItem(key) ?? '') as Stored<unknown>;
        if (!(now - s.savedAt < MAX_AGE_MS)) localStorage.removeItem(key);
      } catch {
        localStorage.removeItem(key);
      }
    }
  } catch {
    // no storage
  }
}

/**
 * A draft as component state: starts from what was kept for the ask (else `empty`), and is kept
 * again on every change. `isEmpty` decides when there is nothing worth keeping.
 */
export function useDraft<T>(askId: string, empty: () => T, isEmpty: (v: T) => boolean): [T, (v: T) => void, () => void] {
  // Views are keyed by ask id, so askId never changes within one component.
  const [value, setValue] = useState<T>(() => loadDraft<T>(askId) ?? empty());
  const set = (v: T) => {
    setValue(v);
    if (isEmpty(v)) clearDraft(askId);
    else saveDraft(askId, v);
  };
  const reset = () => {
    clearDraft(askId);
    setValue(empty());
  };
  return [value, set, reset];
}
