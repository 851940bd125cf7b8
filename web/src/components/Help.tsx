// The keyboard shortcuts' dialog.

import { useLayoutEffect, useRef } from 'preact/hooks';
import { closeHelp, followHelp } from '../state';

/**
 * The shortcuts dialog. Whether it is open is the store's alone (openHelp, closeHelp): the dialog
 * follows each change of the store at once, never a render's effect (effects/help.ts).
 */
export function Help() {
  const ref = useRef<HTMLDialogElement>(null);
  useLayoutEffect(() => (ref.current ? followHelp(ref.current) : undefined), []);
  return (
    <dialog class="help" ref={ref} aria-labelledby="help-title">
      <h2 id="help-title">Keyboard shortcuts</h2>
      <dl class="shortcuts">
        <dt>
          <kbd>j</kbd> <kbd>k</kbd>
        </dt>
        <dd>Next / previous ask in the list</dd>
        <dt>
          <kbd>Enter</kbd>
        </dt>
        <dd>Open the ask in focus</dd>
        <dt>
          <kbd>Esc</kbd>
        </dt>
        <dd>Back to the list</dd>
        <dt>
          <kbd>g</kbd> <kbd>i</kbd> / <kbd>g</kbd> <kbd>h</kbd>
        </dt>
        <dd>Go to open asks / history</dd>
        <dt>
          <kbd>g</kbd> <kbd>r</kbd>
        </dt>
        <dd>Go to the rules</dd>
        <dt>
          <kbd>/</kbd>
        </dt>
        <dd>Search every ask, open and closed (Esc clears it)</dd>
        <dt>
          <kbd>a</kbd> / <kbd>d</kbd>
        </dt>
        <dd>Allow / deny the open approval (deny sends the message, if you wrote one)</dd>
        <dt>
          <kbd>a</kbd> / <kbd>c</kbd>
        </dt>
        <dd>Approve / request changes on the open review</dd>
        <dt>
          <kbd>1</kbd>–<kbd>6</kbd>
        </dt>
        <dd>Pick a choice of the open question</dd>
        <dt>
          <kbd>e</kbd>
        </dt>
        <dd>Done: dismiss the open ask and go to the next (with asks picked: dismiss those)</dd>
        <dt>
          <kbd>u</kbd>
        </dt>
        <dd>Mark the ask under the cursor read or unread</dd>
        <dt>
          <kbd>x</kbd>
        </dt>
        <dd>Pick the ask under the cursor for a bulk dismiss (shift-click a box picks a range)</dd>
        <dt>
          <kbd>z</kbd>
        </dt>
        <dd>Undo the reply just given (it is held a few seconds before it is sent)</dd>
        <dt>
          <kbd>Ctrl</kbd> <kbd>Enter</kbd>
        </dt>
        <dd>Send, while typing an answer</dd>
        <dt>
          <kbd>?</kbd>
        </dt>
        <dd>This help</dd>
      </dl>
      <button class="btn primary wide" type="button" onClick={closeHelp}>
        Close
      </button>
    </dialog>
  );
}
