// The page shown to nobody signed in: the sign-in link's explanation and the token form.

import { useState } from 'preact/hooks';
import { tokenFromPaste } from '../auth';
import { signInCodes } from '../pairing';
import { signIn } from '../state';
import { LogoIcon } from './icons';
import { JoinInvite, PairingForm } from './Pairing';

export function SignIn({ message, busy }: { message: string | null; busy: boolean }) {
  const [token, setToken] = useState('');
  const codes = signInCodes();
  return (
    <main class="signin">
      <div class="signin-card">
        <h1 class="brand big">
          <LogoIcon size={30} />
          <span>Loopback</span>
        </h1>
        <p class="lead">Answer your agents' questions, reviews and briefings, from every project, in one inbox.</p>
        {message && (
          <p class="signin-message" role="alert">
            {message}
          </p>
        )}
        {codes.invite && <JoinInvite code={codes.invite} />}
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
            autoComplete="off"
            spellcheck={false}
            value={token}
            placeholder="http://…/#token=lb_… or lb_…"
            onInput={(e) => setToken((e.target as HTMLInputElement).value)}
          />
          <button type="submit" class="btn primary wide" disabled={!token.trim() || busy}>
            {busy ? 'Signing in…' : 'Sign in'}
          </button>
        </form>
      </div>
    </main>
  );
}
