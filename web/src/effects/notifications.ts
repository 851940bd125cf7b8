// The person hears of asks while the page is hidden: a count in the title (the store's `unseen`)
// and, where Web Push does not work, the page's own notifications.

import { getState, setState } from '../app';
import { approvalLine } from '../approval';
import { plainText } from '../markdown';
import { usesTabNotifications } from '../push';
import { unseenAdded } from '../store';
import type { Ask } from '../types';
import { navigate } from './router';
import { setPush } from './webpush';

/** A new ask, or one whose move came back to the person, while the page is hidden: count it and notify. */
export function announce(a: Ask, isNew: boolean): void {
  if (document.visibilityState !== 'hidden') return;
  setState(unseenAdded);
  // Where Web Push works, the service worker notifies (pushed by the server, even with the tab
  // closed); this page adds none of its own, which would come twice. Where it does not, the page
  // notifies while it is open, as it always did, once the person allowed it.
  const state = getState();
  if (state.notifications !== 'granted' || !usesTabNotifications(state.push)) return;
  try {
    const what =
      a.kind === 'question' ? plainText(a.prompt.question, 120) : a.kind === 'approval' ? approvalLine(a, 120) : a.prompt.title.slice(0, 120);
    const head = a.kind === 'approval' ? `wants to use ${a.prompt.tool}` : isNew ? `new ${a.kind}` : `your move on a ${a.kind}`;
    const n = new Notification(`${a.project ?? 'An agent'}: ${head}`, { body: what, tag: a.id });
    n.onclick = () => {
      window.focus();
      navigate({ name: 'ask', id: a.id });
      n.close();
    };
  } catch {
    // notifications unavailable in this context
  }
}

/** Back on the page: nothing is unseen any more. */
export function startUnseen(): void {
  document.addEventListener('visibilitychange', () => {
    if (document.visibilityState === 'visible' && getState().unseen) setState({ unseen: 0 });
  });
}

/** The in-page notifications (where Web Push does not work): asks the browser's permission. */
export async function enableNotifications(): Promise<void> {
  if (typeof Notification === 'undefined') return;
  const p = await Notification.requestPermission();
  setPush({ permission: p });
}
