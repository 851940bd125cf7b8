// The pure store (store.ts): subscribe/notify and each change, with no page around it. Runs in
// Node's environment, not jsdom: the store must need no DOM.
// @vitest-environment node

import { describe, expect, it, vi } from 'vitest';
import { fromSnapshot } from '../../src/merge';
import {
  askAbsorbed,
  askFrame,
  askMissing,
  createStore,
  findAsk,
  helpClosed,
  helpOpened,
  historyFailed,
  historyLoading,
  historyPage,
  initialState,
  noticeSet,
  parseRoute,
  routed,
  routePath,
  signedOut,
  snapshotReceived,
  titleOf,
  toastExpired,
  toastShown,
  unseenAdded,
  type AppState,
} from '../../src/store';
import { question, tick, withUpdate } from './fixtures';

const fresh = (): AppState =>
  initialState({ project: '', route: { name: 'inbox' }, notifications: 'default', push: { kind: 'working', doing: 'check' } });

describe('createStore', () => {
  it('applies a patch or a function of the state, and tells each subscriber in order until it unsubscribes', () => {
    const store = createStore(fresh());
    const calls: string[] = [];
    const a = vi.fn((s: AppState) => calls.push('a:' + s.unseen));
    const stopB = store.subscribe((s) => void calls.push('b:' + s.unseen));
    store.subscribe(a);
    store.set({ unseen: 1 });
    store.set(unseenAdded);
    expect(store.get().unseen).toBe(2);
    stopB();
    store.set((s) => ({ unseen: s.unseen + 3 }));
    expect(calls).toEqual(['b:1', 'a:1', 'b:2', 'a:2', 'a:5']);
  });

  it('never changes a state it handed out', () => {
    const store = createStore(fresh());
    const before = store.get();
    store.set({ token: 'lb_x' });
    expect(before.token).toBeNull();
    expect(store.get()).not.toBe(before);
  });

  it('tells nobody of a patch that changes nothing, and everybody of one that changes a value', () => {
    const store = createStore(fresh());
    const told = vi.fn();
    store.subscribe(told);
    const before = store.get();
    store.set({ unseen: before.unseen, live: before.live, conn: before.conn });
    store.set(() => ({}));
    expect(told).not.toHaveBeenCalled();
    expect(store.get()).toBe(before);
    store.set({ conn: { ...before.conn } }); // an equal copy is a change: the store compares identities
    expect(told).toHaveBeenCalledTimes(1);
  });

  it('lets a subscriber unsubscribe while being told', () => {
    const store = createStore(fresh());
    const seen: number[] = [];
    const stop = store.subscribe(() => {
      seen.push(1);
      stop();
    });
    store.subscribe(() => void seen.push(2));
    store.set({ unseen: 1 });
    store.set({ unseen: 2 });
    expect(seen).toEqual([1, 2, 2]);
  });
});

describe('the help dialog', () => {
  it('is open only while the store says so, and any navigation or sign-out closes it', () => {
    const store = createStore(fresh());
    store.set(helpOpened());
    expect(store.get().help).toBe(true);
    store.set(routed({ name: 'history' }));
    expect(store.get()).toMatchObject({ help: false, route: { name: 'history' } });
    store.set(helpOpened());
    store.set(helpClosed());
    expect(store.get().help).toBe(false);
    store.set(helpOpened());
    store.set(signedOut(null));
    expect(store.get().help).toBe(false);
  });
});

describe('routes', () => {
  it('round-trips every route through its path', () => {
    for (const r of [{ name: 'inbox' }, { name: 'history' }, { name: 'ask', id: 'ask_1/ä' }] as const) {
      expect(parseRoute(routePath(r))).toEqual(r);
    }
    expect(parseRoute('/history/')).toEqual({ name: 'history' });
    expect(parseRoute('/nowhere')).toEqual({ name: 'inbox' });
  });
});

describe('sign-out and notices', () => {
  it('drops everything of the last person but keeps the page (route, project, banner)', () => {
    const store = createStore({ ...fresh(), project: 'p', banner: 'reload' });
    store.set({ token: 'lb_x', unseen: 3, live: fromSnapshot({ open: [question('q1')], recent: [] }), liveReady: true });
    store.set(signedOut('bye'));
    expect(store.get()).toMatchObject({ token: null, signInMessage: 'bye', unseen: 0, liveReady: false, project: 'p', banner: 'reload' });
    expect(store.get().live.size).toBe(0);
  });

  it('shows a notice on the sign-in screen when signed out, over the inbox when signed in', () => {
    expect(noticeSet(fresh(), 'n')).toEqual({ signInMessage: 'n' });
    expect(noticeSet({ ...fresh(), token: 'lb_x' }, 'n')).toEqual({ notice: 'n' });
  });
});

describe('asks', () => {
  it('applies socket frames, says when the person should hear of one, and ignores stale ones', () => {
    const store = createStore(fresh());
    const q = question('q1');
    store.set(snapshotReceived(fromSnapshot({ open: [], recent: [] })));
    const opened = askFrame(store.get(), 'ask.opened', q);
    expect(opened).toMatchObject({ announce: true, isNew: true });
    store.set(opened.patch!);
    expect(store.get().live.get('q1')).toEqual(q);
    // An older copy (a frame late behind a reply's answer) changes nothing.
    expect(askFrame(store.get(), 'ask.updated', withUpdate(q, '2026-11-30T00:00:00.000000Z')).patch).toBeNull();
    // An ask read on its own is kept up to date by the socket too.
    store.set({ extra: new Map([['q1', q]]) });
    const closed = withUpdate(q, tick(), { status: 'closed', waiting: false });
    const f = askFrame(store.get(), 'ask.updated', closed);
    expect(f.announce).toBe(false);
    store.set(f.patch!);
    expect(store.get().extra.get('q1')?.status).toBe('closed');
    expect(findAsk(store.get(), 'q1')?.status).toBe('closed');
  });

  it('puts a returned ask where the page holds it, and remembers a missing one', () => {
    const s = fresh();
    const old = withUpdate(question('old'), tick(), { status: 'closed', waiting: false });
    const p = askAbsorbed(s, old);
    expect(p.live!.has('old')).toBe(false); // closed and not in the socket's set
    expect(p.extra!.get('old')).toEqual(old);
    expect([...askMissing(s, 'gone').missing!]).toEqual(['gone']);
  });

  it('pages the history and finds the oldest closed ask, and all of it once the last page is read', () => {
    const store = createStore(fresh());
    store.set(historyLoading);
    expect(store.get().history).toMatchObject({ loading: true, error: null });
    const a = withUpdate(question('a'), tick(), { status: 'closed', waiting: false, closedAt: '2026-11-30T08:00:00.000000Z' });
    const b = withUpdate(question('b'), tick(), { status: 'closed', waiting: false, closedAt: '2026-11-30T07:00:00.000000Z' });
    store.set((s) => historyPage(s, { items: [a, b], nextBefore: 'cursor' }));
    expect(store.get().history).toMatchObject({ nextBefore: 'cursor', oldest: b.closedAt, loading: false });
    store.set((s) => historyPage(s, { items: [] }));
    expect(store.get().history).toMatchObject({ nextBefore: undefined, oldest: '' });
    expect(store.get().history.pages.size).toBe(2);
    store.set((s) => historyFailed(s, 'down'));
    expect(store.get().history).toMatchObject({ loading: false, error: 'down' });
  });
});

describe('toasts and the title', () => {
  it('expires only the toast whose time is up', () => {
    const s = { ...fresh(), ...toastShown({ text: 'two', kind: 'ok', id: 2 }) };
    expect(toastExpired(s, 1)).toEqual({});
    expect(toastExpired(s, 2)).toEqual({ toast: null });
  });

  it('counts the asks waiting on the person and those that came while hidden', () => {
    const s = fresh();
    expect(titleOf(s)).toBe('Loopback');
    const live = fromSnapshot({ open: [question('q1'), question('q2', { status: 'awaiting_agent' })], recent: [] });
    expect(titleOf({ ...s, live })).toBe('Loopback (1 waiting on you)');
    expect(titleOf({ ...s, live, unseen: 2 })).toBe('(2) Loopback (1 waiting on you)');
  });
});
