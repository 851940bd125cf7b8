import { describe, expect, it } from 'vitest';
import { storedToken, storeToken, takeTokenFromFragment, forgetToken } from '../../src/auth';
import { clearDraft, hasDraft, loadDraft, pruneDrafts, saveDraft } from '../../src/drafts';
import { backoff, BACKOFF_MAX_MS } from '../../src/live';

describe('sign-in link', () => {
  it('takes the token out of the fragment and the address bar, keeping the route', () => {
    history.replaceState(null, '', '/asks/abc#token=lb_secret&x=1');
    expect(takeTokenFromFragment()).toBe('lb_secret');
    expect(location.pathname).toBe('/asks/abc');
    expect(location.hash).toBe('#x=1');
    expect(location.href).not.toContain('lb_secret');
    history.replaceState(null, '', '/');
    expect(takeTokenFromFragment()).toBeNull();
  });
  it('keeps and forgets the token', () => {
    storeToken('t1');
    expect(storedToken()).toBe('t1');
    forgetToken();
    expect(storedToken()).toBeNull();
  });
});

describe('drafts', () => {
  it('are kept per ask, cleared, and pruned after 30 days', () => {
    saveDraft('a', { text: 'half-typed' });
    expect(loadDraft('a')).toEqual({ text: 'half-typed' });
    expect(hasDraft('a')).toBe(true);
    clearDraft('a');
    expect(loadDraft('a')).toBeNull();
    saveDraft('old', { text: 'x' });
    pruneDrafts(Date.now() + 31 * 24 * 3600 * 1000);
    expect(hasDraft('old')).toBe(false);
  });
});

describe('reconnecting', () => {
  it('backs off 1 s, 2 s, 4 s … up to 30 s, with jitter', () => {
    const mid = () => 0.5;
    expect([1, 2, 3, 4, 5, 6, 7, 20].map((n) => backoff(n, mid))).toEqual([1000, 2000, 4000, 8000, 16000, 30000, 30000, 30000]);
    expect(backoff(1, () => 0)).toBe(800);
    expect(backoff(9, () => 1)).toBe(BACKOFF_MAX_MS * 1.2);
  });
});
