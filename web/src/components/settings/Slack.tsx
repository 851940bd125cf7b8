// The Settings page's Slack section (contract revision 4: GET /api/v1/slack, POST /slack/codes,
// DELETE /slack/link, PUT /slack/channel): the person links their Slack identity with a one-time
// code sent as `/loopback link CODE`, sees who is linked, unlinks, and chooses where the space's
// asks go. Every route is persons-only: an agent's credential never links, unlinks or answers.

import { useEffect, useId, useState } from 'preact/hooks';
import { api } from '../../api';

/** SlackIdentity in spec/main.tsp (revision 4, not yet in the generated types). */
export interface SlackIdentity {
  person: { id: string; name?: string };
  userId: string;
  teamId: string;
  userName: string;
  linkedAt: string;
}

/** SlackSettings in spec/main.tsp. */
export interface SlackState {
  connected: boolean;
  you?: SlackIdentity;
  linked: SlackIdentity[];
  channel?: string;
}

/** SlackLinkCode in spec/main.tsp. */
interface SlackLinkCode {
  code: string;
  expiresAt: string;
  command: string;
}

// The routes are revision 4's: called through the untyped form of api() until r4 is frozen and
// src/contract.gen.ts has them.
const call = api as unknown as (method: string, route: string, input?: { body?: unknown }) => Promise<unknown>;

function when(iso: string): string {
  const d = new Date(iso);
  return Number.isNaN(d.getTime()) ? iso : d.toLocaleString();
}

export function SlackSettings() {
  const id = useId();
  const [state, setState] = useState<SlackState | null | undefined>(undefined);
  const [code, setCode] = useState<SlackLinkCode | null>(null);
  const [channel, setChannel] = useState('');
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const [status, setStatus] = useState('');

  const load = async () => {
    try {
      const s = (await call('GET', '/slack')) as SlackState;
      setState(s);
      setChannel(s.channel ?? '');
      if (s.you) setCode(null);
      return s;
    } catch (err) {
      setState(null);
      setError((err as Error).message);
      return null;
    }
  };
  useEffect(() => {
    void load();
  }, []);

  // While a code is shown, look now and then for the link it makes.
  useEffect(() => {
    if (!code) return;
    const t = setInterval(() => {
      void load().then((s) => {
        if (s?.you) setStatus(`Linked to ${s.you.userName} in Slack.`);
      });
    }, 2000);
    return () => clearInterval(t);
  }, [code]);

  const act = async (what: () => Promise<void>) => {
    setBusy(true);
    setError(null);
    try {
      await what();
    } catch (err) {
      setError((err as Error).message);
    } finally {
      setBusy(false);
    }
  };
  const makeCode = () =>
    act(async () => {
      setCode((await call('POST', '/slack/codes')) as SlackLinkCode);
      setStatus('');
    });
  const unlink = () =>
    act(async () => {
      await call('DELETE', '/slack/link');
      await load();
      setStatus('Unlinked: your clicks in Slack answer nothing now.');
    });
  const saveChannel = () =>
    act(async () => {
      const s = (await call('PUT', '/slack/channel', { body: { channel: channel.trim() } })) as SlackState;
      setState(s);
      setStatus(s.channel ? `Asks go to ${s.channel}.` : 'Asks go to each linked person as a DM.');
    });

  return (
    <section class="settings-section" aria-labelledby={`slack-title-${id}`}>
      <h3 id={`slack-title-${id}`}>Slack</h3>
      <p class="muted">
        Answer from Slack: a question's choices are buttons, a review has Approve and Request changes, and every copy says who answered, where and
        when. Link your Slack identity so that your clicks answer as you.
      </p>
      {state === undefined && <p class="muted small">Reading your Slack settings…</p>}
      {state && !state.connected && (
        <p class="hint muted small" data-testid="slack-not-connected">
          This Loopback has no Slack app yet: create one from <code>loopback slack manifest</code> and start <code>loopback serve</code> with{' '}
          <code>--slack-bot-token</code> and <code>--slack-app-token</code> (see docs/slack.md). You can link now; asks reach Slack once it is
          connected.
        </p>
      )}
      {state && (
        <div class="reply-panel slack-link" aria-label="Your Slack identity">
          {state.you ? (
            <p data-testid="slack-you">
              Linked as <strong>{state.you.userName}</strong> <span class="muted small">({state.you.userId}, since {when(state.you.linkedAt)})</span>
            </p>
          ) : code ? (
            <div data-testid="slack-code">
              <p>In Slack, send this to the Loopback app (it links once, for ten minutes):</p>
              <p>
                <code class="slack-command">{code.command}</code>
              </p>
            </div>
          ) : (
            <p class="muted">Your Slack identity is not linked.</p>
          )}
          <div class="actions">
            {state.you ? (
              <button type="button" class="btn ghost" disabled={busy} onClick={() => void unlink()}>
                Unlink Slack
              </button>
            ) : (
              <button type="button" class="btn primary" disabled={busy} onClick={() => void makeCode()}>
                {code ? 'New code' : 'Link Slack'}
              </button>
            )}
          </div>
        </div>
      )}
      {state && state.linked.length > 0 && (
        <div>
          <h4>Linked in this space</h4>
          <ul class="slack-linked" aria-label="Linked people">
            {state.linked.map((l) => (
              <li key={l.userId}>
                {l.person.name || l.person.id} as <strong>{l.userName}</strong> <span class="muted small">({l.userId})</span>
              </li>
            ))}
          </ul>
        </div>
      )}
      {state && (
        <form
          class="reply-panel"
          aria-label="Where asks go in Slack"
          onSubmit={(e) => {
            e.preventDefault();
            void saveChannel();
          }}
        >
          <label class="field-label" for={`slack-channel-${id}`}>
            Channel for this space's asks (empty: a DM to the person whose agent asks)
          </label>
          <input
            id={`slack-channel-${id}`}
            name="channel"
            placeholder="C0123ABCD or #agents"
            autoComplete="off"
            spellcheck={false}
            maxLength={80}
            value={channel}
            onInput={(e) => setChannel((e.target as HTMLInputElement).value)}
          />
          <div class="actions">
            <button type="submit" class="btn" disabled={busy}>
              Save channel
            </button>
          </div>
        </form>
      )}
      <p class="hint muted small" role="status" aria-live="polite">
        {status}
      </p>
      {error && (
        <p class="error-text" role="alert">
          {error}
        </p>
      )}
    </section>
  );
}
