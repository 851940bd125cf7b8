import { render } from 'preact';
import { describe, expect, it } from 'vitest';
import { answeredByLine, closedByDeadline, countdown, deadlineLine, describeReply } from '../../src/deadline';
import { closedLabel, EntryView } from '../../src/components/common';
import type { Ask, Entry, HumanEntry } from '../../src/types';
import { question } from './fixtures';

const at = (iso: string) => Date.parse(iso);

describe('deadlines', () => {
  it('counts down to the deadline', () => {
    const due = '2026-12-02T17:00:00Z';
    expect(countdown(due, at('2026-12-02T16:59:50Z'))).toBe('in 10 s');
    expect(countdown(due, at('2026-12-02T16:55:50Z'))).toBe('in 4 min 10 s');
    expect(countdown(due, at('2026-12-02T14:55:00Z'))).toBe('in 2 h 5 min');
    expect(countdown(due, at('2026-11-29T13:00:00Z'))).toBe('in 3 d 4 h');
    expect(countdown(due, at('2026-12-02T17:00:01Z'))).toBe('now');
  });

  it('says what the agent takes at the deadline', () => {
    const now = at('2026-12-02T12:00:00Z');
    const local = new Date('2026-12-02T17:00:00Z').toLocaleTimeString(undefined, { hour: '2-digit', minute: '2-digit' });
    expect(deadlineLine({ at: '2026-12-02T17:00:00Z', default: { outcome: 'answered', selected: ['No'] } }, now)).toBe(`At ${local} the agent takes: chose “No”.`);
    expect(deadlineLine({ at: '2026-12-02T17:00:00Z' }, now)).toBe(`At ${local} the agent is told that nobody answered.`);
    expect(describeReply({ outcome: 'approved', note: ' ship it ' })).toBe('approved, noting “ship it”');
    expect(describeReply({ outcome: 'answered', selected: ['A', 'B'], text: 'and why' })).toBe('chose “A”, “B” and wrote “and why”');
  });

  it('labels an ask the deadline closed', () => {
    const notice = { author: 'loopback', event: 'deadline', text: 'Nobody answered by the deadline.', at: '2026-12-02T17:00:00Z' } as unknown as Entry;
    const a = question('q1', { status: 'closed', closedAt: '2026-12-02T17:00:00Z', thread: [notice] });
    (a as Ask & { deadline: unknown }).deadline = { at: '2026-12-02T17:00:00Z', default: { outcome: 'answered', selected: ['No'] } };
    expect(closedByDeadline(a)).toBe(true);
    expect(closedLabel(a)).toBe('Default taken');
    delete (a as Ask & { deadline?: unknown }).deadline;
    expect(closedLabel(a)).toBe('No answer in time');
  });
});

describe('who answered where', () => {
  const entry = {
    author: 'human',
    reply: { outcome: 'answered', selected: ['Yes'] },
    by: { id: 'p-ada', name: 'Ada' },
    via: 'slack',
    at: '2026-12-02T10:42:00Z',
  } as unknown as HumanEntry;
  const clock = new Date('2026-12-02T10:42:00Z').toLocaleTimeString(undefined, { hour: '2-digit', minute: '2-digit' });

  it('says who, where and when', () => {
    expect(answeredByLine(entry, null, at('2026-12-02T11:00:00Z'))).toBe(`Answered by Ada in Slack, ${clock}`);
    expect(answeredByLine(entry, { id: 'p-ada' }, at('2026-12-02T11:00:00Z'))).toBe(`Answered by you in Slack, ${clock}`);
    const old = { ...entry } as HumanEntry & { via?: string };
    delete old.via;
    expect(answeredByLine(old, null, at('2026-12-02T11:00:00Z'))).toBe(`Answered by Ada, ${clock}`);
  });

  it('shows the surface on every human entry of a thread', () => {
    const root = document.createElement('ul');
    render(<EntryView entry={entry} me={null} />, root);
    const li = root.querySelector('li.entry-human')!;
    expect(li.getAttribute('data-via')).toBe('slack');
    expect(li.querySelector('.entry-head')!.textContent).toMatch(/^Ada answered in Slack, /);
    expect(li.querySelector('.entry-head time')!.getAttribute('datetime')).toBe('2026-12-02T10:42:00Z');
  });

  it('heads the deadline and escalation notices in words', () => {
    const root = document.createElement('ul');
    const notice = { author: 'loopback', event: 'escalated', text: 'Nobody answered within 30 minutes, so this ask was also sent to the other people of the space.', at: '2026-12-02T10:42:00Z' } as unknown as Entry;
    render(<EntryView entry={notice} me={null} />, root);
    expect(root.querySelector('.entry-notice .who')!.textContent).toBe('Escalated');
    expect(root.querySelector('.notice-text')!.textContent).toContain('also sent to the other people');
  });
});
