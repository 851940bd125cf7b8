// The Rules page: the space's rules that decide approvals without asking. Each says in words what
// it covers, who made it and when, how often it matched; each can be changed or deleted, and new
// ones made. The form offers only the field the tool takes (RuleScope), and says why the server
// refused a rule in words.

import { useEffect, useLayoutEffect, useMemo, useRef, useState } from 'preact/hooks';
import { agentNamesFrom, FETCH_TOOL, FILE_TOOLS, NARROWING_LABEL, narrowingFor, ruleInputFrom, ruleProblem, scopeWords, SHELL_TOOL } from '../approval';
import { deleteRule, loadRules, navigate, saveRule, useApp } from '../state';
import type { Rule } from '../types';
import { actorName, ScopeWords, Time, useNow } from './common';
import { BackIcon } from './icons';

/** The tools a person picks from (any other name may be typed, such as an MCP tool's). */
const KNOWN_TOOLS = [SHELL_TOOL, ...FILE_TOOLS, FETCH_TOOL, 'WebSearch', 'Glob', 'Grep'];

export function RulesPage({ focus }: { focus?: string }) {
  const s = useApp();
  useNow();
  const me = s.whoami?.actor ?? null;
  const names = useMemo(() => agentNamesFrom([...s.live.values(), ...s.extra.values()], me), [s.live, s.extra, me]);
  const [editing, setEditing] = useState<string | 'new' | null>(null);
  const heading = useRef<HTMLHeadingElement>(null);

  useEffect(() => {
    void loadRules();
  }, [s.token]);
  useLayoutEffect(() => heading.current?.focus({ preventScroll: true }), []);
  // A rule linked from an approval's thread: scrolled to and marked.
  useEffect(() => {
    if (focus && s.rules.items) document.getElementById(`rule-${focus}`)?.scrollIntoView({ block: 'center' });
  }, [focus, !!s.rules.items]);

  const items = s.rules.items;
  return (
    <article class="rules-page" aria-labelledby="rules-title">
      <button type="button" class="back-btn" onClick={() => navigate({ name: 'inbox' })}>
        <BackIcon /> <span>Inbox</span>
      </button>
      <header class="rules-head">
        <h2 id="rules-title" class="ask-title" tabIndex={-1} ref={heading}>
          Rules
        </h2>
        <p class="muted">
          A rule decides an agent's tool use at once, without asking you: allow or deny. A deny rule wins over an allow
          rule. Anything no rule covers is put to you.
        </p>
        {editing !== 'new' && (
          <button type="button" class="btn primary" onClick={() => setEditing('new')}>
            New rule
          </button>
        )}
      </header>
      {editing === 'new' && <RuleForm rule={null} onDone={() => setEditing(null)} />}
      {s.rules.error && (
        <p class="error-text" role="alert">
          {s.rules.error}{' '}
          <button type="button" class="link-btn" onClick={() => void loadRules()}>
            Try again
          </button>
        </p>
      )}
      {items === null ? (
        !s.rules.error && <p class="muted">Loading…</p>
      ) : items.length === 0 ? (
        <p class="rules-empty muted">
          No rules yet. Make one here, or from an approval with “Always allow…” or “Always deny…”.
        </p>
      ) : (
        <ul class="rule-list" aria-label="Rules">
          {items.map((r) =>
            editing === r.id ? (
              <li key={r.id} id={`rule-${r.id}`} class="rule-item editing">
                <RuleForm rule={r} onDone={() => setEditing(null)} />
              </li>
            ) : (
              <RuleRow key={r.id} rule={r} focused={focus === r.id} names={names} meName={actorName(r.createdBy, me)} onEdit={() => setEditing(r.id)} />
            ),
          )}
        </ul>
      )}
    </article>
  );
}

function RuleRow({ rule, focused, names, meName, onEdit }: { rule: Rule; focused: boolean; names: (id: string) => string; meName: string; onEdit: () => void }) {
  const [confirming, setConfirming] = useState(false);
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(null);
  return (
    <li id={`rule-${rule.id}`} class={`rule-item effect-${rule.effect} ${focused ? 'focused' : ''}`} data-rule={rule.id}>
      <div class="rule-main">
        <span class={`chip rule-effect effect-${rule.effect}`}>{rule.effect === 'allow' ? 'Always allow' : 'Always deny'}</span>
        <p class="rule-scope">
          <ScopeWords words={scopeWords(rule, names)} />
        </p>
        <p class="rule-meta muted small">
          <span>
            By {meName === 'You' ? 'you' : meName}, <Time at={rule.updatedAt} />
          </span>
          <span class="rule-matches">
            {rule.matches === 1 ? 'Matched once' : rule.matches ? `Matched ${rule.matches} times` : 'Not matched yet'}
            {rule.lastMatchedAt && (
              <>
                , last <Time at={rule.lastMatchedAt} />
              </>
            )}
          </span>
        </p>
      </div>
      <div class="rule-actions">
        {confirming ? (
          <>
            <span class="small">Delete this rule?</span>
            <button
              type="button"
              class="btn small danger"
              disabled={busy}
              onClick={async () => {
                setBusy(true);
                setError(null);
                try {
                  await deleteRule(rule.id);
                } catch (err) {
                  setError((err as Error).message);
                  setBusy(false);
                }
              }}
            >
              {busy ? 'Deleting…' : 'Delete'}
            </button>
            <button type="button" class="btn small ghost" onClick={() => setConfirming(false)}>
              Keep
            </button>
          </>
        ) : (
          <>
            <button type="button" class="btn small" onClick={onEdit} aria-label={`Edit the rule: ${scopeWords(rule, names)}`}>
              Edit
            </button>
            <button type="button" class="btn small ghost danger-text" onClick={() => setConfirming(true)} aria-label={`Delete the rule: ${scopeWords(rule, names)}`}>
              Delete
            </button>
          </>
        )}
      </div>
      {error && (
        <p class="error-text" role="alert">
          {error}
        </p>
      )}
    </li>
  );
}

interface Fields {
  effect: 'allow' | 'deny';
  tool: string;
  narrowing: string;
  project: string;
  agent: string;
}

function fieldsOf(r: Rule | null): Fields {
  return {
    effect: r?.effect ?? 'allow',
    tool: r?.tool ?? SHELL_TOOL,
    narrowing: r?.commandPrefix ?? r?.pathPattern ?? r?.domain ?? '',
    project: r?.project ?? '',
    agent: r?.agent ?? '',
  };
}

const NARROWING_HINT = {
  commandPrefix: 'Word for word: “npm test” covers “npm test -- --watch”, not “npm testing”. A command that chains, pipes or redirects is always put to you.',
  pathPattern: '* within one folder, ** across folders: src/**, *.md. Relative to the working directory.',
  domain: 'The URL’s host exactly, or every subdomain with a leading *.: *.github.com',
} as const;

function RuleForm({ rule, onDone }: { rule: Rule | null; onDone: () => void }) {
  const s = useApp();
  const [f, setF] = useState<Fields>(() => fieldsOf(rule));
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const id = rule?.id ?? 'new';
  const input = ruleInputFrom(f);
  const problem = ruleProblem(input);
  const narrowing = narrowingFor(f.tool.trim());
  const projects = [...new Set([...s.live.values()].map((a) => a.project).filter((p): p is string => !!p))].sort();
  const agents = new Map<string, string>();
  for (const a of s.live.values()) if (a.kind === 'approval' && a.prompt.agent) agents.set(a.prompt.agent.id, a.prompt.agent.name || a.prompt.agent.id);

  const submit = async () => {
    if (problem || busy) return;
    setBusy(true);
    setError(null);
    try {
      await saveRule(rule?.id ?? null, input);
      onDone();
    } catch (err) {
      setError((err as Error).message);
      setBusy(false);
    }
  };

  return (
    <form
      class="rule-form reply-panel"
      aria-label={rule ? 'Edit the rule' : 'New rule'}
      onSubmit={(e) => {
        e.preventDefault();
        void submit();
      }}
    >
      <fieldset class="segmented rule-effect-pick">
        <legend class="sr-only">What the rule does</legend>
        {(['allow', 'deny'] as const).map((e) => (
          <label key={e} class={`seg seg-${e} ${f.effect === e ? 'on' : ''}`}>
            <input type="radio" class="sr-only" name={`effect-${id}`} value={e} checked={f.effect === e} onChange={() => setF({ ...f, effect: e })} />
            {e === 'allow' ? 'Always allow' : 'Always deny'}
          </label>
        ))}
      </fieldset>
      <label class="field-label" for={`tool-${id}`}>
        Tool
      </label>
      <input id={`tool-${id}`} name="tool" list={`tools-${id}`} value={f.tool} autoComplete="off" onInput={(e) => setF({ ...f, tool: (e.target as HTMLInputElement).value })} />
      <datalist id={`tools-${id}`}>
        {KNOWN_TOOLS.map((t) => (
          <option key={t} value={t} />
        ))}
      </datalist>
      {narrowing ? (
        <>
          <label class="field-label" for={`narrow-${id}`}>
            {NARROWING_LABEL[narrowing]} (optional)
          </label>
          <input
            id={`narrow-${id}`}
            name={narrowing}
            class="mono-input"
            value={f.narrowing}
            autoComplete="off"
            spellcheck={false}
            onInput={(e) => setF({ ...f, narrowing: (e.target as HTMLInputElement).value })}
          />
          <p class="hint muted small">{NARROWING_HINT[narrowing]}</p>
        </>
      ) : (
        f.tool.trim() && <p class="hint muted small">The rule covers every use of {f.tool.trim()}: only Bash, the file tools and WebFetch can be narrowed further.</p>
      )}
      <label class="field-label" for={`project-${id}`}>
        Project (optional: blank is every project)
      </label>
      <input id={`project-${id}`} name="project" list={`projects-${id}`} value={f.project} autoComplete="off" onInput={(e) => setF({ ...f, project: (e.target as HTMLInputElement).value })} />
      <datalist id={`projects-${id}`}>
        {projects.map((p) => (
          <option key={p} value={p} />
        ))}
      </datalist>
      <label class="field-label" for={`agent-${id}`}>
        Agent id (optional: blank is every agent)
      </label>
      <input id={`agent-${id}`} name="agent" list={`agents-${id}`} value={f.agent} autoComplete="off" onInput={(e) => setF({ ...f, agent: (e.target as HTMLInputElement).value })} />
      <datalist id={`agents-${id}`}>
        {[...agents].map(([aid, name]) => (
          <option key={aid} value={aid}>
            {name}
          </option>
        ))}
      </datalist>
      {!problem && (
        <p class="rule-preview">
          {f.effect === 'allow' ? 'Always allow ' : 'Always deny '}
          <ScopeWords words={scopeWords(input, (x) => agents.get(x) ?? x)} />
        </p>
      )}
      <p class="reason" role="status" aria-live="polite" id={`rule-why-${id}`}>
        {problem ?? ''}
      </p>
      {error && (
        <p class="error-text" role="alert">
          {error}
        </p>
      )}
      <div class="actions">
        <button type="submit" class="btn primary" disabled={!!problem || busy} aria-describedby={`rule-why-${id}`}>
          {busy ? 'Saving…' : rule ? 'Save rule' : 'Make rule'}
        </button>
        <button type="button" class="btn ghost" onClick={onDone}>
          Cancel
        </button>
      </div>
    </form>
  );
}
