import { useEffect, useRef } from 'preact/hooks';
import { findAsk, getState, loadAsk, markOpened, navigate, READ_AFTER_MS, takeDetailFocus, undoPending, useApp } from '../state';
import { lastTab } from './shortcuts';
import type { Ask } from '../types';
import { ApprovalView } from './Approval';
import { BriefingView } from './Briefing';
import { agentOf, Countdown, KIND_LABEL, StatusChips, Time, TitleText, useNow } from './common';
import { answeredByLine, closingEntry, deadlineLine, deadlineOf, escalatesAt, wasEscalated } from '../deadline';
import { BackIcon, KindIcon } from './icons';
import { QuestionView } from './Question';
import { ReviewView } from './Review';
import { MarkBar } from './MarkBar';
import { lastChange } from '../marks';

export function AskView({ id }: { id: string }) {
  const s = useApp();
  useNow();
  const ask = findAsk(s, id);
  const missing = s.missing.has(id);
  const raisedBy = agentOf(ask?.raisedBy, s.whoami?.actor);
  const deadline = ask ? deadlineOf(ask) : undefined;
  const answered = ask ? closingEntry(ask) : null;
  const heading = useRef<HTMLHeadingElement>(null);

  // An ask the socket does not hold (closed long ago, or opened by link before the snapshot came).
  useEffect(() => {
    if (!ask && !missing && s.liveReady) void loadAsk(id);
  }, [id, !!ask, missing, s.liveReady]);

  // Opened and still open a moment later: read (again, when the agent moves while it is open), once
  // the person's marks are known.
  const change = ask ? lastChange(ask) : 0;
  useEffect(() => {
    if (!ask || !s.liveReady) return;
    const t = setTimeout(() => {
      const now = findAsk(getState(), id);
      if (now) markOpened(now);
    }, READ_AFTER_MS);
    return () => clearTimeout(t);
  }, [id, change, s.liveReady]);

  // Focus the title when an ask is opened, so keyboard and screen-reader users land on it; but not
  // while they move through the list with j/k or the mouse beside it.
  useEffect(() => {
    if (takeDetailFocus() || !document.activeElement?.closest('[data-ask-row]')) heading.current?.focus({ preventScroll: true });
  }, [id, !!ask]);

  // Back to the list the ask was opened from (an ask answered here still goes back to the Inbox).
  const from = lastTab.current === 'history' ? 'history' : 'inbox';
  const back = (
    <button type="button" class="back-btn" onClick={() => navigate({ name: from })}>
      <BackIcon /> <span>{from === 'history' ? 'History' : 'Inbox'}</span>
    </button>
  );
  const pending = s.pending?.askId === id;

  if (!ask) {
    return (
      <article class="ask-view">
        {back}
        <div class="empty">
          {missing ? (
            <>
              <h2>Not found</h2>
              <p>There is no ask {id} in this inbox. It may belong to another space.</p>
            </>
          ) : (
            <p class="muted">Loading…</p>
          )}
        </div>
      </article>
    );
  }

  return (
    <article class={`ask-view kind-${ask.kind} status-${ask.status} ${pending ? 'is-pending' : ''}`} aria-labelledby={`title-${ask.id}`}>
      {back}
      <header class="ask-head">
        <div class="meta">
          <span class={`kind-badge kind-${ask.kind}`}>
            <KindIcon kind={ask.kind} /> {KIND_LABEL[ask.kind]}
          </span>
          {ask.project && <span class="project-tag">{ask.project}</span>}
          <span class="meta-item">
            <Time at={ask.createdAt} prefix="asked " />
          </span>
          {raisedBy && (
            <span class="meta-item raised-by" title={`Asked with a credential of ${ask.raisedBy?.name || ask.raisedBy?.id}`}>
              by {raisedBy}
            </span>
          )}
          {ask.client && <span class="meta-item client">via {ask.client}</span>}
        </div>
        {/* A question's words are its title; they are rendered in full as markdown below. */}
        <h2
          id={`title-${ask.id}`}
          class={ask.kind === 'question' ? 'ask-title sr-only' : ask.kind === 'approval' ? 'ask-title mono' : 'ask-title'}
          tabIndex={-1}
          ref={heading}
        >
          <TitleText ask={ask} max={200} />
        </h2>
        <div class="head-status">
          <StatusChips ask={ask} known={s.online && s.conn.status === 'live'} />
          {deadline && ask.status !== 'closed' && <Countdown at={deadline.at} />}
          {ask.closedAt && (
            <span class="meta-item">
              <Time at={ask.closedAt} prefix="closed " />
            </span>
          )}
        </div>
        <MarkBar ask={ask} />
      </header>
      {deadline && ask.status !== 'closed' && (
        <p class="deadline-note" data-testid="deadline-note">
          {deadlineLine(deadline)}
          {escalatesAt(ask) && !wasEscalated(ask) && ' If nobody answers sooner, the other people of this space are told too.'}
        </p>
      )}
      {answered && (
        <p class="answered-by" data-testid="answered-by">
          {answeredByLine(answered, s.whoami?.actor)}
        </p>
      )}
      {pending && (
        <p class="pending-note" role="status">
          Your reply is held on this page and goes to the agent in a few seconds.{' '}
          <button type="button" class="btn small ghost" onClick={() => undoPending()}>
            Undo
          </button>
        </p>
      )}
      {ask.status === 'closed' && <p class="readonly-note">This ask is closed. It is shown read-only, with its whole thread.</p>}
      <Body ask={ask} />
    </article>
  );
}

function Body({ ask }: { ask: Ask }) {
  const s = useApp();
  const me = s.whoami?.actor ?? null;
  switch (ask.kind) {
    case 'question':
      return <QuestionView ask={ask} me={me} />;
    case 'review':
      return <ReviewView ask={ask} me={me} />;
    case 'briefing':
      return <BriefingView ask={ask} me={me} />;
    case 'approval':
      return <ApprovalView ask={ask} me={me} />;
    default:
      return <p class="muted">This inbox does not know this kind of ask. Reload to get a newer inbox.</p>;
  }
}
