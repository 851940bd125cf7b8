// The Settings page's Passkeys section (contract revision 6): the passkeys that sign the person in
// to this inbox instead of a pasted token. Add one (the browser asks the device: Touch ID, Windows
// Hello, a phone, a security key), see each with when it was made and last used, remove one. The
// owner sees every passkey of the space; a teammate their own. Removing a passkey signs no browser
// out: each browser it signed in holds a credential of its own (`loopback token list`/`revoke`).

import { useEffect, useState } from 'preact/hooks';
import { ApiError } from '../../api';
import { addPasskey, listPasskeys, passkeysSupported, PasskeyError, removePasskey, type Passkey } from '../../passkey';
import { useApp } from '../../state';
import { actorName, Time, useNow } from '../common';

function defaultName(): string {
  const ua = navigator.userAgent;
  const device = /iPhone|iPad/.test(ua) ? 'iPhone' : /Android/.test(ua) ? 'Android' : /Mac/.test(ua) ? 'Mac' : /Windows/.test(ua) ? 'Windows' : /Linux/.test(ua) ? 'Linux' : 'This device';
  const browser = /Edg\//.test(ua) ? 'Edge' : /Firefox\//.test(ua) ? 'Firefox' : /Chrome\//.test(ua) ? 'Chrome' : /Safari\//.test(ua) ? 'Safari' : '';
  return browser ? `${device}, ${browser}` : device;
}

function message(err: unknown): string {
  return err instanceof ApiError || err instanceof PasskeyError ? err.message : String((err as Error)?.message ?? err);
}

export function PasskeySettings() {
  const s = useApp();
  useNow();
  const [items, setItems] = useState<Passkey[] | null>(null);
  const [name, setName] = useState(defaultName);
  const [busy, setBusy] = useState(false);
  const [note, setNote] = useState<{ error: boolean; text: string } | null>(null);
  const supported = passkeysSupported();
  const me = s.whoami?.actor ?? null;

  useEffect(() => {
    listPasskeys().then(setItems, (err) => setNote({ error: true, text: message(err) }));
  }, [s.token]);

  const add = async (e: Event) => {
    e.preventDefault();
    setBusy(true);
    setNote(null);
    try {
      const p = await addPasskey(name.trim());
      setItems((xs) => [...(xs ?? []), p]);
      setNote({ error: false, text: `Added “${p.name}”. Sign in with it on the sign-in page of this inbox.` });
    } catch (err) {
      setNote({ error: true, text: message(err) });
    } finally {
      setBusy(false);
    }
  };

  return (
    <section class="settings-section" aria-labelledby="settings-passkeys">
      <h3 id="settings-passkeys">Passkeys</h3>
      <p class="muted">
        Sign in to this inbox with your device (Touch ID, Windows Hello, your phone or a security key) instead of a token. Each browser you sign in
        gets a credential of its own. Removing a passkey does not sign out browsers it already signed in: revoke a browser with{' '}
        <code>loopback token revoke</code> (<code>loopback token list</code> shows them).
      </p>
      {items === null ? (
        !note && <p class="muted small">Loading…</p>
      ) : items.length === 0 ? (
        <p class="muted small">No passkeys yet.</p>
      ) : (
        <ul class="rule-list" aria-label="Passkeys">
          {items.map((p) => (
            <PasskeyRow key={p.id} passkey={p} owner={actorName(p.person, me)} onGone={() => setItems((xs) => (xs ?? []).filter((x) => x.id !== p.id))} />
          ))}
        </ul>
      )}
      {supported ? (
        <form class="reply-panel passkey-add" aria-label="Add a passkey" onSubmit={add}>
          <label class="field-label" for="passkey-name">
            Name for a new passkey
          </label>
          <input
            id="passkey-name"
            name="passkey-name"
            type="text"
            autoComplete="off"
            maxLength={80}
            value={name}
            onInput={(e) => setName((e.target as HTMLInputElement).value)}
          />
          <div class="actions">
            <button type="submit" class="btn primary" disabled={busy}>
              {busy ? 'Waiting for your device…' : 'Add a passkey'}
            </button>
          </div>
        </form>
      ) : (
        <p class="muted small">This browser cannot use passkeys here (they need https, or http://localhost).</p>
      )}
      {note && (
        <p class={note.error ? 'error-text' : 'muted small'} role="status">
          {note.text}
        </p>
      )}
    </section>
  );
}

function PasskeyRow({ passkey, owner, onGone }: { passkey: Passkey; owner: string; onGone: () => void }) {
  const [confirming, setConfirming] = useState(false);
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(null);
  return (
    <li class="rule-item passkey-item" data-passkey={passkey.id}>
      <div class="rule-main">
        <p class="agent-name">
          <strong>{passkey.name}</strong>
          {owner !== 'You' && <span class="chip">{owner}’s</span>}
        </p>
        <p class="rule-meta muted small">
          <span>
            added <Time at={passkey.createdAt} />
          </span>
          <span>
            {passkey.lastUsedAt ? (
              <>
                last used <Time at={passkey.lastUsedAt} />
              </>
            ) : (
              'never used'
            )}
          </span>
        </p>
      </div>
      <div class="rule-actions">
        {confirming ? (
          <>
            <span class="small">Remove {passkey.name}? Browsers it signed in stay signed in.</span>
            <button
              type="button"
              class="btn small danger"
              disabled={busy}
              onClick={async () => {
                setBusy(true);
                setError(null);
                try {
                  await removePasskey(passkey.id);
                  onGone();
                } catch (err) {
                  setError(message(err));
                  setBusy(false);
                }
              }}
            >
              {busy ? 'Removing…' : 'Remove'}
            </button>
            <button type="button" class="btn small ghost" onClick={() => setConfirming(false)}>
              Keep
            </button>
          </>
        ) : (
          <button type="button" class="btn small ghost danger-text" onClick={() => setConfirming(true)} aria-label={`Remove ${passkey.name}`}>
            Remove
          </button>
        )}
        {error && (
          <p class="error-text small" role="alert">
            {error}
          </p>
        )}
      </div>
    </li>
  );
}
