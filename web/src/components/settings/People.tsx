// The Settings page's "Devices and people" section (contract revision 6): pair a phone with this
// signed-in browser, and (the space's owner only) invite teammates by link, list the invites, and
// take one back before it is used. A teammate who joined is revoked like any credential
// (`loopback token revoke <credentialId>`).

import { useEffect, useState } from 'preact/hooks';
import { apiR6, ApiError } from '../../api';
import { inviteLink, setPairDialog } from '../../pairing';

/** The contract's Invite (revision 6; typed here until it is frozen). */
interface Invite {
  id: string;
  name: string;
  email?: string;
  invitedBy: { id: string; name?: string };
  status: 'pending' | 'joined' | 'revoked' | 'expired';
  createdAt: string;
  expiresAt: string;
  joinedAt?: string;
  credentialId?: string;
  code?: string;
}

export function PeopleSettings() {
  const [invites, setInvites] = useState<Invite[] | null>(null);
  const [owner, setOwner] = useState(true);
  const [name, setName] = useState('');
  const [email, setEmail] = useState('');
  const [busy, setBusy] = useState(false);
  const [made, setMade] = useState<{ name: string; link: string } | null>(null);
  const [note, setNote] = useState<{ error: boolean; text: string } | null>(null);

  const load = () =>
    apiR6<{ items: Invite[] }>('GET', '/invites')
      .then((l) => setInvites(l.items))
      .catch((err: unknown) => {
        if (err instanceof ApiError && err.status === 403) setOwner(false);
        else setNote({ error: true, text: err instanceof ApiError ? err.message : String(err) });
      });
  useEffect(() => void load(), []);

  const invite = async (e: Event) => {
    e.preventDefault();
    setBusy(true);
    setNote(null);
    setMade(null);
    try {
      const inv = await apiR6<Invite>('POST', '/invites', { name: name.trim(), ...(email.trim() ? { email: email.trim() } : {}) });
      setMade({ name: inv.name, link: inviteLink(inv.code ?? '') });
      setName('');
      setEmail('');
      await load();
    } catch (err) {
      setNote({ error: true, text: err instanceof ApiError ? err.message : String(err) });
    } finally {
      setBusy(false);
    }
  };
  const revoke = async (inv: Invite) => {
    setNote(null);
    try {
      await apiR6('DELETE', `/invites/${encodeURIComponent(inv.id)}`);
      setNote({ error: false, text: `The invite for ${inv.name} was taken back: its link opens nothing now.` });
      await load();
    } catch (err) {
      setNote({ error: true, text: err instanceof ApiError ? err.message : String(err) });
    }
  };

  return (
    <section class="settings-section" aria-labelledby="settings-people">
      <h3 id="settings-people" class="section-title">
        Devices and people
      </h3>
      <p class="muted small">
        Sign in on your phone without typing a token: this browser shows a QR code and a short code that work once, for 5 minutes. The iPhone home-screen
        app keeps its own sign-in: tap <em>Enter a pairing code</em> there.
      </p>
      <button type="button" class="btn settings-pair" onClick={() => setPairDialog(true)}>
        Pair a phone
      </button>
      {owner ? (
        <>
          <h4 class="subsection-title">Invite a teammate</h4>
          <p class="muted small">
            A teammate answers asks in this space as themselves. The link works once, for 7 days; send it to them yourself (Loopback sends nothing). Only
            you, the space's owner, invite.
          </p>
          <form class="escalation-form invite-form" onSubmit={invite}>
            <label class="field-label" for="invite-name">
              Their name
            </label>
            <input id="invite-name" type="text" value={name} maxLength={80} placeholder="Grace Hopper" onInput={(e) => setName((e.target as HTMLInputElement).value)} />
            <label class="field-label" for="invite-email">
              Their email (optional, for your list)
            </label>
            <input
              id="invite-email"
              type="email"
              value={email}
              placeholder="grace@example.com"
              onInput={(e) => setEmail((e.target as HTMLInputElement).value)}
            />
            <button type="submit" class="btn primary" disabled={busy || !name.trim()}>
              {busy ? 'Making…' : 'Make invite link'}
            </button>
          </form>
          {made && (
            <div class="invite-made" role="status">
              <p>
                Send this link to {made.name}. It is shown only now:
              </p>
              <input class="invite-link" type="text" readOnly value={made.link} aria-label={`Invite link for ${made.name}`} onFocus={(e) => (e.target as HTMLInputElement).select()} />
              <button type="button" class="btn" onClick={() => void navigator.clipboard?.writeText(made.link)}>
                Copy link
              </button>
            </div>
          )}
          {invites && invites.length > 0 && (
            <ul class="invite-list" aria-label="Invites">
              {invites.map((inv) => (
                <li key={inv.id} class="invite-row" data-invite={inv.status}>
                  <span class="invite-name">
                    <strong>{inv.name}</strong>
                    {inv.email && <span class="muted small"> {inv.email}</span>}
                  </span>
                  <span class={`invite-status status-${inv.status}`}>
                    {inv.status === 'pending'
                      ? `pending until ${new Date(inv.expiresAt).toLocaleDateString()}`
                      : inv.status === 'joined'
                        ? `joined ${inv.joinedAt ? new Date(inv.joinedAt).toLocaleDateString() : ''} (credential ${inv.credentialId})`
                        : inv.status}
                  </span>
                  {inv.status === 'pending' && (
                    <button type="button" class="btn small" onClick={() => void revoke(inv)} aria-label={`Revoke the invite for ${inv.name}`}>
                      Revoke
                    </button>
                  )}
                </li>
              ))}
            </ul>
          )}
        </>
      ) : (
        <p class="muted small">Only the space's owner invites teammates: ask them for a link for whoever should join.</p>
      )}
      {note && (
        <p class={note.error ? 'error-text' : 'muted small'} role="status">
          {note.text}
        </p>
      )}
    </section>
  );
}
