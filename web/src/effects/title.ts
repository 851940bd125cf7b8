// The document's title follows the store (titleOf).

import { store } from '../app';
import { titleOf } from '../store';

export function startTitle(): void {
  let last = '';
  store.subscribe((s) => {
    const title = titleOf(s);
    if (title !== last) {
      last = title;
      document.title = title;
    }
  });
}
