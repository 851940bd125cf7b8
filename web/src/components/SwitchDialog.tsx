// The dialog that asks, showing both, whether a sign-in link for someone else should switch.

import { useLayoutEffect, useRef } from 'preact/hooks';
import { displayName } from '../auth';
import { resolveChoice, type Choice } from '../state';

/**
 * A sign-in link names someone else than the person signed in: they choose, seeing both. The dialog
 * opens itself once; however it closes (a button, Esc, a navigation), only *Switch* switches.
 */
export function SwitchDialog({ choice }: { choice: Choice }) {
  const ref = useRef<HTMLDialogElement>(null);
  useLayoutEffect(() => {
    const d = ref.current;
    if (!d) return;
    const onClose = () => resolveChoice(d.returnValue === 'switch');
    d.addEventListener('close', onClose);
    if (!d.open) d.showModal();
    return () => d.removeEventListener('close', onClose);
  }, [choice]);
  const current = choice.current ? displayName(choice.current) : null;
  const next = displayName(choice.next);
  return (
    <dialog class="switch-dialog" ref={ref} aria-labelledby="switch-title" aria-describedby="switch-why">
      <h2 id="switch-title">Switch to another sign-in?</h2>
      <p id="switch-why">
        The link you opened signs this browser in as someone else. Switch only if you opened it yourself, to sign in as them.
      </p>
      <dl class="identities">
        <div class="identity" data-identity="current">
          <dt>Signed in now</dt>
          <dd>
            <strong>{current ?? 'The sign-in kept on this device'}</strong>
            <span class="muted small">{choice.current ? `Space ${choice.current.space}` : 'Loopback did not say who it is'}</span>
          </dd>
        </div>
        <div class="identity" data-identity="next">
          <dt>The link</dt>
          <dd>
            <strong>{next}</strong>
            <span class="muted small">Space {choice.next.space}</span>
          </dd>
        </div>
      </dl>
      <p class="muted small">Switching removes the drafts kept on this device.</p>
      <form method="dialog" class="switch-actions">
        <button class="btn primary" type="submit" value="keep" autofocus>
          {current ? `Keep ${current}` : 'Keep the current sign-in'}
        </button>
        <button class="btn" type="submit" value="switch">
          Switch to {next}
        </button>
      </form>
    </dialog>
  );
}
