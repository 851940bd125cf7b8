import { useState } from 'preact/hooks';
import { useDraft } from '../drafts';
import { advanceFrom, getState, queueReply, readSettingsNow, useApp } from '../state';
import type { Actor, Ask, QuestionAsk, Reply } from '../types';
import { focusRow, shownList } from './AskList';
import { Markdown } from './Blocks';
import { Reason, Thread } from './common';
import { CheckIcon } from './icons';

/** What the toast calls a reply while it waits out its undo time. */
export function heldLabel(r: Reply): string {
  switch (r.outcome) {
    case 'answered':
      return 'Sending your answer';
    case 'approved':
      return 'Approving';
    case 'changes_requested':
      return 'Requesting changes';
    case 'follow_up':
      return 'Sending your question';
    case 'dismissed':
      return 'Dismissing';
    case 'responded':
      return 'Sending your replies';
    case 'allowed':
      return 'Allowing';
    case 'denied':
      return 'Denying';
  }
}

/** Why nothing can be sent right now (offline), or null. */
export function sendBlocked(s: { online: boolean; conn: { status: string } }): string | null {
  return s.online && s.conn.status !== 'offline' ? null : 'You are offline: your draft is kept here, and you can send it once the connection is back.';
}

/**
 * Sending for one view: busy while a reply is on its way (or held for undo), `blocked` saying why
 * nothing can be sent (offline). A reply is held for the undo time (effects/triage.ts) and the next
 * ask opens at once; `after` runs once the server has it.
 */
export function useSend(ask: Ask) {
  const s = useApp();
  const [busy, setBusy] = useState(false);
  const blocked = sendBlocked(s);
  const send = async (reply: Reply, after?: () => void): Promise<boolean> => {
    if (busy || sendBlocked(getState())) return false;
    setBusy(true);
    const list = shownList(getState(), 'inbox');
    const heldFirst = readSettingsNow().undoSeconds > 0;
    try {
      const sent = queueReply(ask, reply, heldLabel(reply));
      if (heldFirst) advanceFrom(ask.id, list, focusRow);
      const ok = await sent;
      if (ok) {
        after?.();
        if (!heldFirst) advanceFrom(ask.id, list, focusRow);
      }
      return ok;
    } finally {
      setBusy(false);
    }
  };
  return { busy, send, blocked };
}

interface QuestionDraft {
  selected: string[];
  text: string;
  mode: 'answer' | 'ask';
  question: string;
}

const emptyDraft = (): QuestionDraft => ({ selected: [], text: '', mode: 'answer', question: '' });
const isEmpty = (d: QuestionDraft) => !d.selected.length && !d.text.trim() && !d.question.trim() && d.mode === 'answer';

export function QuestionView({ ask, me }: { ask: QuestionAsk; me: Actor | null }) {
  const p = ask.prompt;
  const open = ask.status === 'awaiting_human';
  const [draft, setDraft, resetDraft] = useDraft<QuestionDraft>(ask.id, emptyDraft, isEmpty);
  const { busy, send, blocked } = useSend(ask);
  // Only labels still offered count (a stale draft could name one the agent no longer offers).
  // Once answered, the choice that was sent is the one marked.
  const answered = lastAnswer(ask);
  const selected = open ? draft.selected.filter((l) => p.options.some((o) => o.label === l)) : (answered?.selected ?? []);

  const toggle = (label: string) => {
    if (!open) return;
    let next: string[];
    if (p.multiple) next = selected.includes(label) ? selected.filter((l) => l !== label) : [...selected, label];
    else next = selected.includes(label) ? [] : [label];
    setDraft({ ...draft, selected: next });
  };

  const text = draft.text.trim();
  const canAnswer = selected.length > 0 || text !== '';
  const answerReason = blocked
    ? blocked
    : canAnswer
    ? null
    : p.options.length
      ? 'Pick a choice or write an answer to send.'
      : 'Write an answer to send.';
  const submitAnswer = () => {
    if (!canAnswer) return;
    const reply: Reply = { outcome: 'answered', selected: p.options.filter((o) => selected.includes(o.label)).map((o) => o.label) };
    if (text) reply.text = text;
    void send(reply, resetDraft);
  };
  const question = draft.question.trim();

  return (
    <div class="question">
      <Markdown text={p.question} class="prompt-text" />
      {p.context && (
        <section class="context">
          <h3 class="section-title">Context</h3>
          <Markdown text={p.context} />
        </section>
      )}

      {p.options.length > 0 && (
        <fieldset class="choices" disabled={!open}>
          <legend class="section-title">
            {!open && answered ? 'Choices — the one sent is marked' : p.multiple ? 'Choices — pick one or more' : 'Choices — pick one'}
          </legend>
          <div class="choice-list" role="group">
            {p.options.map((o, i) => {
              const on = selected.includes(o.label);
              return (
                <button
                  type="button"
                  key={o.label}
                  class={`choice ${on ? 'on' : ''} ${p.multiple ? 'multi' : 'single'} ${!open && on ? 'chosen' : ''}`}
                  aria-pressed={on}
                  data-choice={i + 1}
                  title={open && i < 6 ? `Press ${i + 1}` : undefined}
                  onClick={() => toggle(o.label)}
                >
                  <span class="choice-mark" aria-hidden="true">
                    {on && <CheckIcon size={14} />}
                  </span>
                  <span class="choice-body">
                    <span class="choice-label">{o.label}</span>
                    {o.description && <span class="choice-desc">{o.description}</span>}
                  </span>
                  {!open && on && <span class="chip chip-chosen">Chosen</span>}
                  {open && i < 6 && (
                    <kbd class="choice-key" aria-hidden="true">
                      {i + 1}
                    </kbd>
                  )}
                </button>
              );
            })}
          </div>
        </fieldset>
      )}

      <Thread ask={ask} me={me} />

      {open && draft.mode === 'answer' && (
        <form
          class="reply-panel"
          onSubmit={(e) => {
            e.preventDefault();
            submitAnswer();
          }}
        >
          <label class="field-label" for={`answer-${ask.id}`}>
            {p.options.length ? 'In your own words (optional with a choice)' : 'Your answer'}
          </label>
          <textarea
            id={`answer-${ask.id}`}
            name="answer"
            rows={3}
            value={draft.text}
            placeholder={p.options.length ? 'Add detail, or answer differently…' : 'Type your answer…'}
            onInput={(e) => setDraft({ ...draft, text: (e.target as HTMLTextAreaElement).value })}
            onKeyDown={(e) => {
              if (e.key === 'Enter' && (e.metaKey || e.ctrlKey)) {
                e.preventDefault();
                submitAnswer();
              }
            }}
          />
          <div class="actions">
            <button type="submit" class="btn primary" disabled={!canAnswer || busy || !!blocked} aria-describedby={`why-${ask.id}`}>
              {busy ? 'Sending…' : 'Send answer'}
            </button>
            <button type="button" class="btn ghost" onClick={() => setDraft({ ...draft, mode: 'ask' })}>
              Ask a question back
            </button>
            <span class="spacer" />
            <DismissButton busy={busy || !!blocked} onDismiss={() => void send({ outcome: 'dismissed' }, resetDraft)} />
          </div>
          <Reason id={`why-${ask.id}`} text={answerReason} />
        </form>
      )}

      {open && draft.mode === 'ask' && (
        <form
          class="reply-panel"
          onSubmit={(e) => {
            e.preventDefault();
            if (question) void send({ outcome: 'follow_up', question }, resetDraft);
          }}
        >
          <label class="field-label" for={`ask-${ask.id}`}>
            Your question for the agent
          </label>
          <textarea
            id={`ask-${ask.id}`}
            name="question"
            rows={3}
            value={draft.question}
            placeholder="What do you need to know before answering?"
            onInput={(e) => setDraft({ ...draft, question: (e.target as HTMLTextAreaElement).value })}
          />
          <div class="actions">
            <button type="submit" class="btn primary" disabled={!question || busy || !!blocked} aria-describedby={`whyq-${ask.id}`}>
              {busy ? 'Sending…' : 'Send question'}
            </button>
            <button type="button" class="btn ghost" onClick={() => setDraft({ ...draft, mode: 'answer' })}>
              Back to answering
            </button>
          </div>
          <Reason id={`whyq-${ask.id}`} text={blocked ?? (question ? null : 'Write your question to send it.')} />
        </form>
      )}

      {ask.status === 'awaiting_agent' && (
        <>
          <p class="turn-note">You asked a question back. The agent's answer will appear here.</p>
          <CloseOnAgentsMove ask={ask} />
        </>
      )}
    </div>
  );
}

/**
 * On the agent's move, the person may still close the ask (contract revision 6): the way out when
 * the agent will not come back. The agent is told, when it next looks, that they dismissed it.
 */
export function CloseOnAgentsMove({ ask }: { ask: Ask }) {
  const { busy, send, blocked } = useSend(ask);
  return (
    <div class="close-agents-move" data-close-agents-move>
      <p class="muted small">
        {ask.waiting
          ? 'An agent is following this ask.'
          : 'No agent is waiting on this ask now. If it is not coming back, dismiss it to close it.'}{' '}
        The agent is told that you dismissed it while it was its move.
      </p>
      <DismissButton busy={busy || !!blocked} onDismiss={() => void send({ outcome: 'dismissed' })} />
    </div>
  );
}

/** Dismiss, asking once for confirmation. */
export function DismissButton({ busy, onDismiss, label = 'Dismiss' }: { busy: boolean; onDismiss: () => void; label?: string }) {
  const [armed, setArmed] = useState(false);
  if (!armed) {
    return (
      <button type="button" class="btn ghost danger-text" disabled={busy} onClick={() => setArmed(true)}>
        {label}
      </button>
    );
  }
  return (
    <span class="confirm">
      <span class="confirm-text">Dismiss without an answer?</span>
      <button type="button" class="btn danger" disabled={busy} onClick={onDismiss}>
        Yes, dismiss
      </button>
      <button type="button" class="btn ghost" onClick={() => setArmed(false)}>
        Keep
      </button>
    </span>
  );
}

/** The last answer a person gave on a question (the one that closed it, or the latest). */
function lastAnswer(a: QuestionAsk): Extract<Reply, { outcome: 'answered' }> | null {
  for (let i = a.thread.length - 1; i >= 0; i--) {
    const e = a.thread[i];
    if (e.author === 'human' && e.reply.outcome === 'answered') return e.reply;
  }
  return null;
}
