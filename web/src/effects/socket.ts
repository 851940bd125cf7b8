// The event socket's lifecycle (live.ts keeps the socket): started for a session, stopped on sign-out,
// its frames applied to the store. What a frame means for the session (who is signed in, an agent's
// credential refused) is the session's (effects/session.ts), which hands it in: this module does not
// import the session, so the two do not import each other.

import { getState, setState } from '../app';
import { Live } from '../live';
import { fromSnapshot } from '../merge';
import { askFrame, snapshotReceived } from '../store';
import { announce } from './notifications';
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
    snapshot(s) {
      setState(snapshotReceived(fromSnapshot(s)));
      if (!getState().whoami) session.unconfirmed();
      // The server was not reachable when the bell looked (a start offline): look again now.
      recheckPushIfUnknown();
    },
    ask(type, a) {
      const f = askFrame(getState(), type, a);
      if (!f.patch) return;
      setState(f.patch);
      if (f.announce) announce(a, f.isNew);
    },
    state(conn) {
      setState({ conn });
    },
    forbidden() {
      // The server says this credential may not read the inbox: an agent's, kept from before these
      // checks or taken while the server could not be asked. It is not kept.
      session.forbidden();
    },
  });
  live.start();
}

export function stopLive(): void {
  live?.stop();
  live = null;
}

export function retryLive(): void {
  live?.retryNow();
}
