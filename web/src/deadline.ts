// Revision 4 in the inbox: an ask's deadline and its default, its escalation, and where a person
// answered (the thread's `via`). Revision 4 is open for work and not frozen, so contract.gen.ts
// (generated from the newest frozen revision) does not hold these fields yet: they are typed here,
// by hand, as the contract (spec/main.tsp, "r4: deadline") has them. Once revision 4 is frozen
// and `npm run types` regenerates, these types can be read from types.ts instead.

import type { Actor, Ask, Entry, HumanEntry, Reply } from './types';

/** Where a person gave a reply (the contract's Surface). */
export type Surface = 'inbox' | 'push' | 'slack' | 'email';

/** When an ask closes if nobody answers, and what the agent takes then (the contract's AskDeadline). */
export interface AskDeadline {
  at: string;
  default?: Reply;
}

/** The contract's EscalationSettings. */
export interface EscalationSettings {
  afterMinutes: number;
  toPeople: boolean;
  slackChannel?: string;
  updatedAt?: string;
  updatedBy?: Actor;
}

/** An ask's deadline, when its agent gave one. */
export function deadlineOf(a: Ask): AskDeadline | undefined {
  return (a as Ask & { deadline?: AskDeadline }).deadline;
}

/** When the ask, still unanswered, is also sent to the other people of the space. */
export function escalatesAt(a: Ask): string | undefined {
  return (a as Ask & { escalatesAt?: string }).escalatesAt;
}

/** Where a person's turn was given; undefined for turns taken before revision 4. */
export function viaOf(e: HumanEntry): Surface | undefined {
  return (e as HumanEntry & { via?: Surface }).via;
}

/** The notice event of a thread entry, if it is Loopback's notice (revision 4 adds deadline and escalated). */
export function noticeEvent(e: Entry): string | undefined {
  return e.author === 'loopback' ? (e.event as string) : undefined;
}

/** Whether the ask was closed by its deadline: nobody answered in time. */
export function closedByDeadline(a: Ask): boolean {
  const last = a.thread[a.thread.length - 1];
  return a.status === 'closed' && !!last && noticeEvent(last) === 'deadline';
}

/** Whether the ask was escalated to the other people of the space. */
export function wasEscalated(a: Ask): boolean {
  return a.thread.some((e) => noticeEvent(e) === 'escalated');
}

/** A surface in words: "in Slack", "in the inbox", "from a notification", "by email". */
export function surfaceWords(s: Surface): string {
  switch (s) {
    case 'inbox':
      return 'in the inbox';
    case 'push':
      return 'from a notification';
    case 'slack':
      return 'in Slack';
    case 'email':
      return 'by email';
  }
}

/** A time on the clock, "10:42"; with the day when it is not today ("2 Dec, 10:42"). */
export function clockTime(t: string, now: number = Date.now()): string {
  const d = new Date(t);
  if (Number.isNaN(d.getTime())) return t;
  const hm = d.toLocaleTimeString(undefined, { hour: '2-digit', minute: '2-digit' });
  if (d.toDateString() === new Date(now).toDateString()) return hm;
  return `${d.toLocaleDateString(undefined, { day: 'numeric', month: 'short' })}, ${hm}`;
}

/** How long until t: "in 4 min 10 s", "in 2 h 5 min", "in 3 d 4 h"; "now" once it has come. */
export function countdown(t: string, now: number = Date.now()): string {
  const ms = Date.parse(t) - now;
  if (Number.isNaN(ms)) return '';
  if (ms <= 0) return 'now';
  const s = Math.ceil(ms / 1000);
  if (s < 60) return `in ${s} s`;
  const min = Math.floor(s / 60);
  if (min < 60) return `in ${min} min ${s % 60} s`;
  const h = Math.floor(min / 60);
  if (h < 24) return `in ${h} h ${min % 60} min`;
  return `in ${Math.floor(h / 24)} d ${h % 24} h`;
}

/** What a reply decides, in a few words: "chose “Yes”", "approved" (the domain's ask.DescribeReply). */
export function describeReply(r: Reply): string {
  switch (r.outcome) {
    case 'answered': {
      const parts: string[] = [];
      if (r.selected.length) parts.push('chose ' + r.selected.map((s) => `“${s}”`).join(', '));
      if (r.text?.trim()) parts.push(`wrote “${r.text.trim()}”`);
      return parts.join(' and ');
    }
    case 'approved':
      return r.note?.trim() ? `approved, noting “${r.note.trim()}”` : 'approved';
    case 'changes_requested':
      return `requested changes: “${r.feedback.trim()}”`;
    case 'dismissed':
      return 'dismissed';
    case 'responded':
      return 'resolved every point';
    default:
      return r.outcome;
  }
}

/** What the agent takes at the deadline, for the person: "At 17:00 the agent takes: chose “No”." */
export function deadlineLine(d: AskDeadline, now: number = Date.now()): string {
  const at = clockTime(d.at, now);
  return d.default
    ? `At ${at} the agent takes: ${describeReply(d.default)}.`
    : `At ${at} the agent is told that nobody answered.`;
}

/** Who answered where and when: "Answered by Ada in Slack, 10:42". */
export function answeredByLine(e: HumanEntry, me: Actor | null | undefined, now: number = Date.now()): string {
  const who = !e.by ? 'someone' : me && e.by.id === me.id ? 'you' : e.by.name || e.by.id;
  const via = viaOf(e);
  return `Answered by ${who}${via ? ' ' + surfaceWords(via) : ''}, ${clockTime(e.at, now)}`;
}

/** The person's turn that closed the ask, if a person closed it. */
export function closingEntry(a: Ask): HumanEntry | null {
  const last = a.thread[a.thread.length - 1];
  return a.status === 'closed' && last?.author === 'human' ? last : null;
}
