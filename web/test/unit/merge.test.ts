import { describe, expect, it } from 'vitest';
import { fromSnapshot, historyList, isNewer, mergeAsk, mergeFrame, needsPerson, openAsks, projectsOf } from '../../src/merge';
import { compareTimes, timeKey } from '../../src/time';
import { question, withUpdate } from './fixtures';

describe('times', () => {
  it('orders by every digit, not just milliseconds', () => {
    expect(compareTimes('2026-11-30T09:42:47.950820Z', '2026-11-30T09:42:47.950821Z')).toBeLessThan(0);
    expect(compareTimes('2026-11-30T09:42:47.95Z', '2026-11-30T09:42:47.950000Z')).toBe(0);
    expect(compareTimes('2026-11-30T09:42:48Z', '2026-11-30T09:42:47.999999Z')).toBeGreaterThan(0);
    expect(compareTimes('2026-11-30T10:00:00+01:00', '2026-11-30T09:00:00Z')).toBe(0);
  });
  it('gives no key to what is not RFC 3339', () => {
    expect(timeKey('yesterday')).toBe('');
  });
});

describe('merging', () => {
  it('replaces an ask only with a newer copy', () => {
    const a = question('a');
    const newer = withUpdate(a, '2030-01-01T00:00:00.000002Z', { status: 'closed' });
    const older = withUpdate(a, '2030-01-01T00:00:00.000001Z', { status: 'awaiting_agent' });
    let m = fromSnapshot({ open: [a], recent: [] });
    m = mergeAsk(m, newer);
    expect(m.get('a')!.status).toBe('closed');
    const same = mergeAsk(m, older); // a late event of an earlier change
    expect(same).toBe(m);
    expect(mergeAsk(m, newer)).toBe(m); // the same change twice
    expect(isNewer(older, undefined)).toBe(true);
  });

  it('takes a socket frame unless the copy held is later; a tie takes the frame', () => {
    const a = question('a');
    const t = '2030-01-01T00:00:00.000005Z';
    let m = fromSnapshot({ open: [withUpdate(a, t, { waiting: true })], recent: [] });
    m = mergeFrame(m, withUpdate(a, t, { waiting: false })); // two commits in one microsecond
    expect(m.get('a')!.waiting).toBe(false);
    const kept = mergeFrame(m, withUpdate(a, '2030-01-01T00:00:00.000004Z', { waiting: true }));
    expect(kept).toBe(m);
    expect(mergeAsk(m, withUpdate(a, t, { waiting: true }))).toBe(m); // other sources need newer
  });

  it('lets a snapshot replace everything held before', () => {
    const a = question('a');
    const b = question('b');
    let m = fromSnapshot({ open: [a, b], recent: [] });
    m = fromSnapshot({ open: [b], recent: [] });
    expect([...m.keys()]).toEqual(['b']);
  });

  it('keeps the newer copy of an ask in both lists of a snapshot', () => {
    const a = question('a');
    const closed = withUpdate(a, '2030-01-01T00:00:00Z', { status: 'closed', closedAt: '2030-01-01T00:00:00Z' });
    const m = fromSnapshot({ open: [a], recent: [closed] });
    expect(m.get('a')!.status).toBe('closed');
  });

  it('lists open asks newest first, by project', () => {
    const a = question('a', { project: 'x' });
    const b = question('b', { project: 'y' });
    const c = question('c', { project: 'x', status: 'closed' });
    const m = fromSnapshot({ open: [a, b], recent: [c] });
    expect(openAsks(m).map((q) => q.id)).toEqual(['b', 'a']);
    expect(openAsks(m, 'x').map((q) => q.id)).toEqual(['a']);
    expect(projectsOf(m)).toEqual(['x', 'y']);
  });

  it('builds history without gaps: live closes newer than the pages, and all once paging is done', () => {
    const mk = (id: string, closedAt: string) =>
      question(id, { status: 'closed', closedAt, updatedAt: closedAt });
    const pages = new Map([['p1', mk('p1', '2030-01-01T00:00:05Z')], ['p2', mk('p2', '2030-01-01T00:00:04Z')]]);
    const live = new Map([
      ['new', mk('new', '2030-01-01T00:00:09Z')],
      ['old', mk('old', '2030-01-01T00:00:01Z')],
      ['open', question('open')],
    ]);
    expect(historyList(live, pages, '2030-01-01T00:00:04Z').map((a) => a.id)).toEqual(['new', 'p1', 'p2']);
    expect(historyList(live, pages, '').map((a) => a.id)).toEqual(['new', 'p1', 'p2', 'old']);
    expect(historyList(live, new Map(), null).map((a) => a.id)).toEqual(['new', 'old']);
  });

  it('knows when the person has something new to do', () => {
    const a = question('a');
    expect(needsPerson(undefined, a)).toBe(true);
    expect(needsPerson(a, withUpdate(a, tickLater(a.updatedAt)))).toBe(false);
    const theirs = { ...a, status: 'awaiting_agent' as const };
    expect(needsPerson(theirs, a)).toBe(true);
  });
});

function tickLater(t: string): string {
  return new Date(Date.parse(t) + 1000).toISOString();
}
