// The address bar and the store's route: a navigation pushes (or replaces) the path, Back and
// Forward set the route from it.

import { setState } from '../app';
import { parseRoute, routed, routePath, type Route } from '../store';

export function navigate(r: Route, replace = false): void {
  const path = routePath(r);
  if (location.pathname + location.search !== path) {
    if (replace) history.replaceState(null, '', path);
    else history.pushState(null, '', path);
  }
  setState(routed(r));
  closeDialogs();
  if (r.name !== 'ask') window.scrollTo(0, 0);
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
    setState(routed(parseRoute(location.pathname, location.search)));
    closeDialogs();
  });
}
