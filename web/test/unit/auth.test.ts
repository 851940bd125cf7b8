// The sign-in rules of auth.ts: the plan on page load, the choice between two tokens, and the
// flows through the store with a fake server (whoami, the inbox read, an agent's 403).

import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { decideSwitch, refusalText, startPlan, storedToken, storeToken, tokenFromPaste, type TokenCheck } from '../../src/auth';
import { hasDraft, saveDraft } from '../../src/drafts';
import { fragmentChanged, getState, resolveChoice, signIn, signOut, start } from '../../src/state';
import type { Whoami } from '../../src/types';

const grace: Whoami = { space: 'local', actor: { id: 'owner', name: 'grace' } };
const ada: Whoami = { space: 'local', actor: { id: 'person:ada', name: 'ada' } };
const bot: Whoami = { space: 'local', actor: { id: 'agent:cursor', name: 'cursor' } };

const person = (who: Whoami): TokenCheck => ({ kind: 'person', who });
const refused: TokenCheck = { kind: 'refused', message: 'unknown or revoked token.' };
const agent: TokenCheck = { kind: 'agent', who: bot };
const down: TokenCheck = { kind: 'unreachable', message: 'Loopback cannot be reached.' };

describe('the plan on page load', () => {
  it('asks only when a link brings another token than the one kept', () => {
    expect(startPlan(null, null)).toEqual({ kind: 'signed-out' });
    expect(startPlan(null, 'lb_a')).toEqual({ kind: 'sign-in', token: 'lb_a', fromLink: false });
    expect(startPlan('lb_a', null)).toEqual({ kind: 'sign-in', token: 'lb_a', fromLink: true });
    expect(startPlan('lb_a', 'lb_a')).toEqual({ kind: 'sign-in', token: 'lb_a', fromLink: true });
    expect(startPlan('lb_b', 'lb_a')).toEqual({ kind: 'choose', current: 'lb_a', next: 'lb_b' });
  });
});

describe('a link while signed in', () => {
  it('asks, showing both, when the link is someone else', () => {
    expect(decideSwitch(person(grace), person(ada))).toEqual({ kind: 'ask', current: grace, next: ada });
    expect(decideSwitch(down, person(ada))).toEqual({ kind: 'ask', current: null, next: ada });
    // Another space, same actor id: still someone else.
    expect(decideSwitch(person(grace), person({ ...grace, space: 'team' })).kind).toBe('ask');
  });
  it('takes the link without asking only when nothing changes who is signed in, or the kept token is dead', () => {
    expect(decideSwitch(person(grace), person({ ...grace }))).toEqual({ kind: 'take', next: grace });
    expect(decideSwitch(refused, person(ada))).toEqual({ kind: 'take', next: ada });
    expect(decideSwitch(agent, person(ada))).toEqual({ kind: 'take', next: ada });
  });
  it('keeps the session, and says why, when the link cannot be used', () => {
    const bad = decideSwitch(person(grace), refused);
    expect(bad.kind).toBe('keep');
    expect(bad.kind === 'keep' && bad.notice).toMatch(/not accepted \(unknown or revoked token\).*still signed in as grace \(space local\)/);
    const bots = decideSwitch(person(grace), agent);
    expect(bots.kind === 'keep' && bots.notice).toMatch(/agent's token \(cursor\).*only agents can use, over MCP.*still signed in as grace/);
    expect(decideSwitch(person(grace), down).kind).toBe('keep');
    expect(decideSwitch(refused, refused)).toEqual({ kind: 'neither', message: refusalText(refused) });
  });
  it('says what an agent token is for', () => {
    expect(refusalText(agent)).toMatch(/the token of the agent cursor: it can only be used by agents, over MCP\. Sign in with your own \(person\) token/);
    expect(refusalText({ kind: 'agent', who: null })).toMatch(/^That is an agent's token/);
    expect(refusalText(refused)).toMatch(/^Loopback did not accept your sign-in \(unknown or revoked token\)/);
  });
});

// ----------------------------------------------------------------------- through the store --

const creds: Record<string, { who: Whoami; agent?: boolean }> = {
  lb_grace: { who: grace },
  lb_grace2: { who: grace },
  lb_ada: { who: ada },
  lb_bot: { who: bot, agent: true },
};

function json(status: number, body: unknown): Response {
  return new Response(JSON.stringify(body), { status, headers: { 'Content-Type': 'application/json' } });
}

/** A Loopback in miniature: whoami for any live credential, the inbox only for people's. */
const server = vi.fn(async (url: string, init: RequestInit) => {
  const token = String((init.headers as Record<string, string>).Authorization).replace(/^Bearer /, '');
  const path = url.replace(/^\/api\/v1/, '');
  const c = creds[token];
  if (!c) return json(401, { code: 'auth.unauthorized', message: 'unknown or revoked token.' });
  if (path === '/whoami') return json(200, c.who);
  if (c.agent) return json(403, { code: 'auth.forbidden', message: "an agent's credential may only use /mcp." });
  if (path.startsWith('/asks?')) return json(200, { items: [] });
  return json(503, { code: 'unavailable', message: 'no socket in unit tests' });
});

/** Signed in as `token`, as a page load with nothing in the fragment would. */
async function signedInAs(token: string) {
  storeToken(token);
  await start(startPlan(null, storedToken()));
  expect(getState().token).toBe(token);
}

describe('signing in through the store', () => {
  beforeEach(() => {
    vi.stubGlobal('fetch', server);
    localStorage.clear();
    server.mockClear();
  });
  afterEach(() => {
    signOut();
    vi.unstubAllGlobals();
  });

  it('shows both identities for a link naming someone else, and switches only when told', async () => {
    await signedInAs('lb_grace');
    saveDraft('q1', { text: "grace's half-written answer" });
    await start(startPlan('lb_ada', storedToken()));
    const s = getState();
    expect(s.choice).toEqual({ token: 'lb_ada', current: grace, next: ada });
    expect(s.token).toBe('lb_grace'); // still grace, behind the dialog
    expect(s.whoami).toEqual(grace);
    expect(storedToken()).toBe('lb_grace'); // the link's token is not kept before the choice

    resolveChoice(false);
    expect(getState().choice).toBeNull();
    expect(getState().token).toBe('lb_grace');
    expect(storedToken()).toBe('lb_grace');
    expect(hasDraft('q1')).toBe(true);

    await start(startPlan('lb_ada', storedToken()));
    resolveChoice(true);
    expect(getState().token).toBe('lb_ada');
    expect(getState().whoami).toEqual(ada);
    expect(storedToken()).toBe('lb_ada');
    expect(hasDraft('q1')).toBe(false); // ada does not send grace's words
  });

  it('refuses a link with a bad token or an agent token, and nobody is signed out', async () => {
    await signedInAs('lb_grace');
    await start(startPlan('lb_garbage', storedToken()));
    expect(getState().choice).toBeNull();
    expect(getState().token).toBe('lb_grace');
    expect(getState().notice).toMatch(/not accepted.*still signed in as grace/);
    expect(storedToken()).toBe('lb_grace');

    await start(startPlan('lb_bot', storedToken()));
    expect(getState().token).toBe('lb_grace');
    expect(getState().notice).toMatch(/agent's token \(cursor\)/);
    expect(storedToken()).toBe('lb_grace');
  });

  it('takes the link when the kept token is revoked, or names the same person', async () => {
    storeToken('lb_revoked');
    await start(startPlan('lb_ada', storedToken()));
    expect(getState().choice).toBeNull();
    expect(getState().token).toBe('lb_ada');
    expect(storedToken()).toBe('lb_ada');
    signOut();

    await signedInAs('lb_grace');
    await start(startPlan('lb_grace2', storedToken()));
    expect(getState().choice).toBeNull();
    expect(getState().token).toBe('lb_grace2');
  });

  it("refuses an agent's token at the sign-in screen, and does not keep it", async () => {
    await signIn('lb_bot');
    expect(getState().token).toBeNull();
    expect(getState().signInMessage).toMatch(/token of the agent cursor: it can only be used by agents, over MCP/);
    expect(storedToken()).toBeNull();

    await signIn('lb_garbage');
    expect(getState().token).toBeNull();
    expect(getState().signInMessage).toMatch(/did not accept your sign-in/);
    expect(storedToken()).toBeNull();

    await signIn('lb_ada');
    expect(getState().whoami).toEqual(ada);
    expect(storedToken()).toBe('lb_ada');
  });

  it("forgets an agent's token kept from before, once the inbox refuses it", async () => {
    storeToken('lb_bot');
    await start(startPlan(null, storedToken()));
    await vi.waitFor(() => expect(getState().token).toBeNull());
    expect(getState().signInMessage).toMatch(/it can only be used by agents, over MCP/);
    expect(storedToken()).toBeNull();
  });

  it('never signs in over someone from a later change of the fragment, but takes the token out of the address bar', async () => {
    await signedInAs('lb_grace');
    history.replaceState(null, '', '/asks/abc#token=lb_ada');
    fragmentChanged();
    expect(location.href).not.toContain('lb_ada');
    expect(location.pathname).toBe('/asks/abc');
    expect(getState().token).toBe('lb_grace');
    expect(getState().choice).toBeNull();
    expect(getState().notice).toMatch(/ignored: a link signs in only when a page is opened with it/);
    expect(storedToken()).toBe('lb_grace');
    // Not even a check: the token went nowhere.
    expect(server.mock.calls.some(([, init]) => String((init.headers as Record<string, string>).Authorization).includes('lb_ada'))).toBe(false);

  });

  it('signs in from the sign-in link pasted into a signed-out tab, checked as every token is', async () => {
    // Signed out, the page shows nothing an agent wrote: the link came from the person.
    history.replaceState(null, '', '/#token=lb_ada');
    fragmentChanged();
    expect(location.hash).toBe('');
    await vi.waitFor(() => expect(getState().token).toBe('lb_ada'));
    expect(getState().whoami?.actor.name).toBe('ada');
    expect(storedToken()).toBe('lb_ada');
    signOut();
    // An agent's token pasted the same way is refused, and not kept.
    history.replaceState(null, '', '/#token=lb_bot');
    fragmentChanged();
    await vi.waitFor(() => expect(getState().signInMessage).toMatch(/only be used by agents/));
    expect(getState().token).toBeNull();
    expect(storedToken()).toBeNull();
  });

  it('takes the token out of a whole sign-in link pasted into the form', () => {
    expect(tokenFromPaste('  http://127.0.0.1:8080/#token=lb_abc  ')).toBe('lb_abc');
    expect(tokenFromPaste('lb_abc')).toBe('lb_abc');
    expect(tokenFromPaste('http://127.0.0.1:8080/#x=1&token=lb_def')).toBe('lb_def');
  });
});
