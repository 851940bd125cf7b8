// The Settings page's Mail section (contract revision 4): the signed-in person's own address for
// email notices. Each ask of the space is mailed to its owner with a link per one-click reply;
// an escalation reaches the other people at theirs. Only a person sets it (an agent's credential
// is refused the route).

import { useEffect, useRef, useState } from 'preact/hooks';
import { api, ApiError } from '../../api';


/** The contract's MailSettings. Typed here until revision 4 is frozen (contract.gen.ts). */
interface MailSettings {
  email: string;
}

export function MailSettings() {
  const [email, setEmail] = useState('');
  const [saved, setSaved] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const [note, setNote] = useState<{ error: boolean; text: string } | null>(null);
  // What the person typed before the saved address arrived is kept, not overwritten by it.
  const typed = useRef(false);

  useEffect(() => {
    api('GET', '/settings/mail')
      .then((m) => {
        if (!typed.current) setEmail(m.email);
        setSaved(m.email);
      })
      .catch((err: unknown) => setNote({ error: true, text: err instanceof ApiError ? err.message : String(err) }));
  }, []);

  const save = async (e: Event) => {
    e.preventDefault();
    setBusy(true);
    setNote(null);
    try {
      const out = await api('PUT', '/settings/mail', { body: { email: email.trim() } });
      setEmail(out.email);
      setSaved(out.email);
      setNote({ error: false, text: out.email ? `Saved. Notices go to ${out.email}.` : 'Email is off for you.' });
    } catch (err) {
      setNote({ error: true, text: err instanceof ApiError ? err.message : String(err) });
    } finally {
      setBusy(false);
    }
  };

  return (
    <section class="settings-section" aria-labelledby="settings-mail">
      <h3 id="settings-mail" class="section-title">
        Email
      </h3>
      <p class="muted small">
        Your address for notices: each ask of this space by email, with a button per one-click answer. A button opens a page that says what it will
        answer, and answers only when you confirm there. Leave it empty for no email.
      </p>
      <form class="escalation-form" onSubmit={save}>
        <label class="field-label" for="mail-address">
          Your email address
        </label>
        <input
          id="mail-address"
          name="email"
          type="email"
          autoComplete="email"
          placeholder="ada@example.com"
          value={email}
          onInput={(e) => {
            typed.current = true;
            setEmail((e.target as HTMLInputElement).value);
          }}
        />
        <button type="submit" class="btn primary" disabled={busy || email.trim() === (saved ?? '')}>
          {busy ? 'Saving…' : 'Save'}
        </button>
        {note && (
          <p class={note.error ? 'error-text' : 'muted small'} role="status">
            {note.text}
          </p>
        )}
      </form>
    </section>
  );
}
