// An approval: a tool use an agent is about to make, shown as what it is (a command as code, an
// edit as a diff, a URL, a tool's arguments as JSON), with where and by whom, the exact input, and a
// verdict bar (sticky at the bottom of a phone's screen): Allow, Deny with words for the agent, or
// either with a rule that remembers it, from Loopback's suggestions.

import { useMemo, useRef, useState } from 'preact/hooks';
import { adjustScope, agentNamesFrom, commandOf, inputOf, scopeWords, type Widen } from '../approval';
import { useDraft } from '../drafts';
import { useApp } from '../state';
import type { Actor, ApprovalAsk, Block, Reply, RuleScope } from '../types';
import { Blocks, CodeView } from './Blocks';
import { ScopeWords, Thread } from './common';
import { useSend } from './Question';

interface ApprovalDraft {
  message: string;
}

const emptyDraft = (): ApprovalDraft => ({ message: '' });
const isEmpty = (d: ApprovalDraft) => !d.message.trim();

/** The contract's bound on a denial's message (Denied.message). */
export const MESSAGE_MAX = 2000;

/** What the tool would do, when the server sent no content for it: the command as code, else the input as JSON. */
function fallbackContent(ask: ApprovalAsk): Block[] {
  const cmd = commandOf(ask);
  if (cmd !== null) return [{ type: 'code', language: 'sh', code: cmd }];
  return [{ type: 'code', language: 'json', code: JSON.stringify(ask.prompt.input, null, 2) }];
}

export function ApprovalView({ ask, me }: { ask: ApprovalAsk; me: Actor | null }) {
  const s = useApp();
  const p = ask.prompt;
  const open = ask.status === 'awaiting_human';
  const names = useMemo(() => agentNamesFrom([...s.live.values(), ...s.extra.values()], me), [s.live, s.extra, me]);
  const content = p.content.length ? p.content : fallbackContent(ask);
  const raw = useMemo(() => JSON.stringify(inputOf(ask), null, 2), [ask.prompt.input]);

  return (
    <div class="approval">
      <dl class="approval-facts">
        <div>
          <dt>Tool</dt>
          <dd>
            <code class="tool-name">{p.tool}</code>
          </dd>
        </div>
        {p.cwd && (
          <div>
            <dt>Directory</dt>
            <dd>
              <code class="cwd">{p.cwd}</code>
            </dd>
          </div>
        )}
        {ask.project && (
          <div>
            <dt>Project</dt>
            <dd>{ask.project}</dd>
          </div>
        )}
        {p.agent && (
          <div>
            <dt>Agent</dt>
            <dd class="approval-agent" title={p.agent.id}>
              {p.agent.name || p.agent.id}
            </dd>
          </div>
        )}
        {p.session && (
          <div>
            <dt>Session</dt>
            <dd>
              <code class="session">{p.session}</code>
            </dd>
          </div>
        )}
      </dl>
      <section class="approval-what" aria-label="What it would do">
        <Blocks blocks={content} />
      </section>
      <details class="raw-input">
        <summary>Raw input, exactly as it would run</summary>
        <CodeView block={{ type: 'code', language: 'json', code: raw, filename: 'input.json' }} />
      </details>
      <Thread ask={ask} me={me} names={names} />
      {open && <Verdict ask={ask} names={names} />}
      {ask.status === 'awaiting_agent' && <p class="turn-note">This approval waits on the agent.</p>}
    </div>
  );
}

type Remember = null | 'allow' | 'deny';

function Verdict({ ask, names }: { ask: ApprovalAsk; names: (id: string) => string }) {
  const [draft, setDraft, resetDraft] = useDraft<ApprovalDraft>(ask.id, emptyDraft, isEmpty);
  const { busy, send, blocked } = useSend(ask);
  const [remember, setRemember] = useState<Remember>(null);
  const [project, setProject] = useState<Widen>('suggested');
  const [agent, setAgent] = useState<Widen>('suggested');
  const shown = useRef<Remember>(null);
  if (!remember) shown.current = null;
  const message = draft.message.trim();
  const tooLong = message.length > MESSAGE_MAX;

  const decide = (outcome: 'allowed' | 'denied', scope?: RuleScope) => {
    let reply: Reply;
    if (outcome === 'allowed') reply = scope ? { outcome, remember: scope } : { outcome };
    else {
      if (tooLong) return;
      reply = { outcome };
      if (message) reply.message = message;
      if (scope) reply.remember = scope;
    }
    void send(reply, resetDraft);
  };

  const suggestions = ask.prompt.suggestions.map((sg) => adjustScope(sg, ask, project, agent));
  // Two suggestions may come out the same once widened: one button each.
  const seen = new Set<string>();
  const unique = suggestions.filter((sg) => {
    const k = JSON.stringify(sg, Object.keys(sg).sort());
    if (seen.has(k)) return false;
    seen.add(k);
    return true;
  });
  const agentLabel = ask.prompt.agent ? ask.prompt.agent.name || ask.prompt.agent.id : null;

  return (
    <form
      class="verdict-panel"
      aria-label="Your decision"
      onSubmit={(e) => {
        e.preventDefault();
        decide('allowed');
      }}
    >
      <label class="field-label" for={`deny-${ask.id}`}>
        Message for the agent if you deny (optional)
      </label>
      <textarea
        id={`deny-${ask.id}`}
        name="message"
        rows={2}
        value={draft.message}
        placeholder="What to do instead…"
        aria-describedby={`why-${ask.id}`}
        onInput={(e) => setDraft({ message: (e.target as HTMLTextAreaElement).value })}
      />
      <p id={`why-${ask.id}`} class="reason" role="status" aria-live="polite">
        {blocked ?? (tooLong ? `The message is too long: at most ${MESSAGE_MAX} characters (it has ${message.length}).` : '')}
      </p>

      {remember && (
        <div
          class={`remember remember-${remember}`}
          role="group"
          aria-labelledby={`remember-${ask.id}`}
          ref={(el) => {
            // Opened from the bar at the bottom of a phone's screen: bring the choices into view.
            if (el && shown.current !== remember) {
              shown.current = remember;
              requestAnimationFrame(() => el.scrollIntoView?.({ block: 'nearest' }));
            }
          }}
        >
          <h3 class="section-title" id={`remember-${ask.id}`}>
            {remember === 'allow' ? 'Allow, and always allow…' : 'Deny, and always deny…'}
          </h3>
          <div class="scope-pickers">
            <label>
              <span>Project</span>
              <select value={project} onChange={(e) => setProject((e.target as HTMLSelectElement).value as Widen)}>
                <option value="suggested">As suggested</option>
                {ask.project && <option value="this">Only {ask.project}</option>}
                <option value="every">Every project</option>
              </select>
            </label>
            <label>
              <span>Agent</span>
              <select value={agent} onChange={(e) => setAgent((e.target as HTMLSelectElement).value as Widen)}>
                <option value="suggested">As suggested</option>
                {agentLabel && <option value="this">Only {agentLabel}</option>}
                <option value="every">Every agent</option>
              </select>
            </label>
          </div>
          {unique.length ? (
            <ul class="suggestions">
              {unique.map((sg, i) => (
                <li key={i}>
                  <button
                    type="button"
                    class={`btn suggestion suggestion-${remember}`}
                    data-suggestion={i}
                    disabled={busy || !!blocked || (remember === 'deny' && tooLong)}
                    onClick={() => decide(remember === 'allow' ? 'allowed' : 'denied', sg)}
                  >
                    <span class="suggestion-verb">{remember === 'allow' ? 'Always allow' : 'Always deny'}</span>{' '}
                    <span class="suggestion-words">
                      <ScopeWords words={scopeWords(sg, names)} />
                    </span>
                  </button>
                </li>
              ))}
            </ul>
          ) : (
            <p class="muted small">Loopback has no rule to suggest for this tool use. Make one on the Rules page.</p>
          )}
        </div>
      )}

      <div class="verdict-bar" role="region" aria-label="Allow or deny">
        <button
          type="button"
          class="btn big verdict-deny"
          data-verdict="deny"
          disabled={busy || tooLong || !!blocked}
          onClick={() => decide('denied')}
          title="Deny (d)"
        >
          {message ? 'Deny with message' : 'Deny'}
        </button>
        <button type="submit" class="btn big verdict-allow" data-verdict="allow" disabled={busy || !!blocked} title="Allow (a)">
          {busy ? 'Sending…' : 'Allow'}
        </button>
        <div class="remember-toggles">
          <button
            type="button"
            class={`btn small ghost ${remember === 'allow' ? 'on' : ''}`}
            aria-expanded={remember === 'allow'}
            onClick={() => setRemember(remember === 'allow' ? null : 'allow')}
          >
            Always allow…
          </button>
          <button
            type="button"
            class={`btn small ghost ${remember === 'deny' ? 'on' : ''}`}
            aria-expanded={remember === 'deny'}
            onClick={() => setRemember(remember === 'deny' ? null : 'deny')}
          >
            Always deny…
          </button>
        </div>
      </div>
    </form>
  );
}
