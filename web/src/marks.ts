// A person's own marks on asks (contract revision 6), pure: unread and snoozed worked out from the
// mark, the ask and the time, as shared/ask/marks.go does (its TestMarkRules rows are this port's
// unit test). Nothing needs to run for a snooze to end: the list asks again every minute.

import type { Ask } from './types';

export interface Snooze {
  at: string;
  until?: string;
  untilAgentMoves?: boolean;
}

export interface AskMark {
  askId: string;
  readAt?: string;
  snooze?: Snooze;
}

export interface SnoozeInput {
  until?: string;
  untilAgentMoves?: boolean;
}

export interface MarkInput {
  read?: boolean;
  snooze?: SnoozeInput | null;
}

const ms = (t: string) => Date.parse(t);

/** When the ask last came to the person: made, or the agent's latest turn. */
export function lastChange(a: Ask): number {
  let t = ms(a.createdAt);
  for (const e of a.thread) if (e.author === 'agent' && ms(e.at) > t) t = ms(e.at);
  return t;
}

/** Snoozed: open, no agent turn since the snooze was set, and (for one until a time) the time ahead. */
export function isSnoozed(m: AskMark | undefined, a: Ask, now: number): boolean {
  const s = m?.snooze;
  if (!s || a.status === 'closed' || lastChange(a) > ms(s.at)) return false;
  return !!s.untilAgentMoves || (s.until !== undefined && now < ms(s.until));
}

/** Unread: not opened since it came, the agent last moved, or a snooze of the person's ran out. */
export function isUnread(m: AskMark | undefined, a: Ask, now: number): boolean {
  if (!m?.readAt) return true;
  let news = lastChange(a);
  const until = m.snooze?.until;
  if (until !== undefined && now >= ms(until) && ms(until) > news) news = ms(until);
  return ms(m.readAt) < news;
}

function sameMark(a: AskMark | undefined, b: AskMark): boolean {
  return (
    !!a &&
    a.readAt === b.readAt &&
    a.snooze?.at === b.snooze?.at &&
    a.snooze?.until === b.snooze?.until &&
    !!a.snooze?.untilAgentMoves === !!b.snooze?.untilAgentMoves
  );
}

/** The same marks, mark for mark (a map read again from the server need not be drawn again). */
export function sameMarks(a: ReadonlyMap<string, AskMark>, b: ReadonlyMap<string, AskMark>): boolean {
  if (a.size !== b.size) return false;
  for (const [id, m] of b) if (!sameMark(a.get(id), m)) return false;
  return true;
}

/** The mark as it stands after a change, for the page to show before the server answers. */
export function applyMark(m: AskMark | undefined, askId: string, input: MarkInput, now: number): AskMark {
  const out: AskMark = { askId, readAt: m?.readAt, snooze: m?.snooze };
  const at = new Date(now).toISOString();
  if (input.read === true) out.readAt = at;
  if (input.read === false) delete out.readAt;
  if (input.snooze === null) delete out.snooze;
  else if (input.snooze) out.snooze = { at, ...input.snooze };
  if (!out.readAt) delete out.readAt;
  if (!out.snooze) delete out.snooze;
  return out;
}

/** The snooze presets: in an hour, this evening (18:00, while it is ahead by an hour), tomorrow at 9:00, next Monday at 9:00. */
export function snoozePresets(now: Date): { label: string; until: Date }[] {
  const at = (days: number, hour: number) => {
    const d = new Date(now);
    d.setDate(d.getDate() + days);
    d.setHours(hour, 0, 0, 0);
    return d;
  };
  const out = [{ label: 'In 1 hour', until: new Date(now.getTime() + 3600_000) }];
  const evening = at(0, 18);
  if (evening.getTime() - now.getTime() >= 3600_000) out.push({ label: 'This evening', until: evening });
  out.push({ label: 'Tomorrow morning', until: at(1, 9) });
  const toMonday = ((8 - now.getDay()) % 7) || 7;
  out.push({ label: 'Next week', until: at(toMonday, 9) });
  return out;
}
