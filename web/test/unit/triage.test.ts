// Triage: the filters, the next ask after an answer, the settings, the "N new" pill's holding, and a
// reply held for undo (then sent, or not sent at all), through the page's real store and API client
// against a fake server.

import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { askFrame, arrivalsShown, createStore, initialState, snapshotReceived } from '../../src/store';
import { filtered, nextAfter, parseSettings, DEFAULT_SETTINGS } from '../../src/triage';
import { getState, queueReply, setState, signOut, undoPending } from '../../src/state';
import { startTriage } from '../../src/effects/triage';
import { setToken } from '../../src/api';
import type { Ask } from '../../src/types';
import { question } from './fixtures';

const fresh = () =>
  createStore(initialState({ project: '', route: { name: 'inbox' }, notifications: 'default', push: { kind: 'working', doing: 'check' } }));

describe('filters', () => {
  const asks: Ask[] = [
    question('q1', { project: 'web' }),
    question('q2', { project: 'api', status: 'awaiting_agent' }),
    { ...question('r1', { project: 'web' }), kind: 'review', prompt: { title: 'PR #1043', content: [] } } as unknown as Ask,
  ];
  it('sort through what the page holds by project, kind and whose move', () => {
    expect(filtered(asks, { project: '', kind: '', move: '' }).map((a) => a.id)).toEqual(['q1', 'q2', 'r1']);
    expect(filtered(asks, { project: 'web', kind: '', move: '' }).map((a) => a.id)).toEqual(['q1', 'r1']);
    expect(filtered(asks, { project: '', kind: 'review', move: '' }).map((a) => a.id)).toEqual(['r1']);
    expect(filtered(asks, { project: '', kind: '', move: 'agents' }).map((a) => a.id)).toEqual(['q2']);
    expect(filtered(asks, { project: 'web', kind: 'question', move: 'yours' }).map((a) => a.id)).toEqual(['q1']);
  });
});

describe('the next ask after an answer', () => {
  const list = [
    question('a'),
    question('b', { status: 'awaiting_agent' }),
    question('c'),
    question('d'),
  ];
  it('is the next one down whose move is the person’s, else the nearest above', () => {
    expect(nextAfter(list, 'a')).toBe('c');
    expect(nextAfter(list, 'c')).toBe('d');
    expect(nextAfter(list, 'd')).toBe('c');
    expect(nextAfter(list, 'd', new Set(['c']))).toBe('a');
    expect(nextAfter([list[0]], 'a')).toBeNull();
    expect(nextAfter(list, 'gone')).toBe('a');
  });
});

describe('settings', () => {
  it('fall back to the defaults, each on its own, and bound the undo time', () => {
    expect(parseSettings(null)).toEqual(DEFAULT_SETTINGS);
    expect(parseSettings('not json')).toEqual(DEFAULT_SETTINGS);
    expect(parseSettings('{"undoSeconds":0}')).toEqual({ ...DEFAULT_SETTINGS, undoSeconds: 0 });
    expect(parseSettings('{"undoSeconds":999,"advance":false}')).toEqual({ undoSeconds: 30, advance: false, hold: true });
    expect(parseSettings('{"undoSeconds":"5","hold":"no"}')).toEqual(DEFAULT_SETTINGS);
  });
});

describe('arrivals while the list is shown', () => {
  it('wait behind the pill once the list has rows, and show when it is pressed', () => {
    const store = fresh();
    store.set(snapshotReceived(new Map()));
    // The first ask into an empty list shows at once: nothing is there to be pushed down.
    const first = question('first');
    store.set(askFrame(store.get(), 'ask.opened', first).patch!);
    expect(store.get().held.size).toBe(0);
    const second = question('second');
    store.set(askFrame(store.get(), 'ask.opened', second).patch!);
    expect([...store.get().held]).toEqual(['second']);
    // Closed elsewhere while held: it no longer waits.
    const third = question('third');
    store.set(askFrame(store.get(), 'ask.opened', third).patch!);
    store.set(askFrame(store.get(), 'ask.updated', { ...third, status: 'closed', updatedAt: '2026-12-30T00:00:00.000000Z' }).patch!);
    expect([...store.get().held]).toEqual(['second']);
    store.set(arrivalsShown(store.get()));
    expect(store.get().held.size).toBe(0);
    // A new snapshot shows everything.
    store.set(askFrame(store.get(), 'ask.opened', question('fourth')).patch!);
    expect(store.get().held.size).toBe(1);
    store.set(snapshotReceived(store.get().live));
    expect(store.get().held.size).toBe(0);
  });
});

describe('a reply held for undo', () => {
  const calls: { url: string; body: unknown }[] = [];
  beforeEach(() => {
    calls.length = 0;
    vi.useFakeTimers();
    localStorage.setItem('loopback.triage', JSON.stringify({ undoSeconds: 5, advance: false }));
    setToken('lb_test');
    setState({ token: 'lb_test', pending: null, toast: null });
    vi.stubGlobal(
      'fetch',
      vi.fn(async (url: string, init: RequestInit) => {
        calls.push({ url, body: init.body === undefined ? undefined : JSON.parse(String(init.body)) });
        const q = question('h1');
        return new Response(JSON.stringify({ ...q, status: 'closed', updatedAt: '2026-12-30T00:00:00.000000Z' }), {
          status: 200,
          headers: { 'Content-Type': 'application/json' },
        });
      }),
    );
  });
  afterEach(() => {
    vi.useRealTimers();
    vi.unstubAllGlobals();
    setToken(null);
    localStorage.clear();
  });

  it('is sent only once its time is up, and the toast says it is held', async () => {
    const sent = queueReply(question('h1'), { outcome: 'answered', selected: ['A'] }, 'Sending your answer');
    expect(getState().pending?.askId).toBe('h1');
    expect(getState().toast).toMatchObject({ undo: true });
    expect(getState().toast?.text).toMatch(/Sending your answer in 5 s/);
    await vi.advanceTimersByTimeAsync(4900);
    expect(calls).toEqual([]);
    await vi.advanceTimersByTimeAsync(200);
    expect(await sent).toBe(true);
    expect(calls).toEqual([{ url: '/api/v1/asks/h1/reply', body: { outcome: 'answered', selected: ['A'] } }]);
    expect(getState().pending).toBeNull();
  });

  it('is never sent when undone', async () => {
    history.replaceState(null, '', '/');
    const sent = queueReply(question('h1'), { outcome: 'dismissed' }, 'Dismissing');
    expect(undoPending()).toBe(true);
    expect(await sent).toBe(false);
    await vi.advanceTimersByTimeAsync(10_000);
    expect(calls).toEqual([]);
    expect(getState().pending).toBeNull();
    // Back on the ask, whose draft was never cleared.
    expect(getState().route).toEqual({ name: 'ask', id: 'h1' });
    expect(undoPending()).toBe(false);
  });

  it('goes at once when another reply is given', async () => {
    const first = queueReply(question('h1'), { outcome: 'dismissed' }, 'Dismissing');
    const second = queueReply(question('h2'), { outcome: 'dismissed' }, 'Dismissing');
    expect(await first).toBe(true);
    // A dismissal goes by its own route (revision 6).
    expect(calls.map((c) => c.url)).toEqual(['/api/v1/asks/h1/dismiss']);
    expect(getState().pending?.askId).toBe('h2');
    await vi.advanceTimersByTimeAsync(5000);
    expect(await second).toBe(true);
    expect(calls.map((c) => c.url)).toEqual(['/api/v1/asks/h1/dismiss', '/api/v1/asks/h2/dismiss']);
  });
});

describe('a held reply and the page', () => {
  startTriage();
  const calls: { url: string; auth: string }[] = [];
  beforeEach(() => {
    calls.length = 0;
    vi.useFakeTimers();
    localStorage.setItem('loopback.triage', JSON.stringify({ undoSeconds: 5, advance: false }));
    setToken('lb_held');
    setState({ token: 'lb_held', pending: null, toast: null });
    vi.stubGlobal(
      'fetch',
      vi.fn(async (url: string, init: RequestInit) => {
        calls.push({ url, auth: String((init.headers as Record<string, string>).Authorization) });
        return new Response(JSON.stringify({ ...question('h3'), status: 'closed', updatedAt: '2026-12-30T00:00:00.000000Z' }), {
          status: 200,
          headers: { 'Content-Type': 'application/json' },
        });
      }),
    );
  });
  afterEach(() => {
    vi.useRealTimers();
    vi.unstubAllGlobals();
    setToken(null);
    localStorage.clear();
  });

  it('goes at once when the page is hidden', async () => {
    const sent = queueReply(question('h3'), { outcome: 'dismissed' }, 'Dismissing');
    Object.defineProperty(document, 'visibilityState', { value: 'hidden', configurable: true });
    document.dispatchEvent(new Event('visibilitychange'));
    expect(await sent).toBe(true);
    expect(calls.map((c) => c.url)).toEqual(['/api/v1/asks/h3/dismiss']);
    Object.defineProperty(document, 'visibilityState', { value: 'visible', configurable: true });
  });

  it('goes, with the credential that gave it, before signing out', async () => {
    const sent = queueReply(question('h3'), { outcome: 'dismissed' }, 'Dismissing');
    signOut();
    expect(calls).toEqual([{ url: '/api/v1/asks/h3/dismiss', auth: 'Bearer lb_held' }]);
    expect(await sent).toBe(true);
  });
});
