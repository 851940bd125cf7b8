// Signing in. `loopback serve` prints the inbox's address with the token in the URL fragment
// (`/#token=lb_…`): a browser never sends the fragment to a server, so it appears in no request and
// no access log. The page takes it from there, keeps it in localStorage, and takes it out of the
// address bar (and so out of the history and of any copied link) at once. The token is never logged.
//
// The rules, so that nothing an agent writes can steer who is signed in (agents write the markdown
// this page shows, and several people may share a space):
//
// - A token is read from the fragment when the page loads: the printed link, or a teammate's
//   (`loopback token create --person`). A later `hashchange` (a link clicked in the page, a script)
//   never signs out or over: its token leaves the address bar at once and is dropped, with a note.
//   Only on a signed-out page, which shows nothing an agent wrote, does a later fragment sign in:
//   the printed link pasted into that tab.
// - A token is checked before it is kept: `GET /whoami`, then one read of the inbox. A 401 is refused
//   with the server's reason. A 403 `auth.forbidden` means an agent's credential, which may only be
//   used over MCP: it is refused with a word on what to use instead. Neither is ever stored. (The
//   token already kept is used at once on a load without a link; if the server now refuses it,
//   with a 401 or, for an agent's, a 403 on the inbox's first read, it is forgotten the same way.)
// - A link's token while someone else is signed in never replaces the session by itself. Both are
//   looked up, and a dialog shows both identities (name and space) with *Keep <current>* and
//   *Switch to <new>*; closing it keeps the current one. The link's token is taken without asking
//   only when the kept one is refused, or names the very same person in the same space.
// - Only the person (*Sign out*) or a 401 from the server signs out.
// - Agent-written markdown cannot link to anything with `token` in its query or fragment: those
//   links are rendered as plain text (markdown.ts), so agents have no way to start any of this.

import type { Whoami } from './types';

const KEY = 'loopback.token';

/** Reads a token from the fragment, removing it from the address bar; null when there is none. */
export function takeTokenFromFragment(loc: Location = location, hist: History = history): string | null {
  const hash = loc.hash.replace(/^#/, '');
  if (!hash) return null;
  const params = new URLSearchParams(hash);
  const token = params.get('token');
  if (token === null) return null;
  params.delete('token');
  const rest = params.toString();
  hist.replaceState(hist.state, '', loc.pathname + loc.search + (rest ? '#' + rest : ''));
  return token.trim() || null;
}

export function storedToken(): string | null {
  try {
    return localStorage.getItem(KEY);
  } catch {
    return null;
  }
}

export function storeToken(token: string): void {
  try {
    localStorage.setItem(KEY, token);
  } catch {
    // private mode without storage: the token lasts for this page only
  }
}

export function forgetToken(): void {
  try {
    localStorage.removeItem(KEY);
  } catch {
    // nothing kept
  }
}

// --------------------------------------------------------------------------------- the rules --

/** What the server said of a token, before the page keeps it. */
export type TokenCheck =
  /** A person's credential: whoami answered and so did the inbox. */
  | { kind: 'person'; who: Whoami }
  /** 401: unknown, mistyped or revoked. */
  | { kind: 'refused'; message: string }
  /** 403 auth.forbidden: a live credential, but an agent's (whoami may still have named it). */
  | { kind: 'agent'; who: Whoami | null }
  /** No answer (the server is down, or failed): nothing is known about the token. */
  | { kind: 'unreachable'; message: string };

/** What the page does on load, from the fragment's token and the one kept on this device. */
export type StartPlan =
  | { kind: 'signed-out' }
  /** One token, nobody else's session to displace: check it and sign in. */
  | { kind: 'sign-in'; token: string; fromLink: boolean }
  /** The link brings another token than the one kept: check both, then maybe ask. */
  | { kind: 'choose'; current: string; next: string };

export function startPlan(fromLink: string | null, stored: string | null): StartPlan {
  if (fromLink && stored && fromLink !== stored) return { kind: 'choose', current: stored, next: fromLink };
  if (fromLink) return { kind: 'sign-in', token: fromLink, fromLink: true };
  if (stored) return { kind: 'sign-in', token: stored, fromLink: false };
  return { kind: 'signed-out' };
}

/** Once both tokens of a 'choose' are checked: what happens to the session. */
export type SwitchDecision =
  /** Keep the current session; `notice` says why the link's token was not used. */
  | { kind: 'keep'; notice: string }
  /** Ask the person, showing both (current is null when it could not be looked up). */
  | { kind: 'ask'; current: Whoami | null; next: Whoami }
  /** Take the link's token without asking: the kept one is dead, or it is the same person. */
  | { kind: 'take'; next: Whoami }
  /** Neither can be used: the sign-in screen, saying why the link's token was refused. */
  | { kind: 'neither'; message: string };

export function decideSwitch(current: TokenCheck, next: TokenCheck): SwitchDecision {
  const currentDead = current.kind === 'refused' || current.kind === 'agent';
  if (next.kind !== 'person') {
    if (currentDead) return { kind: 'neither', message: refusalText(next) };
    const who = current.kind === 'person' ? ` as ${describe(current.who)}` : '';
    return { kind: 'keep', notice: `${linkRefusalText(next)} Nothing changed: you are still signed in${who}.` };
  }
  if (currentDead) return { kind: 'take', next: next.who };
  if (current.kind === 'person' && sameIdentity(current.who, next.who)) return { kind: 'take', next: next.who };
  return { kind: 'ask', current: current.kind === 'person' ? current.who : null, next: next.who };
}

export function sameIdentity(a: Whoami, b: Whoami): boolean {
  return a.space === b.space && a.actor.id === b.actor.id;
}

/** A signed-in identity in words: its name (or id) and its space. */
export function describe(w: Whoami): string {
  return `${displayName(w)} (space ${w.space})`;
}

export function displayName(w: Whoami): string {
  return w.actor.name || w.actor.id;
}

export const AGENT_TOKEN_TEXT =
  "That is an agent's token: it can only be used by agents, over MCP. Sign in with your own (person) token: the Inbox link `loopback serve` printed, or one from `loopback token create --person`.";

/** Why a token was not accepted, for the sign-in screen. */
export function refusalText(c: TokenCheck): string {
  switch (c.kind) {
    case 'refused':
      return (
        'Loopback did not accept your sign-in' +
        (c.message ? ` (${c.message.replace(/\.$/, '')})` : '') +
        '. The token may have been revoked or mistyped: open the inbox link that `loopback serve` printed, or paste the token below.'
      );
    case 'agent':
      return c.who ? AGENT_TOKEN_TEXT.replace("an agent's token", `the token of the agent ${displayName(c.who)}`) : AGENT_TOKEN_TEXT;
    case 'unreachable':
      return c.message;
    case 'person':
      return '';
  }
}

/** Why the token of a link opened while signed in was not used. */
function linkRefusalText(c: TokenCheck): string {
  switch (c.kind) {
    case 'refused':
      return `The sign-in link you opened was not accepted${c.message ? ` (${c.message.replace(/\.$/, '')})` : ''}.`;
    case 'agent':
      return `The sign-in link you opened carries an agent's token${c.who ? ` (${displayName(c.who)})` : ''}, which only agents can use, over MCP.`;
    case 'unreachable':
      return `The sign-in link you opened could not be checked (${c.message.replace(/\.$/, '')}); open it again once Loopback answers.`;
    case 'person':
      return '';
  }
}

/** Said when a token turns up in the fragment after the page has loaded (and is dropped). */
export const LATE_LINK_TEXT =
  'A sign-in link was opened inside this page and ignored: a link signs in only when a page is opened with it. To use it, open it in a new tab.';

/**
 * The token in what the person pasted into the sign-in form: the token itself, or the whole
 * sign-in link (`http://127.0.0.1:8080/#token=lb_…`), whose fragment holds it.
 */
export function tokenFromPaste(text: string): string {
  const t = text.trim();
  const i = t.indexOf('#');
  if (i >= 0) {
    const token = new URLSearchParams(t.slice(i + 1)).get('token');
    if (token) return token.trim();
  }
  return t;
}
