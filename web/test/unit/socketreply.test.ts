import { describe, expect, it } from 'vitest';
import { replyMade } from '../../src/effects/asks';
import type { Entry } from '../../src/types';
import { question } from './fixtures';

// A reply sent on the event socket whose answer never came (the socket dropped): the ask, read
// again, says whether it was made, and only a reply not made goes again over HTTP.
describe('a reply whose socket dropped', () => {
  const mine: Entry = { author: 'human', reply: { outcome: 'follow_up', question: 'Which?' }, by: { id: 'ada', name: 'Ada' }, at: '2026-12-04T10:00:01Z' };
  const theirs: Entry = { ...mine, by: { id: 'grace', name: 'Grace' } };
  const notice: Entry = { author: 'loopback', event: 'decided', text: 'A rule decided.', at: '2026-12-04T10:00:02Z' } as unknown as Entry;
  const before = question('q1');

  it('was made when the ask holds a new turn of this person', () => {
    expect(replyMade(before, question('q1', { thread: [mine] }), 'ada')).toBe(true);
    expect(replyMade(before, question('q1', { thread: [notice, mine] }), 'ada')).toBe(true);
  });
  it('was not made when nothing new is there, or only another person moved', () => {
    expect(replyMade(before, question('q1'), 'ada')).toBe(false);
    expect(replyMade(before, question('q1', { thread: [theirs] }), 'ada')).toBe(false);
    expect(replyMade(before, question('q1', { thread: [notice] }), 'ada')).toBe(false);
  });
  it('counts any person’s new turn when the page does not know who it is', () => {
    expect(replyMade(before, question('q1', { thread: [theirs] }), undefined)).toBe(true);
  });
  it('does not count the turns the ask held already', () => {
    const held = question('q1', { thread: [mine] });
    expect(replyMade(held, held, 'ada')).toBe(false);
  });
});
