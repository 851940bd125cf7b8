// A menu under a button (the account, the bell).

import type { RefObject } from 'preact';
import { useLayoutEffect } from 'preact/hooks';

/**
 * A menu under a button (the account, the bell) closes on a click outside it or on Esc, which gives
 * the focus back to its button.
 */
export function usePopover(open: boolean, setOpen: (o: boolean) => void, root: RefObject<HTMLElement>, button: RefObject<HTMLElement>) {
  // A layout effect: attached before the next event, so an Esc right after opening is never missed.
  useLayoutEffect(() => {
    if (!open) return;
    const onPointer = (e: PointerEvent) => {
      if (!root.current?.contains(e.target as Node)) setOpen(false);
    };
    // In the capture phase, so the page's own Esc (back to the list) does not also run.
    const onKey = (e: KeyboardEvent) => {
      if (e.key !== 'Escape') return;
      e.preventDefault();
      e.stopPropagation();
      setOpen(false);
      button.current?.focus();
    };
    document.addEventListener('pointerdown', onPointer);
    document.addEventListener('keydown', onKey, true);
    return () => {
      document.removeEventListener('pointerdown', onPointer);
      document.removeEventListener('keydown', onKey, true);
    };
  }, [open]);
}
