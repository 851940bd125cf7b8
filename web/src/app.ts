// The page's one store (store.ts), made from what the page finds around it on load, and the hook the
// views read it with. The edges (effects/*.ts) change it; the views only read it and call actions.

import { useLayoutEffect, useState } from 'preact/hooks';
import { derivePushState, initialPushFacts, type PushFacts } from './push';
import { createStore, initialState, parseRoute, type AppState, type Patch } from './store';

export const PROJECT_KEY = 'loopback.project';

function readProject(): string {
  try {
    return localStorage.getItem(PROJECT_KEY) ?? '';
  } catch {
    return '';
  }
}

const permission = typeof Notification === 'undefined' ? 'unsupported' : Notification.permission;

/** The bell's facts on load (effects/webpush.ts carries them on). Known at once where nothing can be looked up. */
export const startingPushFacts: PushFacts = initialPushFacts(permission);

export const store = createStore(
  initialState({
    project: readProject(),
    route: parseRoute(location.pathname, location.search),
    notifications: permission,
    push: derivePushState(startingPushFacts),
    online: typeof navigator === 'undefined' ? true : navigator.onLine !== false,
  }),
);

export function getState(): AppState {
  return store.get();
}

export function setState(patch: Patch): void {
  store.set(patch);
}

/**
 * The app state in a component, re-rendering on every change. A component subscribes only after
 * it has rendered, so a change made in between (a fast 401 to the first whoami, say) is caught by
 * comparing the state it rendered with the state at subscription.
 */
export function useApp(): AppState {
  const [, force] = useState(0);
  const rendered = store.get();
  useLayoutEffect(() => {
    const l = () => force((n) => n + 1);
    const unsubscribe = store.subscribe(l);
    if (store.get() !== rendered) l();
    return unsubscribe;
  }, []);
  return store.get();
}
