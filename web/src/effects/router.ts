// The address bar and the store's route: a navigation pushes (or replaces) the path, Back and
// Forward set the route from it.

import { getState, setState } from '../app';
import { parseRoute, routed, routePath, type Route } from '../store';

/**
 * Where each list was scrolled to when an ask was opened from it: on a phone the list and the ask
 * share the page's scroll, and coming back (an answer, Back, Esc) puts the list where it was.
 */
const listScroll = new Map<string, number>();

/**
 * A walk through the list beside the open ask (j and k on a wide screen) writes the address once it
 * stops, not at every ask it passes: each write is a same-document navigation, which costs the page
 * a frame's worth of work at every key (and Chromium fetches and decodes the favicon again after
 * it). A walk is one history entry: Back after it goes to where it began, not through every ask.
 */
export const WALK_SETTLE_MS = 400;
let walk: { path: string; replace: boolean; timer: ReturnType<typeof setTimeout> } | null = null;
/** The history entry shown is a walk's: the walk's later steps write over it rather than adding. */
let walkEntry = false;

function writeAddress(path: string, replace: boolean): void {
  if (location.pathname + location.search === path) return;
  if (replace) history.replaceState(null, '', path);
  else history.pushState(null, '', path);
}

/** Ends the walk under way, if any, without writing its address; returns it. */
function takeWalk(): typeof walk {
  const w = walk;
  if (w) clearTimeout(w.timer);
  walk = null;
  return w;
}

/** Writes a walk's address now (it stopped, or the page is going away or elsewhere). */
function settleWalk(): void {
  const w = takeWalk();
  if (w) writeAddress(w.path, w.replace);
}

/**
 * Shows route `r`. `replace` writes over the current history entry instead of adding one; `walking`
 * says this is a step of a walk through the list, whose address is written once the walk stops.
 */
export function navigate(r: Route, replace = false, walking = false): void {
  const from = getState().route;
  const path = routePath(r);
  if (walking) {
    // A walk adds one history entry, at its first step; every later step writes over it.
    const prev = takeWalk();
    walk = { path, replace: prev ? prev.replace : walkEntry || replace, timer: setTimeout(settleWalk, WALK_SETTLE_MS) };
    walkEntry = true;
  } else {
    settleWalk();
    writeAddress(path, replace);
    walkEntry = false;
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
  // Leaving or hiding the page keeps where a walk had got to (a reload opens that ask).
  addEventListener('pagehide', settleWalk);
  document.addEventListener('visibilitychange', () => {
    if (document.visibilityState === 'hidden') settleWalk();
  });
  addEventListener('popstate', () => {
    // Back or Forward during a walk: the browser's entry wins over the walk's unwritten one.
    takeWalk();
    walkEntry = false;
    const from = getState().route;
    const r = parseRoute(location.pathname, location.search);
    if (from.name !== 'ask' && r.name === 'ask') listScroll.set(from.name, window.scrollY);
    setState(routed(r));
    closeDialogs();
    if (from.name === 'ask' && r.name !== 'ask') restoreScroll(listScroll.get(r.name) ?? 0);
  });
}
