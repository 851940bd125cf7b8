// A briefing's points as they stand, and the person's next `responded`, judged exactly as the
// server judges it (shared/ask/briefing.go: BriefingPoints, checkResponded; docs/design/asks.md),
// so the inbox never sends a reply the server would refuse with 422 and can say why it won't.

import type { Actor, AgentEntry, Block, BriefingAsk, HumanEntry, Point, PointReply, Responded } from './types';

export interface PointState {
  point: Point;
  /** '' for a top-level point. */
  parent: string;
  /** 1 for `3`, 2 for `3.1`, 3 for `3.1.1`. */
  depth: number;
  children: string[];
  /** The person is done with it, or with a point above it. */
  resolved: boolean;
  /** The person wrote on it without resolving it, and the agent has not answered since. */
  pending: boolean;
  /** What was said on this point, oldest first: the person's words and the agent's answers. */
  turns: PointTurn[];
  /** The section it is listed under (top-level points only). */
  section: number;
}

export type PointTurn =
  | { author: 'human'; text?: string; resolved: boolean; at: string; by?: Actor }
  | { author: 'agent'; answer: string; content?: Block[]; at: string; subPoints: string[] };

export interface Points {
  order: string[];
  byId: Map<string, PointState>;
}

/** Replays a briefing's prompt and thread into the state of every point (BriefingPoints in Go). */
export function briefingPoints(a: BriefingAsk): Points {
  const ps: Points = { order: [], byId: new Map() };
  a.prompt.sections.forEach((s, i) => {
    for (const p of s.points) add(ps, p, '', i);
  });
  for (const e of a.thread) {
    if (e.author === 'human' && e.reply.outcome === 'responded') {
      applyResponded(ps, e.reply.points, e);
    } else if (e.author === 'agent' && e.point) {
      const st = ps.byId.get(e.point);
      if (!st) continue;
      st.pending = false;
      const subs: string[] = [];
      for (const sub of e.points ?? []) {
        add(ps, sub, e.point, st.section);
        subs.push(sub.id);
      }
      st.turns.push({ author: 'agent', answer: e.answer, content: e.content, at: e.at, subPoints: subs });
    }
  }
  return ps;
}

function add(ps: Points, p: Point, parent: string, section: number) {
  ps.byId.set(p.id, {
    point: p,
    parent,
    depth: p.id.split('.').length,
    children: [],
    resolved: false,
    pending: false,
    turns: [],
    section,
  });
  ps.order.push(p.id);
  if (parent) ps.byId.get(parent)?.children.push(p.id);
}

function applyResponded(ps: Points, replies: readonly PointReply[], entry?: HumanEntry) {
  for (const r of replies) {
    const st = ps.byId.get(r.point);
    if (!st) continue;
    if (entry) st.turns.push({ author: 'human', text: r.text, resolved: !!r.resolved, at: entry.at, by: entry.by });
    if (r.resolved) {
      resolve(ps, r.point);
    } else if ((r.text ?? '').trim() !== '' && !st.resolved) {
      st.pending = true;
    }
  }
}

function resolve(ps: Points, id: string) {
  const st = ps.byId.get(id);
  if (!st) return;
  st.resolved = true;
  st.pending = false;
  for (const c of st.children) resolve(ps, c);
}

function allResolved(ps: Points): boolean {
  for (const st of ps.byId.values()) if (!st.resolved) return false;
  return true;
}

function pendingIds(ps: Points): string[] {
  return ps.order.filter((id) => ps.byId.get(id)!.pending);
}

/** The points the agent owes an answer on, in order. */
export function pending(ps: Points): string[] {
  return pendingIds(ps);
}

/** Open (unresolved) points, in order. */
export function openPoints(ps: Points): string[] {
  return ps.order.filter((id) => !ps.byId.get(id)!.resolved);
}

function clone(ps: Points): Points {
  const byId = new Map<string, PointState>();
  for (const [id, st] of ps.byId) byId.set(id, { ...st, children: st.children, turns: st.turns });
  return { order: ps.order, byId };
}

/** What the person has typed and toggled on a briefing, per point id. */
export interface BriefingDraft {
  texts: Record<string, string>;
  resolved: Record<string, boolean>;
}

/** Whether an ancestor of the point is being resolved by this draft (which resolves the point too). */
export function resolvedByAncestor(ps: Points, draft: BriefingDraft, id: string): string | null {
  let p = ps.byId.get(id)?.parent ?? '';
  while (p) {
    if (draft.resolved[p]) return p;
    p = ps.byId.get(p)?.parent ?? '';
  }
  return null;
}

/** The replies a draft makes: each open point written on or resolved, in point order, once. */
export function draftReplies(ps: Points, draft: BriefingDraft): PointReply[] {
  const out: PointReply[] = [];
  for (const id of ps.order) {
    const st = ps.byId.get(id)!;
    if (st.resolved) continue;
    // A point beneath one being resolved is resolved with it; words on it would reach nobody.
    if (resolvedByAncestor(ps, draft, id)) continue;
    const text = (draft.texts[id] ?? '').trim();
    const resolved = !!draft.resolved[id];
    if (!text && !resolved) continue;
    const r: PointReply = { point: id };
    if (text) r.text = text;
    if (resolved) r.resolved = true;
    out.push(r);
  }
  return out;
}

export type Verdict =
  | { ok: true; reply: Responded; closes: boolean; handsOver: string[] }
  | { ok: false; reason: string };

/**
 * Judges the replies as the server would (checkResponded in Go): every point named exists, is open,
 * is named once, has words or is resolved; and the reply either resolves every point (the briefing
 * closes) or leaves the agent at least one point written on and unresolved.
 */
export function judge(ps: Points, replies: readonly PointReply[]): Verdict {
  if (replies.length === 0) {
    return { ok: false, reason: 'Write on a point or resolve one first.' };
  }
  const named = new Set<string>();
  for (const r of replies) {
    const st = ps.byId.get(r.point);
    if (!st) return { ok: false, reason: `This briefing has no point ${r.point}.` };
    if (named.has(r.point)) return { ok: false, reason: `Point ${r.point} is named twice.` };
    if (st.resolved) return { ok: false, reason: `Point ${r.point} is already resolved.` };
    if (!r.resolved && (r.text ?? '').trim() === '') {
      return { ok: false, reason: `Point ${r.point} needs words, or to be resolved.` };
    }
    named.add(r.point);
  }
  const after = clone(ps);
  applyResponded(after, replies);
  const reply: Responded = { outcome: 'responded', points: replies.map((r) => ({ ...r })) };
  if (allResolved(after)) return { ok: true, reply, closes: true, handsOver: [] };
  const owed = pendingIds(after);
  if (owed.length === 0) {
    const open = openPoints(after);
    return {
      ok: false,
      reason:
        `This would leave ${plural(open.length, 'point')} open (${list(open)}) with nothing for the agent to answer. ` +
        'Write on at least one of them, or resolve them all.',
    };
  }
  return { ok: true, reply, closes: false, handsOver: owed };
}

function plural(n: number, word: string): string {
  return `${n} ${word}${n === 1 ? '' : 's'}`;
}

function list(ids: string[]): string {
  return ids.length <= 6 ? ids.join(', ') : ids.slice(0, 6).join(', ') + ', …';
}

/** The agent's answers in a briefing's thread, for a read of the whole conversation. */
export function agentEntries(a: BriefingAsk): AgentEntry[] {
  return a.thread.filter((e): e is AgentEntry => e.author === 'agent');
}
