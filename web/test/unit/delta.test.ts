// A reconnect's delta (contract revision 6): the watermark the page offers, and how the delta is
// merged into what it holds.

import { describe, expect, it } from 'vitest';
import { newest } from '../../src/live';
import { createStore, deltaReceived, initialState, snapshotReceived } from '../../src/store';
import { fromSnapshot } from '../../src/merge';
import { question, withUpdate } from './fixtures';

const fresh = () =>
  createStore(initialState({ project: '', route: { name: 'inbox' }, notifications: 'default', push: { kind: 'working', doing: 'check' } }));

describe('the watermark', () => {
  it('is the newest updatedAt of a snapshot and what was held, compared to the microsecond', () => {
    const a = withUpdate(question('a'), '2026-12-01T10:00:00.000001Z');
    const b = withUpdate(question('b'), '2026-12-01T10:00:00.000002Z');
    expect(newest({ open: [a], recent: [b] }, null)).toBe(b.updatedAt);
    expect(newest({ open: [], recent: [] }, null)).toBeNull();
    expect(newest({ open: [a], recent: [] }, '2026-12-01T10:00:00.000003Z')).toBe('2026-12-01T10:00:00.000003Z');
  });
});

describe('a delta', () => {
  it('merges into what is held: changed asks replaced, new ones added (behind the pill), the rest kept', () => {
    const store = fresh();
    const keep = question('keep');
    const answer = question('answer');
    store.set(snapshotReceived(fromSnapshot({ open: [keep, answer], recent: [] })));
    const closed = withUpdate(answer, '2026-12-30T00:00:00.000000Z', { status: 'closed' });
    const added = question('added');
    const stale = withUpdate(keep, '2000-01-01T00:00:00.000000Z', { project: 'old copy' });
    store.set(deltaReceived(store.get(), { open: [added, stale], recent: [closed] }));
    const s = store.get();
    expect([...s.live.keys()].sort()).toEqual(['added', 'answer', 'keep']);
    expect(s.live.get('answer')?.status).toBe('closed');
    expect(s.live.get('keep')).toEqual(keep); // an older copy never undoes a newer one
    expect([...s.held]).toEqual(['added']);
    expect(s.liveReady).toBe(true);
  });
});

describe('a delta of nothing new', () => {
  it('changes nothing, so the page draws nothing (the delta after the first load holds the ask at the watermark)', () => {
    const store = fresh();
    const a = question('a');
    store.set(snapshotReceived(fromSnapshot({ open: [a], recent: [] })));
    const before = store.get();
    let told = 0;
    store.subscribe(() => told++);
    store.set(deltaReceived(store.get(), { open: [a], recent: [] }));
    expect(told).toBe(0);
    expect(store.get()).toBe(before);
  });
});
