// Triage, pure: which asks the list shows under its filters (project, kind, whose move: all over
// what the page holds, nothing asked of the server), which ask comes next after an answer, and the
// page's triage settings. The edges that act on them are effects/triage.ts and the list.

import type { MoveFilter } from './store';
import type { Ask, AskKind } from './types';

export interface Filters {
  project: string;
  kind: AskKind | '';
  move: MoveFilter;
}

export function matches(a: Ask, f: Filters): boolean {
  if (f.project && a.project !== f.project) return false;
  if (f.kind && a.kind !== f.kind) return false;
  if (f.move === 'yours' && a.status !== 'awaiting_human') return false;
  if (f.move === 'agents' && a.status !== 'awaiting_agent') return false;
  // 'snoozed' is not whose move: the list keeps the snoozed asks (AskList.tsx listFor).
  return true;
}

export function filtered(asks: readonly Ask[], f: Filters): Ask[] {
  return f.project || f.kind || f.move ? asks.filter((a) => matches(a, f)) : [...asks];
}

/**
 * The ask to open after answering `id`: the next one down the list whose move is the person's,
 * else the nearest one above; never `id` itself nor one whose reply is waiting to be sent (`skip`).
 * `list` is the list as shown (ids in order, with their status); null when nothing is left.
 */
export function nextAfter(list: readonly Ask[], id: string, skip: ReadonlySet<string> = new Set()): string | null {
  const ok = (a: Ask) => a.status === 'awaiting_human' && a.id !== id && !skip.has(a.id);
  const i = list.findIndex((a) => a.id === id);
  if (i < 0) return list.find(ok)?.id ?? null;
  for (let j = i + 1; j < list.length; j++) if (ok(list[j])) return list[j].id;
  for (let j = i - 1; j >= 0; j--) if (ok(list[j])) return list[j].id;
  return null;
}

export interface TriageSettings {
  /** How long a reply is held, so it can be undone, before it is sent; 0 sends at once. */
  undoSeconds: number;
  /** After an answer, open the next ask that is the person's move (a wide screen) or go back to the list (a phone). */
  advance: boolean;
  /** New asks wait behind the "N new" pill instead of pushing the list down. */
  hold: boolean;
}

export const SETTINGS_KEY = 'loopback.triage';
export const DEFAULT_SETTINGS: TriageSettings = { undoSeconds: 5, advance: true, hold: true };

/** The settings kept on this device (localStorage `loopback.triage`, JSON), each falling back to its default. */
export function parseSettings(raw: string | null): TriageSettings {
  let v: Partial<TriageSettings> = {};
  try {
    const p = raw ? (JSON.parse(raw) as unknown) : null;
    if (p && typeof p === 'object') v = p as Partial<TriageSettings>;
  } catch {
    // unreadable: the defaults
  }
  const undo = typeof v.undoSeconds === 'number' && Number.isFinite(v.undoSeconds) ? Math.min(30, Math.max(0, v.undoSeconds)) : DEFAULT_SETTINGS.undoSeconds;
  return {
    undoSeconds: undo,
    advance: typeof v.advance === 'boolean' ? v.advance : DEFAULT_SETTINGS.advance,
    hold: typeof v.hold === 'boolean' ? v.hold : DEFAULT_SETTINGS.hold,
  };
}

export function readSettings(): TriageSettings {
  try {
    return parseSettings(localStorage.getItem(SETTINGS_KEY));
  } catch {
    return DEFAULT_SETTINGS;
  }
}

/**
 * What the search box searches, from where it is typed: under any filter, what the list shows
 * (the open asks under those filters, snoozed ones only under "Snoozed" and never elsewhere,
 * as the list); on the Open tab with no filter, every ask, open and closed; on History, the
 * closed asks. `state` is the server's (GET /api/v1/search); `snoozed` is what the page keeps of
 * its answer, by the person's own marks, which the server's search does not know (null: all);
 * `words` say it ("Searching snoozed asks in web-app").
 */
export function searchScope(
  tab: 'inbox' | 'history',
  f: Filters,
): { state: '' | 'open' | 'yours' | 'agents' | 'closed'; snoozed: boolean | null; words: string } {
  const kinds = f.kind ? `${f.kind}s` : 'asks';
  const where = f.project ? ` in ${f.project}` : '';
  if (tab === 'history') return { state: 'closed', snoozed: null, words: `closed ${kinds}${where}` };
  if (!f.project && !f.kind && !f.move) return { state: '', snoozed: null, words: 'every ask, open and closed' };
  switch (f.move) {
    case 'yours':
      return { state: 'yours', snoozed: false, words: `open ${kinds}${where} that are your move` };
    case 'agents':
      return { state: 'agents', snoozed: false, words: `open ${kinds}${where} that are the agent's move` };
    case 'snoozed':
      return { state: 'open', snoozed: true, words: `snoozed ${kinds}${where}` };
    default:
      return { state: 'open', snoozed: false, words: `open ${kinds}${where}` };
  }
}
