// The inbox's state, as the views and main.tsx use it: the pure store (store.ts) held by app.ts, and
// the edges that change it (effects/*.ts). Importing this module starts nothing: main.tsx calls
// startEffects() once, as the page loads, so a test (or any other importer) starts only what it asks for.
//
//   store.ts                  the state, its changes and selectors, subscribe/notify: no DOM, no fetch, no timers
//   app.ts                    the page's store, made from what the page finds on load; useApp
//   effects/router.ts         the address bar: navigate, Back and Forward
//   effects/session.ts        signing in and out, the switch dialog's answer, 401s and revision banners
//   effects/socket.ts         the event socket's lifecycle (live.ts) and its frames
//   effects/asks.ts           one ask, a reply, the history pages, the project filter
//   effects/toasts.ts         toasts and their timers
//   effects/triage.ts         a reply held for undo, the next ask after an answer, online or not
//   effects/title.ts          the document's title
//   effects/notifications.ts  the unseen count and the page's own notifications
//   effects/webpush.ts        the bell: Web Push on this device
//   effects/help.ts           the shortcuts dialog following the store's `help`
//   effects/rules.ts          the space's rules: read, made, changed, deleted
//   effects/marks.ts          the person's own marks on asks: read or unread, snoozed

import { startRouter } from './effects/router';
import { startSession } from './effects/session';
import { startTitle } from './effects/title';
import { startUnseen } from './effects/notifications';
import { startTriage } from './effects/triage';
import { startMarks } from './effects/marks';

export { getState, setState, store, useApp } from './app';
export { findAsk, parseRoute, routePath, titleOf } from './store';
export type { AppState, Choice, HistoryState, Route } from './store';
export { HISTORY_PAGE, loadAsk, loadHistoryPage, problemText, sendReply, setProject } from './effects/asks';
export { closeHelp, followHelp, openHelp } from './effects/help';
export { enableNotifications } from './effects/notifications';
export { loadMarks, markOpened, READ_AFTER_MS, setMark } from './effects/marks';
export { navigate, requestDetailFocus, takeDetailFocus } from './effects/router';
export { checkToken, fragmentChanged, resolveChoice, setNotice, signIn, signOut, start } from './effects/session';
export { deleteRule, loadRules, saveRule } from './effects/rules';
export { retryLive } from './effects/socket';
export { toast } from './effects/toasts';
export { advanceFrom, flushPending, queueDismissAll, queueReply, undoPending, wide } from './effects/triage';
export { readSettings as readSettingsNow } from './triage';
export { checkPush, turnPushOff, turnPushOn } from './effects/webpush';

/**
 * Starts the edges that listen for the page's whole life: the session's hooks on every call's
 * answer, Back and Forward, the unseen count, the document's title. Once, from main.tsx.
 */
export function startEffects(): void {
  startSession();
  startRouter();
  startUnseen();
  startTitle();
  startTriage();
  startMarks();
}
