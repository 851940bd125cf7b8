import { useDraft } from '../drafts';
import { findAsk, useApp } from '../state';
import type { Actor, Reply, ReviewAsk } from '../types';
import { Blocks, Markdown } from './Blocks';
import { AskLink, askTitle, Reason, Thread } from './common';
import { LinkIcon } from './icons';
import { DismissButton, useSend } from './Question';

type Action = 'approve' | 'changes' | 'ask';

interface ReviewDraft {
  action: Action;
  texts: Record<Action, string>;
}

const emptyDraft = (): ReviewDraft => ({ action: 'approve', texts: { approve: '', changes: '', ask: '' } });
const isEmpty = (d: ReviewDraft) => d.action === 'approve' && !Object.values(d.texts).some((t) => t.trim());

const ACTIONS: { id: Action; label: string; field: string; placeholder: string; button: string }[] = [
  { id: 'approve', label: 'Approve', field: 'Note for the agent (optional)', placeholder: 'Anything to keep in mind…', button: 'Approve' },
  { id: 'changes', label: 'Request changes', field: 'What needs to change (required)', placeholder: 'Say what to change, and why…', button: 'Request changes' },
  { id: 'ask', label: 'Ask a question', field: 'Your question for the agent (required)', placeholder: 'What do you need to know before deciding?', button: 'Send question' },
];

export function ReviewView({ ask, me }: { ask: ReviewAsk; me: Actor | null }) {
  const s = useApp();
  const p = ask.prompt;
  const open = ask.status === 'awaiting_human';
  const [draft, setDraft, resetDraft] = useDraft<ReviewDraft>(ask.id, emptyDraft, isEmpty);
  const { busy, send } = useSend(ask);
  const action = ACTIONS.find((a) => a.id === draft.action) ?? ACTIONS[0];
  const text = (draft.texts[action.id] ?? '').trim();
  const needsText = action.id !== 'approve';
  const reason = needsText && !text ? (action.id === 'changes' ? 'Say what needs to change to request changes.' : 'Write your question to send it.') : null;

  const revised = ask.revises ? findAsk(s, ask.revises) : undefined;
  const revisedBy = [...s.live.values(), ...s.extra.values()].filter((a) => a.kind === 'review' && a.revises === ask.id);

  const submit = () => {
    if (reason) return;
    let reply: Reply;
    if (action.id === 'approve') reply = text ? { outcome: 'approved', note: text } : { outcome: 'approved' };
    else if (action.id === 'changes') reply = { outcome: 'changes_requested', feedback: text };
    else reply = { outcome: 'follow_up', question: text };
    void send(reply, resetDraft);
  };

  return (
    <div class="review">
      {ask.revises && (
        <p class="revises">
          <LinkIcon />
          <span>
            Revises{' '}
            <AskLink id={ask.revises} class="revises-link">
              {revised ? askTitle(revised, 80) : 'an earlier review'}
            </AskLink>
            {revised && revised.status === 'closed' && <span class="muted"> (closed)</span>}
          </span>
        </p>
      )}
      {revisedBy.map((r) => (
        <p class="revises revised-by" key={r.id}>
          <LinkIcon />
          <span>
            Revised by <AskLink id={r.id}>{askTitle(r, 80)}</AskLink>
          </span>
        </p>
      ))}
      {p.summary && <Markdown text={p.summary} class="summary" />}
      <Blocks blocks={p.content} />
      <Thread ask={ask} me={me} />

      {open && (
        <form
          class="reply-panel"
          onSubmit={(e) => {
            e.preventDefault();
            submit();
          }}
        >
          <div class="segmented" role="radiogroup" aria-label="Your verdict">
            {ACTIONS.map((a) => (
              <button
                type="button"
                role="radio"
                key={a.id}
                aria-checked={draft.action === a.id}
                class={`seg seg-${a.id} ${draft.action === a.id ? 'on' : ''}`}
                onClick={() => setDraft({ ...draft, action: a.id })}
              >
                {a.label}
              </button>
            ))}
          </div>
          <label class="field-label" for={`review-${ask.id}`}>
            {action.field}
          </label>
          <textarea
            id={`review-${ask.id}`}
            name={action.id}
            rows={3}
            value={draft.texts[action.id] ?? ''}
            placeholder={action.placeholder}
            onInput={(e) =>
              setDraft({ ...draft, texts: { ...draft.texts, [action.id]: (e.target as HTMLTextAreaElement).value } })
            }
            onKeyDown={(e) => {
              if (e.key === 'Enter' && (e.metaKey || e.ctrlKey)) {
                e.preventDefault();
                submit();
              }
            }}
          />
          <div class="actions">
            <button
              type="submit"
              class={`btn primary action-${action.id}`}
              disabled={!!reason || busy}
              aria-describedby={`why-${ask.id}`}
            >
              {busy ? 'Sending…' : action.button}
            </button>
            <span class="spacer" />
            <DismissButton busy={busy} onDismiss={() => void send({ outcome: 'dismissed' }, resetDraft)} />
          </div>
          <Reason id={`why-${ask.id}`} text={reason} />
        </form>
      )}
      {ask.status === 'awaiting_agent' && (
        <p class="turn-note">You asked a question. The agent's answer will appear in the thread; then you can decide.</p>
      )}
    </div>
  );
}
