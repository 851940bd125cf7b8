// The page shown to nobody signed in: "Sign in with <provider>" when the owner set up single
// sign-on (GET /api/v1/sso, which needs no credential), a passkey (the browser's picker, or its
// autofill where it offers passkeys there), the sign-in link's explanation and the token form.

import { useEffect, useRef, useState } from 'preact/hooks';
import { tokenFromPaste } from '../auth';
import { conditionalAvailable, passkeySignIn, passkeysSupported, PasskeyError } from '../passkey';
import { ssoStatus, type SsoOffer } from '../sso';
import { signInCodes } from '../pairing';
import { getState, signIn } from '../state';
import { LogoIcon } from './icons';
import { JoinInvite, PairingForm } from './Pairing';

export function SignIn({ message, busy }: { message: string | null; busy: boolean }) {
  const [token, setToken] = useState('');
  const [passkeyBusy, setPasskeyBusy] = useState(false);
  const [passkeyMessage, setPasskeyMessage] = useState<string | null>(null);
  const conditional = useRef<AbortController | null>(null);
  const supported = passkeysSupported();

  // A passkey that verifies gives a token for this browser: it is checked and kept as the printed
  // link's token is (signIn), never put in the address bar.
  const finish = (t: string | null) => {
    if (t) void signIn(t);
  };
  const failed = (err: unknown) => setPasskeyMessage(err instanceof PasskeyError ? err.message : (err as Error).message);

  // Where the browser offers passkeys in a field's autofill, the token field offers them too:
  // once the page is settled as signed out (not while a link's or a kept token is being checked,
  // which shows this page for a moment).
  useEffect(() => {
    if (!supported || busy) return;
    let live = true;
    void conditionalAvailable().then((ok) => {
      if (!ok || !live || getState().signingIn || getState().token) return;
      const ctl = new AbortController();
      conditional.current = ctl;
      passkeySignIn({ conditional: true, signal: ctl.signal }).then(finish, (err) => {
        if (!ctl.signal.aborted) failed(err);
      });
    });
    return () => {
      live = false;
      conditional.current?.abort();
    };
  }, [busy]);

  const withPasskey = async () => {
    conditional.current?.abort();
    conditional.current = null;
    setPasskeyBusy(true);
    setPasskeyMessage(null);
    try {
      finish(await passkeySignIn());
    } catch (err) {
      failed(err);
    } finally {
      setPasskeyBusy(false);
    }
  };

  const [sso, setSso] = useState<SsoOffer | null>(null);
  useEffect(() => {
    let live = true;
    void ssoStatus().then((offer) => live && setSso(offer));
    return () => {
      live = false;
    };
  }, []);
  const codes = signInCodes();
  return (
    <main class="signin">
      <div class="signin-card">
        <h1 class="brand big">
          <LogoIcon size={30} />
          <span>Loopback</span>
        </h1>
        <p class="lead">Answer your agents' questions, reviews and briefings, from every project, in one inbox.</p>
        {(message || passkeyMessage) && (
          <p class="signin-message" role="alert">
            {passkeyMessage ?? message}
          </p>
        )}
        {codes.invite && <JoinInvite code={codes.invite} />}
        {sso && (
          <div class="signin-sso">
            <a class="btn primary wide" href={sso.startUrl} id="sso-sign-in">
              Sign in with {sso.provider}
            </a>
            <p class="signin-or">or</p>
          </div>
        )}
        {supported && (
          <div class="signin-passkey">
            <h2 class="section-title" id="signin-passkey-title">
              Sign in with a passkey
            </h2>
            <button type="button" class="btn primary wide" aria-describedby="signin-passkey-title" onClick={withPasskey} disabled={passkeyBusy || busy}>
              {passkeyBusy ? 'Waiting for your passkey…' : 'Use a passkey'}
            </button>
            <p class="muted small">Add one first in Settings, on a browser that is signed in.</p>
          </div>
        )}
        <PairingForm initial={codes.pairing} busy={busy} />
        <p>
          Open the <strong>Inbox</strong> link that <code>loopback serve</code> printed. It signs this browser in, and
          its token never leaves your machine in a request.
        </p>
        <form
          class="signin-form"
          onSubmit={(e) => {
            e.preventDefault();
            if (tokenFromPaste(token) && !busy) void signIn(tokenFromPaste(token));
          }}
        >
          <label class="field-label" for="token">
            Or paste your token (or the sign-in link)
          </label>
          <input
            id="token"
            type="password"
            autoComplete={supported ? 'current-password webauthn' : 'off'}
            spellcheck={false}
            value={token}
            placeholder="http://…/#token=lb_… or lb_…"
            onInput={(e) => setToken((e.target as HTMLInputElement).value)}
          />
          <button type="submit" class={supported ? 'btn wide' : 'btn primary wide'} disabled={!token.trim() || busy}>
            {busy ? 'Signing in…' : 'Sign in'}
          </button>
        </form>
      </div>
    </main>
  );
}
