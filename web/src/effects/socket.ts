// The event socket's lifecycle (live.ts keeps the socket): started for a session, stopped on sign-out,
// its frames applied to the store.

import { getState, setState } from '../app';
import { refusalText } from '../auth';
import { Live } from '../live';
import { fromSnapshot } from '../merge';
import { askFrame, snapshotReceived } from '../store';
import { announce } from './notifications';
import { confirmSession, signOut } from './session';
import { recheckPushIfUnknown } from './webpush';

let live: Live | null = null;

export function startLive(): void {
  live?.stop();
  live = new Live({
    snapshot(s) {
      setState(snapshotReceived(fromSnapshot(s)));
      if (!getState().whoami) void confirmSession();
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
      signOut(refusalText({ kind: 'agent', who: getState().whoami }));
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
