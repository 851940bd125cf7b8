import { describe, expect, it } from 'vitest';
import { applyMark, isSnoozed, isUnread, sameMarks, snoozePresets, type AskMark } from '../../src/marks';
import type { Entry, QuestionAsk } from '../../src/types';
import { question } from './fixtures';

// The same rows as shared/ask/marks_test.go's TestMarkRules: the inbox works out unread and
// snoozed exactly as the server's rule does.
const t0 = Date.parse('2026-03-01T09:00:00Z');
const at = (m: number) => new Date(t0 + m * 60_000).toISOString();
const q = (): QuestionAsk => question('q1', { createdAt: at(0), updatedAt: at(0), thread: [] });
const agentAt = (m: number): QuestionAsk => ({
  ...q(),
  status: 'awaiting_human',
  thread: [
    { author: 'human', reply: { outcome: 'follow_up', question: '?' }, at: at(m - 1) } as Entry,
    { author: 'agent', answer: '!', at: at(m) } as Entry,
  ],
});

const rows: { name: string; mark?: AskMark; ask: QuestionAsk; now: number; unread: boolean; snoozed: boolean }[] = [
  { name: 'never opened', ask: q(), now: 5, unread: true, snoozed: false },
  { name: 'opened since it came', mark: { askId: 'q1', readAt: at(1) }, ask: q(), now: 5, unread: false, snoozed: false },
  { name: 'the agent moved since', mark: { askId: 'q1', readAt: at(1) }, ask: agentAt(3), now: 5, unread: true, snoozed: false },
  { name: 'marked unread', mark: { askId: 'q1' }, ask: q(), now: 5, unread: true, snoozed: false },
  { name: 'snoozed, before its time', mark: { askId: 'q1', readAt: at(1), snooze: { at: at(1), until: at(60) } }, ask: q(), now: 30, unread: false, snoozed: true },
  { name: 'snoozed, its time came: back unread', mark: { askId: 'q1', readAt: at(1), snooze: { at: at(1), until: at(60) } }, ask: q(), now: 60, unread: true, snoozed: false },
  { name: 'snoozed, opened after it came back', mark: { askId: 'q1', readAt: at(61), snooze: { at: at(1), until: at(60) } }, ask: q(), now: 90, unread: false, snoozed: false },
  { name: 'snoozed for a time, the agent moved first', mark: { askId: 'q1', readAt: at(1), snooze: { at: at(1), until: at(60) } }, ask: agentAt(10), now: 20, unread: true, snoozed: false },
  { name: 'until the agent moves, it has not', mark: { askId: 'q1', readAt: at(5), snooze: { at: at(5), untilAgentMoves: true } }, ask: agentAt(3), now: 9000, unread: false, snoozed: true },
  { name: 'until the agent moves, it did', mark: { askId: 'q1', readAt: at(5), snooze: { at: at(5), untilAgentMoves: true } }, ask: agentAt(7), now: 8, unread: true, snoozed: false },
];

describe('marks', () => {
  for (const r of rows) {
    it(r.name, () => {
      const now = Date.parse(at(r.now));
      expect(isUnread(r.mark, r.ask, now)).toBe(r.unread);
      expect(isSnoozed(r.mark, r.ask, now)).toBe(r.snoozed);
    });
  }
  it('a change keeps what it leaves out', () => {
    const now = Date.parse(at(10));
    const m = applyMark({ askId: 'q1', readAt: at(1) }, 'q1', { snooze: { untilAgentMoves: true } }, now);
    expect(m).toEqual({ askId: 'q1', readAt: at(1), snooze: { at: new Date(now).toISOString(), untilAgentMoves: true } });
    expect(applyMark(m, 'q1', { read: false, snooze: null }, now)).toEqual({ askId: 'q1' });
  });
  it('presets: an hour, this evening while ahead, tomorrow at 9, next Monday at 9', () => {
    const morning = new Date(2026, 11, 2, 10, 0); // a Wednesday
    expect(snoozePresets(morning).map((p) => p.label)).toEqual(['In 1 hour', 'This evening', 'Tomorrow morning', 'Next week']);
    const next = snoozePresets(morning).at(-1)!.until;
    expect([next.getDay(), next.getHours(), next.getDate()]).toEqual([1, 9, 7]);
    expect(snoozePresets(new Date(2026, 11, 2, 17, 30)).map((p) => p.label)).not.toContain('This evening');
  });
});

describe('sameMarks', () => {
  const m = (askId: string, extra: Partial<AskMark> = {}): AskMark => ({ askId, readAt: '2026-12-01T10:00:00Z', ...extra });
  it('is true only for the same asks with the same read time and snooze', () => {
    const a = new Map([['x', m('x')], ['y', m('y', { snooze: { at: '2026-12-01T10:00:00Z', untilAgentMoves: true } })]]);
    const copy = new Map<string, AskMark>([...a].map(([k, v]) => [k, { ...v, snooze: v.snooze && { ...v.snooze } }]));
    expect(sameMarks(a, copy)).toBe(true);
    expect(sameMarks(a, new Map([['x', m('x')]]))).toBe(false);
    expect(sameMarks(a, new Map(copy).set('x', m('x', { readAt: '2026-12-01T10:00:01Z' })))).toBe(false);
    expect(sameMarks(a, new Map(copy).set('y', m('y')))).toBe(false);
    expect(sameMarks(a, new Map(copy).set('y', m('y', { snooze: { at: '2026-12-01T10:00:00Z', until: '2026-12-02T09:00:00Z' } })))).toBe(false);
    expect(sameMarks(new Map(), new Map())).toBe(true);
  });
});
