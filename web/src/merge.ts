// How the inbox keeps what it shows current. Pure functions, unit tested (test/unit/merge.test.ts).
//
// The socket sends a snapshot first and then every change; a reply's response carries the ask as
// the server left it; history pages and single reads bring asks too. They can arrive in any order
// (a response may come after the event of a later change), so one rule decides: an ask replaces the
// copy held under its id only when it is newer by `updatedAt` (a socket frame also on a tie: its
// frames are in order). A snapshot replaces everything the socket gave before: whatever it no
// longer holds is gone (closed long ago, or never ours).

import { compareTimes } from './time';
import type { Ask, Snapshot } from './types';

export type AskMap = ReadonlyMap<string, Ask>;

/** Whether `next` should replace `held`: there is none held, or `next` is newer by updatedAt. */
export function isNewer(next: Ask, held: Ask | undefined): boolean {
  return !held || compareTimes(next.updatedAt, held.updatedAt) > 0;
}

/** The asks of a snapshot, by id. An ask in both lists (it closed while the snapshot was read) keeps its newer copy. */
export function fromSnapshot(s: Snapshot): AskMap {
  const m = new Map<string, Ask>();
  for (const a of [...(s.open ?? []), ...(s.recent ?? [])]) {
    if (isNewer(a, m.get(a.id))) m.set(a.id, a);
  }
  return m;
}

/** Merges one ask in; returns the same map when it is not newer than the copy held. */
export function mergeAsk(m: AskMap, a: Ask): AskMap {
  if (!isNewer(a, m.get(a.id))) return m;
  const next = new Map(m);
  next.set(a.id, a);
  return next;
}

/**
 * Merges an ask from a socket frame (docs/design/events.md, "How a client merges"): it replaces the
 * copy held unless that copy is later by updatedAt; an equal updatedAt takes the frame, since a
 * socket's frames are in order and two commits can share a microsecond.
 */
export function mergeFrame(m: AskMap, a: Ask): AskMap {
  const held = m.get(a.id);
  if (held) {
    const order = compareTimes(held.updatedAt, a.updatedAt);
    if (order > 0) return m;
    // The same ask again (a delta holds the ask at the watermark the page offered): nothing to draw.
    if (order === 0 && JSON.stringify(held) === JSON.stringify(a)) return m;
  }
  const next = new Map(m);
  next.set(a.id, a);
  return next;
}

/** Merges several asks in; returns the same map when none is newer. */
export function mergeAsks(m: AskMap, asks: readonly Ask[]): AskMap {
  let out = m;
  for (const a of asks) out = mergeAsk(out, a);
  return out;
}

/** Newest first by createdAt, then by id for a stable order. */
export function byCreatedDesc(a: Ask, b: Ask): number {
  return compareTimes(b.createdAt, a.createdAt) || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0);
}

/** Most recently closed first. */
export function byClosedDesc(a: Ask, b: Ask): number {
  return compareTimes(b.closedAt ?? b.updatedAt, a.closedAt ?? a.updatedAt) || (a.id < b.id ? -1 : 1);
}

const openCache = new WeakMap<AskMap, Map<string, readonly Ask[]>>();

/**
 * Open asks, newest first, of one project or of all (project ''). The list is kept for the map it
 * came from (maps are never changed in place: a change is a new map), so the many reads of one
 * render sort once; callers must not change it.
 */
export function openAsks(m: AskMap, project = ''): readonly Ask[] {
  let byProject = openCache.get(m);
  if (!byProject) openCache.set(m, (byProject = new Map()));
  const held = byProject.get(project);
  if (held) return held;
  const out: Ask[] = [];
  for (const a of m.values()) {
    if (a.status !== 'closed' && (!project || a.project === project)) out.push(a);
  }
  out.sort(byCreatedDesc);
  byProject.set(project, out);
  return out;
}

/**
 * The history list: closed asks from the socket and from the pages read so far, most recently
 * closed first, each once (the newer copy). Closed asks the socket holds that are older than the
 * last page read are left out until paging reaches them, so the list never has a gap in it.
 */
export function historyList(live: AskMap, pages: AskMap, oldestPaged: string | null, project = ''): Ask[] {
  const merged = new Map<string, Ask>();
  for (const a of pages.values()) merged.set(a.id, a);
  for (const a of live.values()) {
    if (a.status !== 'closed') continue;
    if (oldestPaged !== null && compareTimes(a.closedAt ?? a.updatedAt, oldestPaged) < 0) continue;
    if (isNewer(a, merged.get(a.id))) merged.set(a.id, a);
  }
  const out = [...merged.values()].filter((a) => a.status === 'closed' && (!project || a.project === project));
  return out.sort(byClosedDesc);
}

/** Every project named by any ask held, sorted. */
export function projectsOf(...maps: AskMap[]): string[] {
  const s = new Set<string>();
  for (const m of maps) for (const a of m.values()) if (a.project) s.add(a.project);
  return [...s].sort((a, b) => a.localeCompare(b));
}

/** Whether a change brings the person something new to do: a new ask, or the move coming back to them. */
export function needsPerson(prev: Ask | undefined, next: Ask): boolean {
  return next.status === 'awaiting_human' && (!prev || prev.status !== 'awaiting_human');
}
