import { useState } from 'preact/hooks';
import { useDraft } from '../drafts';
import { sendReply } from '../state';
import type { Actor, QuestionAsk, Reply } from '../types';
import { Markdown } from './Blocks';
import { Reason, Thread } from './common';
import { CheckIcon } from './icons';

/** Sending state for one view: busy while a reply is on its way. */
export function useSend(ask: { id: string } & Parameters<typeof sendReply>[0]) {
  const [busy, setBusy] = useState(false);
  const send = async (reply: Reply, after?: () => void): Promise<boolean> => {
    if (busy) return false;
    setBusy(true);
    try {
      await sendReply(ask, reply);
      after?.();
      return true;
    } catch {
      return false;
    } finally {
      setBusy(false);
    }
  };
  return { busy, send };
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
  const { busy, send } = useSend(ask);
  // Only labels still offered count (a stale draft could name one the agent no longer offers).
  const selected = draft.selected.filter((l) => p.options.some((o) => o.label === l));

  const toggle = (label: string) => {
    if (!open) return;
    let next: string[];
    if (p.multiple) next = selected.includes(label) ? selected.filter((l) => l !== label) : [...selected, label];
    else next = selected.includes(label) ? [] : [label];
    setDraft({ ...draft, selected: next });
  };

  const text = draft.text.trim();
  const canAnswer = selected.length > 0 || text !== '';
  const answerReason = canAnswer
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
            {p.multiple ? 'Choices — pick one or more' : 'Choices — pick one'}
          </legend>
          <div class="choice-list" role="group">
            {p.options.map((o) => {
              const on = selected.includes(o.label);
              return (
                <button
                  type="button"
                  key={o.label}
                  class={`choice ${on ? 'on' : ''} ${p.multiple ? 'multi' : 'single'}`}
                  aria-pressed={on}
                  onClick={() => toggle(o.label)}
                >
                  <span class="choice-mark" aria-hidden="true">
                    {on && <CheckIcon size={14} />}
                  </span>
                  <span class="choice-body">
                    <span class="choice-label">{o.label}</span>
                    {o.description && <span class="choice-desc">{o.description}</span>}
                  </span>
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
            <button type="submit" class="btn primary" disabled={!canAnswer || busy} aria-describedby={`why-${ask.id}`}>
              {busy ? 'Sending…' : 'Send answer'}
            </button>
            <button type="button" class="btn ghost" onClick={() => setDraft({ ...draft, mode: 'ask' })}>
              Ask a question back
            </button>
            <span class="spacer" />
            <DismissButton busy={busy} onDismiss={() => void send({ outcome: 'dismissed' }, resetDraft)} />
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
            <button type="submit" class="btn primary" disabled={!question || busy} aria-describedby={`whyq-${ask.id}`}>
              {busy ? 'Sending…' : 'Send question'}
            </button>
            <button type="button" class="btn ghost" onClick={() => setDraft({ ...draft, mode: 'answer' })}>
              Back to answering
            </button>
          </div>
          <Reason id={`whyq-${ask.id}`} text={question ? null : 'Write your question to send it.'} />
        </form>
      )}

      {ask.status === 'awaiting_agent' && (
        <p class="turn-note">You asked a question back. The agent's answer will appear here.</p>
      )}
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
