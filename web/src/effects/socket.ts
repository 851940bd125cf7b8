// The event socket's lifecycle (live.ts keeps the socket): started for a session, stopped on sign-out,
// its frames applied to the store. What a frame means for the session (who is signed in, an agent's
// credential refused) is the session's (effects/session.ts), which hands it in: this module does not
// import the session, so the two do not import each other.

import { getState, setState } from '../app';
import { Live } from '../live';
import { fromSnapshot } from '../merge';
import { askFrame, deltaReceived, snapshotReceived } from '../store';
import { readSettings } from '../triage';
import type { Ask, Reply } from '../types';
import { approvalLine } from '../approval';
import { plainText } from '../markdown';
import { announce } from './notifications';
import { fetchMarks, loadMarks } from './marks';
import { sameMarks } from '../marks';
import { keepSnapshot, showKeptSnapshot } from './offline';
import { recheckPushIfUnknown } from './webpush';

/** What the socket's frames ask of the session that started it. */
export interface LiveSession {
  /** A snapshot arrived and the page does not know yet who is signed in: ask the server. */
  unconfirmed(): void;
  /** The server says this credential may not read the inbox. */
  forbidden(): void;
}

let live: Live | null = null;

export function startLive(session: LiveSession): void {
  live?.stop();
  live = new Live({
    // The marks come with the first snapshot, so no row is drawn unread and then read.
    alongside: () => fetchMarks().catch(() => null),
    snapshot(s, delta, marks) {
      const patch = delta ? deltaReceived(getState(), s) : snapshotReceived(fromSnapshot(s));
      if (delta && !readSettings().hold) delete patch.held; // as for a frame: the pill only when holding
      const withMarks = marks instanceof Map;
      if (withMarks && !sameMarks(getState().marks, marks)) patch.marks = marks;
      setState(patch);
      keepSnapshot();
      // A socket's snapshot (a reconnect, or the first one after the HTTP read) reads them again.
      if (!withMarks) void loadMarks();
      if (!getState().whoami) session.unconfirmed();
      // The server was not reachable when the bell looked (a start offline): look again now.
      recheckPushIfUnknown();
    },
    ask(type, a) {
      const f = askFrame(getState(), type, a);
      if (!f.patch) return;
      if (f.patch.held && !readSettings().hold) delete f.patch.held;
      setState(f.patch);
      keepSnapshot();
      if (f.announce) announce(a, f.isNew);
      if (f.isNew && a.status !== 'closed') say(`New ${a.kind}${a.project ? ` in ${a.project}` : ''}: ${titleWords(a)}`);
    },
    mark(m) {
      // Marked on another device of the person's (or this one: the same mark again).
      setState((s) => ({ marks: new Map(s.marks).set(m.askId, m) }));
    },
    state(conn) {
      setState({ conn });
      // Nothing live to show and Loopback out of reach: what this device heard last.
      if ((conn.status === 'offline' || conn.status === 'retrying') && !getState().liveReady) void showKeptSnapshot();
    },
    forbidden() {
      // The server says this credential may not read the inbox: an agent's, kept from before these
      // checks or taken while the server could not be asked. It is not kept.
      session.forbidden();
    },
  });
  live.start();
}

/**
 * Sends a reply on the event socket when it is live (contract revision 8), or null: then it goes
 * over HTTP (effects/asks.ts).
 */
export function socketReply(askId: string, reply: Reply): Promise<Ask> | null {
  return live?.reply(askId, reply) ?? null;
}

export function stopLive(): void {
  live?.stop();
  live = null;
}

export function retryLive(): void {
  live?.retryNow();
}

function titleWords(a: Ask): string {
  if (a.kind === 'approval') return approvalLine(a, 120);
  return plainText(a.kind === 'question' ? a.prompt.question : a.prompt.title, 120);
}

/** Tells a screen reader, politely (the page's aria-live region, App.tsx). */
export function say(text: string): void {
  const el = document.getElementById('announcer');
  if (el) el.textContent = text;
}
