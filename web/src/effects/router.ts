// The address bar and the store's route: a navigation pushes (or replaces) the path, Back and
// Forward set the route from it.

import { getState, setState } from '../app';
import { parseRoute, routed, routePath, type Route } from '../store';

/**
 * Where each list was scrolled to when an ask was opened from it: on a phone the list and the ask
 * share the page's scroll, and coming back (an answer, Back, Esc) puts the list where it was.
 */
const listScroll = new Map<string, number>();

export function navigate(r: Route, replace = false): void {
  const from = getState().route;
  const path = routePath(r);
  if (location.pathname + location.search !== path) {
    if (replace) history.replaceState(null, '', path);
    else history.pushState(null, '', path);
  }
  if (from.name !== 'ask' && r.name === 'ask') listScroll.set(from.name, window.scrollY);
  setState(routed(r));
  closeDialogs();
  if (r.name !== 'ask') restoreScroll(from.name === 'ask' ? (listScroll.get(r.name) ?? 0) : 0);
}

/** Scrolls the page once the view it belongs to has been drawn. */
function restoreScroll(y: number): void {
  window.scrollTo(0, y);
  if (y > 0) requestAnimationFrame(() => window.scrollTo(0, y));
}

/**
 * A modal left open would cover the page that was just navigated to (a notification's click, Back).
 * The help follows the store (routed closes it); this closes any other (the switch dialog).
 */
function closeDialogs(): void {
  for (const d of document.querySelectorAll<HTMLDialogElement>('dialog[open]')) d.close();
}

let detailFocus = false;

/** The next ask opened should take the focus (it was opened from the keyboard). */
export function requestDetailFocus(): void {
  detailFocus = true;
}

export function takeDetailFocus(): boolean {
  const f = detailFocus;
  detailFocus = false;
  return f;
}

/** Back and Forward. */
export function startRouter(): void {
  addEventListener('popstate', () => {
    const from = getState().route;
    const r = parseRoute(location.pathname, location.search);
    if (from.name !== 'ask' && r.name === 'ask') listScroll.set(from.name, window.scrollY);
    setState(routed(r));
    closeDialogs();
    if (from.name === 'ask' && r.name !== 'ask') restoreScroll(listScroll.get(r.name) ?? 0);
  });
}
