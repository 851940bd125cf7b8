// The consent page: an agent's client asks to connect. The person sees which app asks (its name,
// the host of its metadata document or "unverified"), where the result goes, what it may do, and
// the code the browser that started the sign-in shows; they approve or refuse. Approving makes an
// agent credential owned by the person, named after the app (listed under Connected agents).

import { useEffect, useLayoutEffect, useRef, useState } from 'preact/hooks';
import { ApiError } from '../api';
import { continueUrl, decideConnectRequest, readConnectRequest, scopeWords, startedHere, type ConnectRequest } from '../connect';
import { navigate } from '../state';
import { BackIcon } from './icons';

export function ConnectPage({ id }: { id: string }) {
  const [req, setReq] = useState<ConnectRequest | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const heading = useRef<HTMLHeadingElement>(null);
  const here = startedHere(id);

  useEffect(() => {
    readConnectRequest(id).then(setReq, (err) => setError(problemText(err)));
  }, [id]);
  useLayoutEffect(() => heading.current?.focus({ preventScroll: true }), []);

  const decide = async (decision: 'approve' | 'refuse') => {
    setBusy(true);
    setError(null);
    try {
      const r = await decideConnectRequest(id, decision);
      setReq(r);
      if (here) location.assign(continueUrl(id));
    } catch (err) {
      setError(problemText(err));
    } finally {
      setBusy(false);
    }
  };

  return (
    <article class="rules-page connect-page" aria-labelledby="connect-title">
      <button type="button" class="back-btn" onClick={() => navigate({ name: 'inbox' })}>
        <BackIcon /> <span>Inbox</span>
      </button>
      <h2 id="connect-title" class="ask-title" tabIndex={-1} ref={heading}>
        {req ? `Connect ${req.client.name}?` : 'Connect an agent'}
      </h2>
      {error && (
        <p class="error-text" role="alert">
          {error}
        </p>
      )}
      {!req && !error && <p class="muted">Loading…</p>}
      {req && (
        <>
          <dl class="connect-facts">
            <dt>App</dt>
            <dd>
              <strong class="connect-client">{req.client.name}</strong>{' '}
              {req.client.verifiedHost ? (
                <span class="chip connect-verified" title={req.client.id}>
                  from {req.client.verifiedHost}
                </span>
              ) : (
                <span class="chip connect-unverified" title="It registered itself: anyone may register any name.">
                  unverified
                </span>
              )}
            </dd>
            <dt>Sends the result to</dt>
            <dd class="connect-redirect">{req.redirectHost}</dd>
            <dt>May</dt>
            <dd class="connect-scope">{scopeWords(req.scope)}</dd>
            <dt>Code</dt>
            <dd>
              <span class="connect-code" id="connect-code">
                {req.matchCode}
              </span>
              <p class="muted small">
                {here
                  ? 'The page you came from shows this code too.'
                  : 'Approve only if the browser where you started connecting shows this same code. If you did not start it, refuse.'}
              </p>
            </dd>
          </dl>
          {req.status === 'pending' ? (
            <div class="connect-actions">
              <button type="button" class="btn primary" disabled={busy} onClick={() => void decide('approve')}>
                Approve
              </button>
              <button type="button" class="btn ghost" disabled={busy} onClick={() => void decide('refuse')}>
                Refuse
              </button>
            </div>
          ) : (
            <p class="connect-done" role="status">
              {req.status === 'approved'
                ? `Approved: ${req.client.name} is connected as your agent. It is listed under Connected agents, where you can revoke it.`
                : `Refused: ${req.client.name} gets nothing.`}{' '}
              {!here && 'The browser where you started moves on by itself.'}
            </p>
          )}
          {req.status === 'approved' && (
            <p>
              <a
                href="/agents"
                onClick={(e) => {
                  e.preventDefault();
                  navigate({ name: 'agents' });
                }}
              >
                Connected agents
              </a>
            </p>
          )}
        </>
      )}
    </article>
  );
}

function problemText(err: unknown): string {
  if (err instanceof ApiError) {
    if (err.code === 'consent.expired') return 'This request expired. Start connecting again from the app.';
    if (err.code === 'consent.not_found') return 'There is no such request to connect. It may have expired; start again from the app.';
    if (err.code === 'consent.decided') return 'This request was decided already.';
    return err.message;
  }
  return (err as Error).message;
}
