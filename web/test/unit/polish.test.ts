import { describe, expect, it } from 'vitest';
import { pairingLink, publicOrigin } from '../../src/pairing';
import { searchScope } from '../../src/triage';

describe('searchScope: search covers what the list shows', () => {
  const f = (move: '' | 'yours' | 'agents' | 'snoozed' = '', project = '', kind: '' | 'question' = '') => ({ move, project, kind });
  it('with no filter: every ask, open and closed', () => {
    expect(searchScope('inbox', f())).toEqual({ state: '', snoozed: null, words: 'every ask, open and closed' });
  });
  it('under Snoozed: the open asks the person snoozed, only', () => {
    expect(searchScope('inbox', f('snoozed'))).toEqual({ state: 'open', snoozed: true, words: 'snoozed asks' });
    expect(searchScope('inbox', f('snoozed', 'api', 'question')).words).toBe('snoozed questions in api');
  });
  it('under any other filter: the open asks that fit it, never a snoozed one', () => {
    expect(searchScope('inbox', f('yours'))).toEqual({ state: 'yours', snoozed: false, words: 'open asks that are your move' });
    expect(searchScope('inbox', f('agents', 'web'))).toEqual({ state: 'agents', snoozed: false, words: "open asks in web that are the agent's move" });
    expect(searchScope('inbox', f('', 'web'))).toEqual({ state: 'open', snoozed: false, words: 'open asks in web' });
    expect(searchScope('inbox', f('', '', 'question'))).toEqual({ state: 'open', snoozed: false, words: 'open questions' });
  });
  it('on History: the closed ones', () => {
    expect(searchScope('history', f('snoozed', 'web'))).toEqual({ state: 'closed', snoozed: null, words: 'closed asks in web' });
  });
});

describe('publicOrigin: where another device reaches Loopback', () => {
  const doc = (content: string | null) => {
    const d = document.implementation.createHTMLDocument('x');
    if (content !== null) {
      const m = d.createElement('meta');
      m.name = 'loopback-public-url';
      m.content = content;
      d.head.append(m);
    }
    return d;
  };
  it("is the public URL the server named, else the page's own origin", () => {
    expect(publicOrigin(doc('https://loopback.example.com/'), 'http://127.0.0.1:8080')).toBe('https://loopback.example.com');
    expect(publicOrigin(doc('http://laptop.local:8080'), 'http://127.0.0.1:8080')).toBe('http://laptop.local:8080');
    expect(publicOrigin(doc(null), 'https://d111.cloudfront.net')).toBe('https://d111.cloudfront.net');
    for (const bad of ['', 'javascript:alert(1)', 'not a url', 'https://user:pw@evil.example']) {
      expect(publicOrigin(doc(bad), 'http://127.0.0.1:8080')).toBe('http://127.0.0.1:8080');
    }
    expect(pairingLink('ABCD-EFGH', 'https://loopback.example.com')).toBe('https://loopback.example.com/pair#code=ABCD-EFGH');
  });
});
