import { render } from 'preact';
import { startPlan, storedToken, takeTokenFromFragment } from './auth';
import { ActionPage, takeActionToken } from './components/ActionPage';
import { App } from './components/App';
import { pruneDrafts } from './drafts';
import { takeSignInCodes } from './pairing';
import { listenToWorker, registerWorker } from './push';
import { fragmentChanged, navigate, parseRoute, setNotice, start, startEffects } from './state';
import './styles.css';

function startInbox(): void {
  // A token in the fragment leaves the address bar before anything else happens. It counts only now,
  // as the page loads, and never replaces someone signed in without asking them (auth.ts).
  // The edges start listening before anything can change the store (a 401 to the first call, Back).
  // A pairing code (/pair#code=) or an invite (/join#invite=) leaves it too: the signed-out page
  // offers it, and the person presses the button (pairing.ts).
  const codes = takeSignInCodes();
  startEffects();
  const plan = startPlan(takeTokenFromFragment(), storedToken());
  if (plan.kind !== 'signed-out' && (codes.pairing || codes.invite))
    setNotice(
      codes.invite
        ? 'This browser is signed in already, so the invite you opened was not used. To join as the invited teammate, open the link in a private window or on another browser.'
        : 'This browser is signed in already, so the pairing link you opened was not used.',
    );
  pruneDrafts();
  void start(plan);
  // Later the fragment changes only by a link clicked in the page or a script: neither may sign in,
  // out or over.
  addEventListener('hashchange', fragmentChanged);
  // The service worker keeps the app shell for offline use and shows Web Push notifications; a click
  // on one opens its ask here, in place.
  void registerWorker();
  listenToWorker((path) => navigate(parseRoute(path)));
  render(<App />, document.getElementById('app')!);
}

// An action link's confirmation page (/act#<token>) stands alone: its token is no sign-in, and it
// answers nothing until its button is pressed (ActionPage.tsx).
if (location.pathname === '/act') render(<ActionPage token={takeActionToken()} />, document.getElementById('app')!);
else startInbox();
