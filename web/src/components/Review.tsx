import { useMemo } from 'preact/hooks';
import { useDraft } from '../drafts';
import { commentsOf, MAX_LINE_COMMENTS, type Approved7, type ChangesRequested7, type LineComment } from '../revision7';
import { findAsk, useApp } from '../state';
import type { Actor, Reply, ReviewAsk } from '../types';
import { Blocks, Markdown } from './Blocks';
import { actorName, AskLink, Reason, Thread, TitleText } from './common';
import { LineCommentsContext, type LineCommentsCtl, type ShownComment } from './LineComments';
import { LinkIcon } from './icons';
import { CloseOnAgentsMove, DismissButton, useSend } from './Question';

type Action = 'approve' | 'changes' | 'ask';

interface ReviewDraft {
  action: Action;
  texts: Record<Action, string>;
  /** Line comments (revision 7), sent with Approve or Request changes. Absent in older drafts. */
  comments?: LineComment[];
}

const emptyDraft = (): ReviewDraft => ({ action: 'approve', texts: { approve: '', changes: '', ask: '' } });
const isEmpty = (d: ReviewDraft) => d.action === 'approve' && !Object.values(d.texts).some((t) => t.trim()) && !d.comments?.length;

/** "1 comment", "3 comments". */
export function commentCount(n: number): string {
  return `${n} ${n === 1 ? 'comment' : 'comments'}`;
}

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
  const { busy, send, blocked } = useSend(ask);
  const action = ACTIONS.find((a) => a.id === draft.action) ?? ACTIONS[0];
  const text = (draft.texts[action.id] ?? '').trim();
  const drafts = draft.comments ?? [];
  // Only comments with words are sent; an empty one is a box the person has not written in yet.
  const comments = drafts.filter((c) => c.text.trim()).map((c) => ({ ...c, text: c.text.trim() }));
  const needsText = action.id === 'ask' || (action.id === 'changes' && !comments.length);
  const reason =
    blocked ??
    (comments.length > MAX_LINE_COMMENTS
      ? `At most ${MAX_LINE_COMMENTS} line comments go with one verdict; remove ${comments.length - MAX_LINE_COMMENTS}.`
      : needsText && !text
        ? action.id === 'changes'
          ? 'Say what needs to change to request changes.'
          : 'Write your question to send it.'
        : null);

  // Line comments: the person's drafts while the review is open; every sent one at its line.
  const shown = useMemo<ShownComment[]>(
    () =>
      ask.thread.flatMap((e) =>
        e.author === 'human' ? commentsOf(e.reply).map((comment) => ({ comment, who: actorName(e.by, me) })) : [],
      ),
    [ask.thread, me],
  );
  const setComments = (cs: LineComment[]) => setDraft({ ...draft, comments: cs });
  const lc: LineCommentsCtl = {
    id: ask.id,
    shown,
    drafts: open ? drafts : null,
    add: (path, side, line) => {
      if (drafts.some((c) => c.path === path && c.side === side && c.line === line)) return; // focus the one there
      setComments([...drafts, { path, side, line, text: '' }]);
    },
    edit: (i, t) => setComments(drafts.map((c, j) => (j === i ? { ...c, text: t } : c))),
    remove: (i) => setComments(drafts.filter((_, j) => j !== i)),
  };

  const revised = ask.revises ? findAsk(s, ask.revises) : undefined;
  const revisedBy = [...s.live.values(), ...s.extra.values()].filter((a) => a.kind === 'review' && a.revises === ask.id);

  const submit = () => {
    if (reason) return;
    let reply: Reply;
    const withComments = comments.length ? { comments } : {};
    if (action.id === 'approve') reply = { outcome: 'approved', ...(text ? { note: text } : {}), ...withComments } satisfies Approved7;
    else if (action.id === 'changes')
      reply = { outcome: 'changes_requested', feedback: text || 'See my comments on the lines.', ...withComments } satisfies ChangesRequested7;
    else {
      // A question back leaves the line comments as drafts, for the verdict after the answer.
      reply = { outcome: 'follow_up', question: text };
      void send(reply, () => setDraft({ ...emptyDraft(), comments: drafts }));
      return;
    }
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
              {revised ? <TitleText ask={revised} max={80} /> : 'an earlier review'}
            </AskLink>
            {revised && revised.status === 'closed' && <span class="muted"> (closed)</span>}
          </span>
        </p>
      )}
      {revisedBy.map((r) => (
        <p class="revises revised-by" key={r.id}>
          <LinkIcon />
          <span>
            Revised by <AskLink id={r.id}><TitleText ask={r} max={80} /></AskLink>
          </span>
        </p>
      ))}
      {p.summary && <Markdown text={p.summary} class="summary" />}
      <div data-lc-review={ask.id}>
        <LineCommentsContext.Provider value={lc}>
          <Blocks blocks={p.content} />
        </LineCommentsContext.Provider>
      </div>
      <Thread ask={ask} me={me} />

      {open && (
        <form
          class="reply-panel review-reply"
          id={`review-form-${ask.id}`}
          onSubmit={(e) => {
            e.preventDefault();
            submit();
          }}
        >
          <label class="field-label" for={`review-${ask.id}`}>
            {action.id === 'changes' && comments.length ? 'What needs to change (optional with line comments)' : action.field}
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
        </form>
      )}
      {open && (
        // Sticky at the bottom of the screen, as the briefing's: the verdict is never fifteen
        // screens away from the diff being read.
        <div class="submit-bar review-bar" role="region" aria-label="Your verdict">
          <VerdictSwitch
            value={draft.action}
            onChange={(id) => {
              setDraft({ ...draft, action: id });
            }}
          />
          <div class="actions">
            {comments.length > 0 && (
              <span class="chip comment-count" data-comment-count={comments.length} title={action.id === 'ask' ? 'Sent with your verdict, not with a question' : undefined}>
                {commentCount(comments.length)}
              </span>
            )}
            <button
              type="submit"
              form={`review-form-${ask.id}`}
              class={`btn primary action-${action.id}`}
              data-review-send
              disabled={!!reason || busy}
              aria-describedby={`why-${ask.id}`}
            >
              {busy ? 'Sending…' : action.button}
            </button>
            <span class="spacer" />
            <DismissButton busy={busy || !!blocked} onDismiss={() => void send({ outcome: 'dismissed' }, resetDraft)} />
          </div>
          <Reason id={`why-${ask.id}`} text={reason} />
        </div>
      )}
      {ask.status === 'awaiting_agent' && (
        <>
          <p class="turn-note">You asked a question. The agent's answer will appear in the thread; then you can decide.</p>
          <CloseOnAgentsMove ask={ask} />
        </>
      )}
    </div>
  );
}

/**
 * The verdict: a radio group, one tab stop, arrow keys move and pick (WAI-ARIA's radio group).
 * Picking one that needs words takes the focus to the text box.
 */
function VerdictSwitch({ value, onChange }: { value: Action; onChange: (a: Action) => void }) {
  const pick = (id: Action, el: HTMLElement | null) => {
    onChange(id);
    requestAnimationFrame(() => {
      if (el) el.querySelector<HTMLElement>(`[data-action="${id}"]`)?.focus();
    });
  };
  return (
    <div
      class="segmented"
      role="radiogroup"
      aria-label="Your verdict"
      onKeyDown={(e) => {
        const keys: Record<string, number> = { ArrowRight: 1, ArrowDown: 1, ArrowLeft: -1, ArrowUp: -1 };
        if (e.key === 'Home' || e.key === 'End' || keys[e.key]) {
          e.preventDefault();
          const i = ACTIONS.findIndex((a) => a.id === value);
          const n = e.key === 'Home' ? 0 : e.key === 'End' ? ACTIONS.length - 1 : (i + keys[e.key] + ACTIONS.length) % ACTIONS.length;
          pick(ACTIONS[n].id, e.currentTarget as HTMLElement);
        }
      }}
    >
      {ACTIONS.map((a) => (
        <button
          type="button"
          role="radio"
          key={a.id}
          data-action={a.id}
          aria-checked={value === a.id}
          tabIndex={value === a.id ? 0 : -1}
          class={`seg seg-${a.id} ${value === a.id ? 'on' : ''}`}
          onClick={() => onChange(a.id)}
        >
          {a.label}
        </button>
      ))}
    </div>
  );
}
