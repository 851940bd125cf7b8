// The shortcuts dialog. Whether it is open is the store's `help`, alone: the dialog element follows
// it on every change of the store, at once (never through a render's effect, which could be a
// leftover of an earlier render), and every way the person closes it goes through the store first.

import { getState, setState, store } from '../app';
import { helpClosed, helpOpened } from '../store';

export function openHelp(): void {
  setState(helpOpened());
}

export function closeHelp(): void {
  setState(helpClosed());
}

/** Makes `d` follow the store's `help` until the returned function is called. */
export function followHelp(d: HTMLDialogElement): () => void {
  const sync = () => {
    const open = getState().help;
    if (open && !d.open) d.showModal();
    else if (!open && d.open) d.close();
  };
  // Esc (or a phone's Back): the store hears of it before the dialog closes, so that a ? right
  // after opens it again.
  const onCancel = () => closeHelp();
  // Closed any other way (a form's submit, a script): the store follows, unless it was opened again.
  const onClose = () => {
    if (!d.open && getState().help) closeHelp();
  };
  d.addEventListener('cancel', onCancel);
  d.addEventListener('close', onClose);
  const unsubscribe = store.subscribe(sync);
  sync();
  return () => {
    unsubscribe();
    d.removeEventListener('cancel', onCancel);
    d.removeEventListener('close', onClose);
  };
}
