// Connected agents: the agent credentials the person may revoke (the owner: every agent of the
// space; a teammate: their own), each with its app, when it was made and last used. Revoking one
// ends what it has open (waits, tasks, sockets) and its OAuth tokens.

import { useEffect, useLayoutEffect, useRef, useState } from 'preact/hooks';
import { ApiError } from '../api';
import { listAgents, revokeAgent, type ConnectedAgent } from '../connect';
import { navigate, useApp } from '../state';
import { actorName, Time, useNow } from './common';
import { BackIcon } from './icons';

export function AgentsPage() {
  const s = useApp();
  useNow();
  const [items, setItems] = useState<ConnectedAgent[] | null>(null);
  const [error, setError] = useState<string | null>(null);
  const heading = useRef<HTMLHeadingElement>(null);
  const load = () => listAgents().then(setItems, (err) => setError(err instanceof ApiError ? err.message : (err as Error).message));
  useEffect(() => {
    void load();
  }, [s.token]);
  useLayoutEffect(() => heading.current?.focus({ preventScroll: true }), []);
  const me = s.whoami?.actor ?? null;
  return (
    <article class="rules-page agents-page" aria-labelledby="agents-title">
      <button type="button" class="back-btn" onClick={() => navigate({ name: 'inbox' })}>
        <BackIcon /> <span>Inbox</span>
      </button>
      <header class="rules-head">
        <h2 id="agents-title" class="ask-title" tabIndex={-1} ref={heading}>
          Connected agents
        </h2>
        <p class="muted">
          Each agent holds a credential of its own: it can ask you, never answer. Connect one by giving its app this
          server’s MCP URL alone ({location.origin}/mcp); revoke one here and it is shut out at once.
        </p>
      </header>
      {error && (
        <p class="error-text" role="alert">
          {error}
        </p>
      )}
      {items === null ? (
        !error && <p class="muted">Loading…</p>
      ) : items.length === 0 ? (
        <p class="muted">No agents are connected.</p>
      ) : (
        <ul class="rule-list" aria-label="Connected agents">
          {items.map((a) => (
            <AgentRow key={a.id} agent={a} owner={actorName(a.person, me)} onGone={() => setItems((xs) => (xs ?? []).filter((x) => x.id !== a.id))} />
          ))}
        </ul>
      )}
    </article>
  );
}

function AgentRow({ agent, owner, onGone }: { agent: ConnectedAgent; owner: string; onGone: () => void }) {
  const [confirming, setConfirming] = useState(false);
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(null);
  return (
    <li class="rule-item agent-item" data-agent={agent.id}>
      <div class="rule-main">
        <p class="agent-name">
          <strong>{agent.name}</strong>{' '}
          {agent.client ? (
            <span class="chip" title={agent.client}>
              {agent.clientHost ?? 'unverified app'}
            </span>
          ) : (
            <span class="chip">pasted token</span>
          )}
        </p>
        <p class="rule-meta muted small">
          <span>
            {owner === 'You' ? 'Yours' : `${owner}’s`}, made <Time at={agent.createdAt} />
          </span>
          <span>
            {agent.lastUsedAt ? (
              <>
                last used <Time at={agent.lastUsedAt} />
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
            <span class="small">Revoke {agent.name}?</span>
            <button
              type="button"
              class="btn small danger"
              disabled={busy}
              onClick={async () => {
                setBusy(true);
                setError(null);
                try {
                  await revokeAgent(agent.id);
                  onGone();
                } catch (err) {
                  setError((err as Error).message);
                  setBusy(false);
                }
              }}
            >
              {busy ? 'Revoking…' : 'Revoke'}
            </button>
            <button type="button" class="btn small ghost" onClick={() => setConfirming(false)}>
              Keep
            </button>
          </>
        ) : (
          <button type="button" class="btn small ghost danger-text" onClick={() => setConfirming(true)} aria-label={`Revoke ${agent.name}`}>
            Revoke
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
