// Pairing a phone (contract revision 6): the signed-in laptop's dialog (a QR code and the code to
// type, live until a device used it), and the signed-out page's two ways in (a pairing code, an
// invite). The rules are pairing.ts's and the server's (gate.Passes).

import { useEffect, useLayoutEffect, useRef, useState } from 'preact/hooks';
import { encode } from 'uqr';
import { apiR6, ApiError, sendOpen } from '../api';
import { deviceName, forgetSignInCode, pairingLink, setPairDialog } from '../pairing';
import { setNotice, signIn } from '../state';

/** The contract's PairingCode and PairingStatus (revision 6; typed here until it is frozen). */
interface PairingCode {
  id: string;
  code: string;
  expiresAt: string;
}
interface PairingStatus {
  id: string;
  status: 'waiting' | 'paired' | 'expired';
  expiresAt: string;
  device?: string;
  pairedAt?: string;
}
/** The contract's SignInGrant. */
export interface SignInGrant {
  token: string;
  credentialId: string;
  space: string;
  actor: { id: string; name?: string };
}

/** A QR code of text as SVG, drawn from uqr's matrix (no network, no innerHTML). */
export function QrCode({ text, label }: { text: string; label: string }) {
  const qr = encode(text, { ecc: 'M', border: 2 });
  let d = '';
  qr.data.forEach((row, y) => row.forEach((on, x) => on && (d += `M${x},${y}h1v1h-1z`)));
  return (
    <svg class="qr" viewBox={`0 0 ${qr.size} ${qr.size}`} role="img" aria-label={label} data-qr={text} shape-rendering="crispEdges">
      <rect width={qr.size} height={qr.size} fill="#fff" />
      <path d={d} fill="#000" />
    </svg>
  );
}

/** How often the dialog asks whether the code was used. */
const POLL_MS = 1500;

export function PairDialog() {
  const [code, setCode] = useState<PairingCode | null>(null);
  const [status, setStatus] = useState<PairingStatus | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [now, setNow] = useState(Date.now());
  const ref = useRef<HTMLDialogElement>(null);

  const make = async () => {
    setError(null);
    setStatus(null);
    setCode(null);
    try {
      setCode(await apiR6<PairingCode>('POST', '/pairings'));
    } catch (err) {
      setError(err instanceof ApiError ? err.message : String(err));
    }
  };
  useLayoutEffect(() => {
    const d = ref.current;
    if (!d) return;
    const onClose = () => setPairDialog(false);
    d.addEventListener('close', onClose);
    if (!d.open) d.showModal();
    void make();
    return () => d.removeEventListener('close', onClose);
  }, []);
  // Polls until the code is used or expires, and ticks the countdown.
  useEffect(() => {
    if (!code || status?.status === 'paired' || status?.status === 'expired') return;
    const t = setInterval(async () => {
      setNow(Date.now());
      try {
        setStatus(await apiR6<PairingStatus>('GET', `/pairings/${encodeURIComponent(code.id)}`));
      } catch {
        // a passing failure: the next tick asks again
      }
    }, POLL_MS);
    return () => clearInterval(t);
  }, [code, status?.status]);

  const left = code ? Math.max(0, Math.ceil((Date.parse(code.expiresAt) - now) / 1000)) : 0;
  const expired = status?.status === 'expired' || (code && left === 0 && status?.status !== 'paired');
  const link = code ? pairingLink(code.code) : '';
  return (
    <dialog class="switch-dialog pair-dialog" ref={ref} aria-labelledby="pair-title">
        <h2 id="pair-title">Pair a phone</h2>
        {error && (
          <p class="error-text" role="alert">
            {error}
          </p>
        )}
        {status?.status === 'paired' ? (
          <div class="pair-done" role="status" data-paired>
            <p class="pair-paired">
              <strong>Paired: {status.device || 'a device'}</strong>
            </p>
            <p class="muted small">
              It has a sign-in of its own, which <code>loopback token list</code> shows and you can revoke there. Pair another device with a new code.
            </p>
            <button type="button" class="btn" onClick={() => void make()}>
              Pair another
            </button>
          </div>
        ) : expired ? (
          <div class="pair-done" role="status">
            <p>This code expired unused. Codes work once, for 5 minutes.</p>
            <button type="button" class="btn primary" onClick={() => void make()}>
              New code
            </button>
          </div>
        ) : code ? (
          <div class="pair-body">
            <p class="muted small">
              Scan with the phone's camera to sign in on its browser. In the iPhone home-screen app, tap <em>Enter a pairing code</em> and type:
            </p>
            <QrCode text={link} label={`QR code of the pairing link for code ${code.code}`} />
            <p class="pair-code" aria-label={`Pairing code ${code.code.split('').join(' ')}`} data-code={code.code}>
              {code.code}
            </p>
            <p class="muted small" role="timer" aria-live="off">
              Works once, for {Math.floor(left / 60)}:{String(left % 60).padStart(2, '0')} more. Show it only to your own device: anyone who types it in
              time signs in as you.
            </p>
            <p class="muted small pair-waiting" role="status">
              Waiting for your phone…
            </p>
          </div>
        ) : (
          !error && <p class="muted">Making a code…</p>
        )}
      <form method="dialog" class="switch-actions">
        <button class="btn" type="submit" value="close" autofocus>
          Close
        </button>
      </form>
    </dialog>
  );
}

/** The signed-out page's pairing form: a code typed (the home-screen app) or brought by the QR code's link. */
export function PairingForm({ initial, busy }: { initial: string | null; busy: boolean }) {
  const [open, setOpen] = useState(!!initial);
  const [code, setCode] = useState(initial ?? '');
  const [error, setError] = useState<string | null>(null);
  const [sending, setSending] = useState(false);
  if (!open)
    return (
      <button type="button" class="btn wide pair-open" onClick={() => setOpen(true)}>
        Enter a pairing code
      </button>
    );
  const submit = async (e: Event) => {
    e.preventDefault();
    setError(null);
    setSending(true);
    try {
      const grant = await sendOpen<SignInGrant>('/signin/pairing', { code: code.trim(), device: deviceName() });
      forgetSignInCode('pairing');
      await signIn(grant.token);
    } catch (err) {
      forgetSignInCode('pairing');
      setError(err instanceof ApiError ? err.message : String(err));
    } finally {
      setSending(false);
    }
  };
  return (
    <form class="signin-form pair-form" onSubmit={submit}>
      <label class="field-label" for="pair-code">
        Pairing code
      </label>
      <p class="muted small" id="pair-help">
        On a signed-in device, open the account menu and choose <strong>Pair a phone</strong>: it shows a code like <code>ABCD-EFGH</code>.
      </p>
      <input
        id="pair-code"
        type="text"
        aria-describedby="pair-help"
        autoComplete="one-time-code"
        autoCapitalize="characters"
        spellcheck={false}
        inputMode="text"
        maxLength={20}
        placeholder="XXXX-XXXX"
        value={code}
        onInput={(e) => setCode((e.target as HTMLInputElement).value)}
      />
      {error && (
        <p class="signin-message" role="alert">
          {error}
        </p>
      )}
      <button type="submit" class="btn primary wide" disabled={!code.trim() || sending || busy}>
        {sending || busy ? 'Pairing…' : 'Pair this device'}
      </button>
    </form>
  );
}

/** The contract's InviteView. */
interface InviteView {
  space: string;
  name: string;
  invitedBy: { id: string; name?: string };
  expiresAt: string;
}

/** An invite's signed-out page: who invited whom to which space, and "Join as <name>". */
export function JoinInvite({ code }: { code: string }) {
  const [view, setView] = useState<InviteView | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [joining, setJoining] = useState(false);
  useEffect(() => {
    sendOpen<InviteView>('/signin/invite/lookup', { code })
      .then(setView)
      .catch((err: unknown) => setError(err instanceof ApiError ? err.message : String(err)));
  }, [code]);
  const join = async () => {
    setJoining(true);
    setError(null);
    try {
      const grant = await sendOpen<SignInGrant>('/signin/invite', { code, device: deviceName() });
      forgetSignInCode('invite');
      await signIn(grant.token);
      setNotice(
        `Welcome, ${grant.actor.name || grant.actor.id}: you joined space ${grant.space}. This browser stays signed in. To sign in on another device, use Pair a phone from the account menu; add a passkey in Settings where your Loopback offers one.`,
      );
    } catch (err) {
      setError(err instanceof ApiError ? err.message : String(err));
    } finally {
      setJoining(false);
    }
  };
  return (
    <section class="join" aria-labelledby="join-title">
      <h2 id="join-title" class="section-title">
        {view ? `Join space ${view.space}` : 'An invite to Loopback'}
      </h2>
      {error && (
        <p class="signin-message" role="alert">
          {error}
        </p>
      )}
      {view && (
        <>
          <p>
            <strong>{view.invitedBy.name || view.invitedBy.id}</strong> invited you to answer their agents' questions, reviews and briefings in space{' '}
            <strong>{view.space}</strong>.
          </p>
          <button type="button" class="btn primary wide" disabled={joining} onClick={() => void join()} data-join>
            {joining ? 'Joining…' : `Join as ${view.name}`}
          </button>
          <p class="muted small">The invite works once. Joining signs this browser in as {view.name}.</p>
        </>
      )}
      {!view && !error && <p class="muted">Looking up the invite…</p>}
    </section>
  );
}
