import { describe, expect, it } from 'vitest';
import { briefingPoints, draftReplies, judge, pending } from '../../src/briefing';
import type { BriefingAsk, PointReply } from '../../src/types';
import { agent, briefing, human, resolve, say } from './fixtures';

// The same cases as shared/ask/reply_test.go's `responded_*` rows: the inbox must judge a reply
// exactly as the server does.
const open = () => briefing();
const withResolvedPoint = () => briefing([human(resolve('1'), say('2', 'Really?')), agent('2', 'Yes.')]);
const withSubPoints = () => briefing([human(say('3', 'Split this up.')), agent('3', 'Two parts.', 'Part one', 'Part two')]);
const withSubPointsResolved = () => briefing([...withSubPoints().thread, human(resolve('3'), say('1', 'And 1?')), agent('1', 'Sure.')]);
const all = (...ids: string[]) => ids.map(resolve);

const cases: { name: string; ask: () => BriefingAsk; reply: PointReply[]; ok: boolean; closes?: boolean; says?: RegExp }[] = [
  { name: 'unknown point', ask: open, reply: [say('1', 'a'), say('9', 'b')], ok: false, says: /no point 9/ },
  { name: 'unknown sub-point', ask: open, reply: [say('1.1', 'a')], ok: false, says: /no point 1\.1/ },
  { name: 'point named twice', ask: open, reply: [say('2', 'a'), resolve('2')], ok: false, says: /twice/ },
  { name: 'needs words or resolved', ask: open, reply: [say('1', 'a'), say('2', '')], ok: false, says: /needs words/ },
  { name: 'blank words are no words', ask: open, reply: [say('3', '  \n')], ok: false, says: /needs words/ },
  { name: 'already resolved point', ask: withResolvedPoint, reply: [say('1', 'One more thing')], ok: false, says: /already resolved/ },
  { name: 'sub-point resolved with its parent', ask: withSubPointsResolved, reply: [say('3.2', 'more')], ok: false, says: /already resolved/ },
  { name: 'needs points', ask: open, reply: [], ok: false, says: /Write on a point/ },
  { name: 'resolving some, writing on none', ask: open, reply: [resolve('1'), resolve('3')], ok: false, says: /nothing for the agent/ },
  { name: 'resolving every point closes', ask: open, reply: all('1', '2', '3', '4', '5'), ok: true, closes: true },
  { name: 'in any order', ask: open, reply: all('5', '3', '1', '4', '2'), ok: true, closes: true },
  { name: 'resolved with words closes', ask: open, reply: [{ point: '1', text: 'Thanks', resolved: true }, ...all('2', '3', '4', '5')], ok: true, closes: true },
  { name: 'writing on one hands the move over', ask: open, reply: [say('4', 'Why?')], ok: true, closes: false },
  { name: 'writing and resolving hands the move over', ask: open, reply: [resolve('1'), say('4', 'Why?')], ok: true, closes: false },
  { name: 'resolving the rest closes', ask: withResolvedPoint, reply: all('2', '3', '4', '5'), ok: true, closes: true },
  { name: 'resolving a parent resolves its sub-points', ask: withSubPoints, reply: all('1', '2', '3', '4', '5'), ok: true, closes: true },
  { name: 'sub-points must be resolved too', ask: withSubPoints, reply: all('1', '2', '3.1', '3.2', '4', '5'), ok: false, says: /open \(3\)/ },
  { name: 'writing on a sub-point', ask: withSubPoints, reply: [say('3.2', 'And this?')], ok: true, closes: false },
];

describe('judging a responded reply as the server does', () => {
  for (const c of cases) {
    it(c.name, () => {
      const v = judge(briefingPoints(c.ask()), c.reply);
      expect(v.ok).toBe(c.ok);
      if (v.ok) expect(v.closes).toBe(c.closes);
      else if (c.says) expect(v.reason).toMatch(c.says);
    });
  }
});

describe('replaying a briefing', () => {
  it('nests sub-points, records turns and what the agent owes', () => {
    const ps = briefingPoints(withSubPoints());
    expect(ps.order).toEqual(['1', '2', '3', '4', '5', '3.1', '3.2']);
    expect(ps.byId.get('3')!.children).toEqual(['3.1', '3.2']);
    expect(ps.byId.get('3.1')!.depth).toBe(2);
    expect(ps.byId.get('3')!.turns.map((t) => t.author)).toEqual(['human', 'agent']);
    expect(pending(ps)).toEqual([]);
    const waiting = briefingPoints(briefing([human(say('1', 'Why?'), resolve('2'))]));
    expect(pending(waiting)).toEqual(['1']);
    expect(waiting.byId.get('2')!.resolved).toBe(true);
  });

  it('turns a draft into replies in point order, dropping what a resolved parent covers', () => {
    const ps = briefingPoints(withSubPoints());
    const replies = draftReplies(ps, {
      texts: { '3.1': 'about this', '4': '  ', '1': 'why?' },
      resolved: { '3': true, '2': true },
    });
    expect(replies).toEqual([say('1', 'why?'), resolve('2'), resolve('3')]);
    expect(judge(ps, replies).ok).toBe(true);
  });
});
