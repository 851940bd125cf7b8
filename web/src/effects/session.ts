// Signing in and out (the rules are auth.ts's): checking a token with the server, keeping it, the
// switch dialog's answer, and what a refused token does to the page.

import { api, ApiError, isForbidden, probe, setHooks, setToken } from '../api';
import { getState, setState } from '../app';
import {
  decideSwitch,
  describe,
  forgetToken,
  LATE_LINK_TEXT,
  refusalText,
  sameIdentity,
  storeToken,
  takeTokenFromFragment,
  type StartPlan,
  type TokenCheck,
} from '../auth';
import { clearAllDrafts } from '../drafts';
import { forgetFiles } from '../files';
import { noticeSet, signedOut } from '../store';
import type { Whoami } from '../types';
import { problemText } from './asks';
import { forgetKeptSnapshot } from './offline';
import { flushPending } from './triage';
import { startLive, stopLive, type LiveSession } from './socket';
import { toast } from './toasts';
import { checkPush, pushSignedOut } from './webpush';

/**
 * Asks the server about a token without using it for the page: whoami, then one small read of the
 * inbox, which an agent's credential is refused (403 auth.forbidden). Nothing is stored, and a
 * refusal here signs nobody out.
 */
export async function checkToken(token: string): Promise<TokenCheck> {
  let who: Whoami;
  try {
    who = await probe(token, 'GET', '/whoami');
  } catch (err) {
    return failedCheck(err, null);
  }
  try {
    await probe(token, 'GET', '/asks', { query: { limit: 1 } });
  } catch (err) {
    const c = failedCheck(err, who);
    if (c.kind !== 'unreachable') return c;
    // whoami answered: a passing failure of the read is for the live connection to retry.
  }
  return { kind: 'person', who };
}

function failedCheck(err: unknown, who: Whoami | null): TokenCheck {
  if (err instanceof ApiError && err.status === 401) return { kind: 'refused', message: err.message };
  if (isForbidden(err)) return { kind: 'agent', who };
  return { kind: 'unreachable', message: problemText(err) };
}

/**
 * Signs in with a token from the sign-in form, or the one link or device brought when nobody is
 * signed in. It is checked first: refused (401) or an agent's (403), it is not kept and the sign-in
 * screen says why. When the server cannot be asked, the page uses it and keeps trying; it is stored
 * once the server has answered for it.
 */
export async function signIn(token: string): Promise<void> {
  setState({ signingIn: true, signInMessage: null });
  const c = await checkToken(token);
  setState({ signingIn: false });
  if (c.kind === 'person') adopt(token, c.who);
  else if (c.kind === 'unreachable') adopt(token, null);
  else refuse(refusalText(c));
}

/** What the page does on load (main.tsx), by the rules in auth.ts. */
export async function start(plan: StartPlan): Promise<void> {
  switch (plan.kind) {
    case 'signed-out':
      return;
    case 'sign-in':
      return plan.fromLink ? signIn(plan.token) : resume(plan.token);
    case 'choose': {
      setState({ signingIn: true, signInMessage: null });
      const [current, next] = await Promise.all([checkToken(plan.current), checkToken(plan.next)]);
      setState({ signingIn: false });
      const d = decideSwitch(current, next);
      switch (d.kind) {
        case 'take':
          adopt(plan.next, d.next);
          return;
        case 'neither':
          refuse(d.message);
          return;
        case 'keep':
          adopt(plan.current, current.kind === 'person' ? current.who : null);
          setState({ notice: d.notice });
          return;
        case 'ask':
          adopt(plan.current, d.current);
          setState({ choice: { token: plan.next, current: d.current, next: d.next } });
          return;
      }
    }
  }
}

/**
 * The person's answer to the switch dialog. Keeping changes nothing. Switching is a sign-out of the
 * current person (their drafts on this device go too, so nobody sends another's half-written reply)
 * and a sign-in as the link's.
 */
export function resolveChoice(take: boolean): void {
  const c = getState().choice;
  if (!c) return;
  setState({ choice: null });
  if (!take) {
    const who = getState().whoami;
    if (who) toast(`Still signed in as ${describe(who)}.`);
    return;
  }
  signOut(null, !(c.current && sameIdentity(c.current, c.next)));
  adopt(c.token, c.next);
  toast(`Signed in as ${describe(c.next)}.`);
}

/** Uses a token for the page: kept on this device once the server has vouched for it (`who`). */
function adopt(token: string, who: Whoami | null): void {
  const current = getState().token;
  if (current && current !== token) signOut(); // another credential: nothing of the last one stays
  setToken(token);
  if (who) storeToken(token);
  setState({ token, whoami: who, signInMessage: null });
  startLive(liveSession);
  void checkPush();
}

/** What the event socket's frames do to the session (effects/socket.ts). */
const liveSession: LiveSession = {
  unconfirmed() {
    void confirmSession();
  },
  forbidden() {
    signOut(refusalText({ kind: 'agent', who: getState().whoami }));
  },
};

/** A token was refused: whatever it was, it is not kept, and the sign-in screen says why. */
function refuse(message: string): void {
  if (getState().token) signOut(message);
  else {
    forgetToken();
    setState({ signInMessage: message });
  }
}

/**
 * The token kept on this device, on a page load without a link: the inbox shows at once, as the
 * server vouched for it before it was kept; whoami then says who it is. A 401 signs out as on any
 * call, and an agent's credential (kept before these checks) is refused by the inbox's first read.
 */
async function resume(token: string): Promise<void> {
  adopt(token, null);
  await confirmSession();
}

/** The lookup under way, so the first snapshot of a load does not ask again while resume() asks. */
let confirming: { token: string | null; done: Promise<void> } | null = null;

/** Looks up who the page's token is, and keeps it (a token used while the server could not be asked). */
export function confirmSession(): Promise<void> {
  const token = getState().token;
  if (confirming?.token === token) return confirming.done;
  const done = lookUp(token).finally(() => {
    if (confirming?.done === done) confirming = null;
  });
  confirming = { token, done };
  return done;
}

async function lookUp(token: string | null): Promise<void> {
  try {
    const who = await api('GET', '/whoami');
    if (getState().token !== token || !token) return;
    storeToken(token);
    setState({ whoami: who });
  } catch (err) {
    // A 401 has signed out already; a server down: the next snapshot asks again.
    if (isForbidden(err) && getState().token === token) signOut(refusalText({ kind: 'agent', who: null }));
  }
}

/**
 * The fragment changed after the page loaded: a link clicked in the page, or a script, or the sign-in
 * link pasted into a signed-out tab. Signed in, its token leaves the address bar at once and is
 * dropped, with a note: it never signs out or over. Signed out, it signs in (nothing an agent wrote
 * is on a signed-out page to have set it).
 */
export function fragmentChanged(): void {
  const st = getState();
  if (!st.token && !st.choice) {
    // Nobody is signed in, so the page shows nothing an agent wrote: the link was pasted into this
    // tab by the person, and signs in as it would on a load (checked first, as every token is).
    const token = takeTokenFromFragment();
    if (token && !st.signingIn) void signIn(token);
    return;
  }
  if (takeTokenFromFragment()) setNotice(LATE_LINK_TEXT);
}

/** Says something about signing in until the person dismisses it (or `null` to dismiss). */
export function setNotice(text: string | null): void {
  setState((s) => noticeSet(s, text));
}

/**
 * Signs out: forgets the token, the asks and the images' blob URLs. Drafts are kept when Loopback
 * refused the token (the person signs in again and carries on), and forgotten when the person
 * signs out themselves (`forgetDrafts`).
 */
export function signOut(message: string | null = null, forgetDrafts = false): void {
  // A reply given and held for undo is sent first, with the credential that gave it.
  flushPending();
  if (forgetDrafts) clearAllDrafts();
  stopLive();
  const token = getState().token;
  if (token) pushSignedOut(token);
  setToken(null);
  forgetToken();
  forgetFiles();
  forgetKeptSnapshot();
  setState(signedOut(message));
}

/** What any call's answer does to the session: a 401 signs out, a revision mismatch shows a banner. */
export function startSession(): void {
  setHooks({
    unauthorized(message) {
      if (!getState().token) return;
      signOut(refusalText({ kind: 'refused', message }));
    },
    reload(kind) {
      if (getState().banner !== kind) setState({ banner: kind });
    },
  });
}
