// Pieces every view uses: an ask's title, its status chips, its thread, and small helpers.

import type { ComponentChildren, RefObject } from 'preact';
import { useEffect, useLayoutEffect, useRef, useState } from 'preact/hooks';
import { plainText, renderTitle } from '../markdown';
import { commentsOf, whereOf } from '../revision7';
import { navigate } from '../state';
import { age, fullTime } from '../time';
import { approvalClosedLabel, approvalLine, approvalOutcome, codeParts, noticeHeading, scopeWords, verdictVerb, type AgentNames } from '../approval';
import type { Actor, Ask, Entry, NoticeEntry, Reply } from '../types';
import { clockTime, closedByDeadline, countdown, deadlineOf, noticeEvent, surfaceWords, viaOf } from '../deadline';
import { Blocks, Markdown } from './Blocks';
import { isSnoozed, type AskMark } from '../marks';

/** Re-renders every `ms` so ages stay current. */
export function useNow(ms = 30_000): number {
  const [now, setNow] = useState(Date.now());
  useEffect(() => {
    const t = setInterval(() => setNow(Date.now()), ms);
    return () => clearInterval(t);
  }, [ms]);
  return now;
}

/**
 * One line that names an ask, as plain text (the page's title, labels): the review's or briefing's
 * title, or the question's first words, with their markdown's words kept as written.
 */
export function askTitle(a: Ask, max = 140): string {
  if (a.kind === 'question') return plainText(a.prompt.question, max) || 'Question';
  if (a.kind === 'approval') return approvalLine(a, max);
  return plainText(a.prompt.title, max) || KIND_LABEL[a.kind];
}

/**
 * An ask's title as shown: its inline markdown rendered and sanitised (markdown.ts renderTitle),
 * an approval's command as the text it is. The element's children are set here, never by Preact.
 */
export function TitleText({ ask, max = 200 }: { ask: Ask; max?: number }) {
  const ref = useRef<HTMLSpanElement>(null);
  const src = ask.kind === 'question' ? ask.prompt.question : ask.kind === 'approval' ? null : ask.prompt.title;
  useLayoutEffect(() => {
    if (src === null || !ref.current) return;
    const frag = renderTitle(src, max);
    if (!frag.textContent?.trim()) ref.current.textContent = KIND_LABEL[ask.kind];
    else ref.current.replaceChildren(frag);
  }, [src, max]);
  if (src === null) return <>{askTitle(ask, max)}</>;
  return <span class="title-md" ref={ref} />;
}

export const KIND_LABEL = { question: 'Question', review: 'Review', briefing: 'Briefing', approval: 'Approval' } as const;

export function outcomeLabel(r: Reply): string {
  switch (r.outcome) {
    case 'answered':
      return 'Answered';
    case 'approved':
      return 'Approved';
    case 'changes_requested':
      return 'Changes requested';
    case 'follow_up':
      return 'Asked back';
    case 'dismissed':
      return 'Dismissed';
    case 'responded':
      return 'Replied';
    case 'allowed':
      return 'Allowed';
    case 'denied':
      return 'Denied';
  }
}

/** The reply that closed an ask, if it is closed. */
export function closingReply(a: Ask): Reply | null {
  if (a.status !== 'closed' || closedByDeadline(a)) return null;
  for (let i = a.thread.length - 1; i >= 0; i--) {
    const e = a.thread[i];
    if (e.author === 'human') return e.reply;
  }
  return null;
}

export function closedLabel(a: Ask): string {
  if (a.kind === 'approval') return approvalClosedLabel(a);
  if (closedByDeadline(a)) return deadlineOf(a)?.default ? 'Default taken' : 'No answer in time';
  const r = closingReply(a);
  if (!r) return 'Closed';
  if (r.outcome === 'responded') return 'All points resolved';
  return outcomeLabel(r);
}

/**
 * Whose move it is, and whether an agent is following right now. `known` is false while the page
 * cannot hear the server (offline, reconnecting): whether an agent waits is then shown greyed, as
 * not known, rather than as it was last heard.
 */
export function StatusChips({ ask, compact = false, known = true }: { ask: Ask; compact?: boolean; known?: boolean }) {
  const r = closingReply(ask);
  const outcome = ask.kind === 'approval' ? approvalOutcome(ask) : closedByDeadline(ask) ? 'deadline' : (r?.outcome ?? 'none');
  return (
    <span class="chips">
      {ask.status === 'awaiting_human' && <span class="chip chip-you">Your move</span>}
      {ask.status === 'awaiting_agent' && <span class="chip chip-agent">Agent's move</span>}
      {ask.status === 'closed' && (
        <span class={`chip chip-closed outcome-${outcome}`}>{closedLabel(ask)}</span>
      )}
      {ask.status !== 'closed' &&
        (!known ? (
          <span class="chip chip-unknown" title="Not known while the page cannot reach Loopback">
            {compact ? 'Agent: not known' : 'Whether an agent waits is not known offline'}
          </span>
        ) : ask.waiting ? (
          <span class="chip chip-waiting" title="An agent is waiting on this ask right now">
            <span class="pulse" aria-hidden="true" />
            {compact ? 'Agent waiting' : 'Agent waiting now'}
          </span>
        ) : (
          <span
            class="chip chip-idle"
            title="No agent is waiting right now; your reply is kept and the agent gets it when it calls await_reply"
          >
            No agent waiting
          </span>
        ))}
    </span>
  );
}

export function Time({ at, prefix = '' }: { at: string; prefix?: string }) {
  return (
    <time dateTime={at} title={fullTime(at)}>
      {prefix}
      {age(at)}
    </time>
  );
}

export function actorName(by: Actor | undefined, me: Actor | null | undefined): string {
  if (!by) return 'You';
  if (me && by.id === me.id) return 'You';
  return by.name || by.id;
}

/**
 * Whose agent asked, in words: "your agent" or "ada's agent" (the name the server gives the person
 * the agent's credential belongs to; never anything the agent wrote). Null when it is not known.
 */
export function agentOf(raisedBy: Actor | undefined, me: Actor | null | undefined): string | null {
  if (!raisedBy) return null;
  if (me && raisedBy.id === me.id) return 'your agent';
  return `${raisedBy.name || raisedBy.id}'s agent`;
}

/** The person's own words: shown as plain text, never as HTML. */
export function Words({ text }: { text: string }) {
  return <div class="words">{text}</div>;
}

/** What a scope covers, in words, with what is matched word for word as code. */
export function ScopeWords({ words }: { words: string }) {
  return (
    <>
      {codeParts(words).map((p, i) => (p.code ? <code key={i}>{p.text}</code> : p.text))}
    </>
  );
}

/** A time on the clock ("10:42"), with the full date and time as its tooltip. */
export function ClockTime({ at }: { at: string }) {
  return (
    <time dateTime={at} title={fullTime(at)}>
      {clockTime(at)}
    </time>
  );
}

/** How long until an open ask's deadline, counting down each second. */
export function Countdown({ at, compact = false }: { at: string; compact?: boolean }) {
  const now = useNow(1000);
  const left = countdown(at, now);
  const soon = Date.parse(at) - now < 5 * 60_000;
  return (
    <span class={`chip chip-deadline ${soon ? 'soon' : ''}`} data-deadline={at} title={`Deadline: ${fullTime(at)}`}>
      {compact ? `Due ${left}` : left === 'now' ? 'Deadline now' : `Deadline ${left}`}
    </span>
  );
}

/** A notice's heading: revision 4's deadline and escalation, or an approval's (noticeHeading). */
function heading(entry: NoticeEntry): string {
  switch (noticeEvent(entry)) {
    case 'deadline':
      return 'Nobody answered by the deadline';
    case 'escalated':
      return 'Escalated';
  }
  return noticeHeading(entry);
}

/** Something Loopback says happened to an ask: decided by a rule, at the terminal, withdrawn, too late; a deadline, an escalation. */
export function NoticeView({ entry }: { entry: NoticeEntry }) {
  return (
    <li class={`entry entry-notice event-${entry.event} outcome-${entry.outcome ?? 'none'}`} data-event={entry.event}>
      <div class="entry-head">
        <span class="who loopback">{heading(entry)}</span> <Time at={entry.at} />
      </div>
      <p class="notice-text">{entry.text}</p>
      {entry.event === 'rule' && entry.ruleId && (
        <a
          class="rule-link"
          href={'/rules?rule=' + encodeURIComponent(entry.ruleId)}
          onClick={(e) => {
            if (e.button !== 0 || e.metaKey || e.ctrlKey || e.shiftKey || e.altKey) return;
            e.preventDefault();
            navigate({ name: 'rules', focus: entry.ruleId });
          }}
        >
          See the rule
        </a>
      )}
    </li>
  );
}

/** One turn of a thread. */
export function EntryView({ entry, me, names }: { entry: Entry; me?: Actor | null; names?: AgentNames }) {
  if (entry.author === 'loopback') return <NoticeView entry={entry} />;
  if (entry.author === 'agent') {
    return (
      <li class="entry entry-agent">
        <div class="entry-head">
          <span class="who agent">Agent</span> answered <Time at={entry.at} />
        </div>
        <Markdown text={entry.answer} />
        <Blocks blocks={entry.content} />
      </li>
    );
  }
  const r = entry.reply;
  const who = actorName(entry.by, me);
  const via = viaOf(entry);
  return (
    <li class={`entry entry-human outcome-${r.outcome}`} data-via={via}>
      <div class="entry-head">
        <span class="who" data-by={entry.by?.id} title={entry.by?.name}>
          {who}
        </span>{' '}
        {verb(r)}
        {via && <span class="via"> {surfaceWords(via)}</span>}, <ClockTime at={entry.at} />
      </div>
      {r.outcome === 'answered' && (
        <>
          {r.selected.length > 0 && (
            <div class="picked">
              {r.selected.map((s) => (
                <span class="chip chip-pick" key={s}>
                  {s}
                </span>
              ))}
            </div>
          )}
          {r.text && <Words text={r.text} />}
        </>
      )}
      {r.outcome === 'approved' && r.note && <Words text={r.note} />}
      {(r.outcome === 'allowed' || r.outcome === 'denied') && r.remember && (
        <p class="remembered">
          Rule: <ScopeWords words={scopeWords(r.remember, names)} />
        </p>
      )}
      {r.outcome === 'denied' && r.message && <Words text={r.message} />}
      {r.outcome === 'changes_requested' && <Words text={r.feedback} />}
      {commentsOf(r).length > 0 && (
        <ul class="entry-comments" aria-label="Line comments">
          {commentsOf(r).map((c, i) => (
            <li key={i} data-entry-comment>
              <code class="where">{whereOf(c)}</code>
              <Words text={c.text} />
            </li>
          ))}
        </ul>
      )}
      {r.outcome === 'follow_up' && <Words text={r.question} />}
      {r.outcome === 'responded' && (
        <ul class="point-replies">
          {r.points.map((p) => (
            <li key={p.point}>
              <span class="point-id">{p.point}</span>
              {p.resolved && <span class="chip chip-resolved">resolved</span>}
              {p.text && <Words text={p.text} />}
            </li>
          ))}
        </ul>
      )}
    </li>
  );
}

function verb(r: Reply): string {
  switch (r.outcome) {
    case 'answered':
      return 'answered';
    case 'approved':
      return 'approved';
    case 'changes_requested':
      return 'requested changes';
    case 'follow_up':
      return 'asked';
    case 'dismissed':
      return 'dismissed this';
    case 'responded':
      return 'replied on points';
    case 'allowed':
    case 'denied':
      return verdictVerb(r) ?? r.outcome;
  }
}

export function Thread({ ask, me, names }: { ask: Ask; me?: Actor | null; names?: AgentNames }) {
  if (!ask.thread.length) return null;
  return (
    <section class="thread" aria-label="Thread">
      <h3 class="section-title">Thread</h3>
      <ol class="entries">
        {ask.thread.map((e, i) => (
          <EntryView key={i} entry={e} me={me} names={names} />
        ))}
      </ol>
    </section>
  );
}

/** An in-app link: a real <a href> (so it can be opened in a new tab) that navigates in place. */
export function AskLink({ id, children, class: cls }: { id: string; children: ComponentChildren; class?: string }) {
  return (
    <a
      href={'/asks/' + encodeURIComponent(id)}
      class={cls}
      onClick={(e) => {
        if (e.button !== 0 || e.metaKey || e.ctrlKey || e.shiftKey || e.altKey) return;
        e.preventDefault();
        navigate({ name: 'ask', id });
      }}
    >
      {children}
    </a>
  );
}

/** Why a button is disabled, said next to it and tied to it for screen readers. */
export function Reason({ id, text }: { id: string; text: string | null }) {
  return (
    <p id={id} class="reason" role="status" aria-live="polite">
      {text ?? ''}
    </p>
  );
}

/** A snooze in words, while it holds: "Snoozed until Tue 09:00", "Snoozed until the agent moves"; else null. */
export function snoozeLabel(m: AskMark | undefined, a: Ask, now: number): string | null {
  if (!isSnoozed(m, a, now)) return null;
  const s = m!.snooze!;
  if (s.untilAgentMoves || !s.until) return 'Snoozed until the agent moves';
  return 'Snoozed until ' + snoozeTime(new Date(s.until), new Date(now));
}

/** A snooze's time as the person reads it: "18:00" today, "Tue 09:00" this week, else "3 Jan 09:00". */
export function snoozeTime(t: Date, now: Date): string {
  const hm = t.toLocaleTimeString(undefined, { hour: '2-digit', minute: '2-digit' });
  if (t.toDateString() === now.toDateString()) return hm;
  if (t.getTime() - now.getTime() < 6 * 86400_000) return t.toLocaleDateString(undefined, { weekday: 'short' }) + ' ' + hm;
  return t.toLocaleDateString(undefined, { day: 'numeric', month: 'short' }) + ' ' + hm;
}

/**
 * A list that reads on as its end scrolls into view: while `active`, `readOn` runs each time the
 * element `end` comes into view. `cursor` (the next page's) watches afresh for each page, so an end
 * still in view after a short page reads the next one too.
 */
export function useReadOn(end: RefObject<HTMLElement>, active: boolean, cursor: unknown, readOn: () => void): void {
  useEffect(() => {
    const el = end.current;
    if (!el || !active || typeof IntersectionObserver === 'undefined') return;
    const io = new IntersectionObserver((es) => {
      if (es.some((e) => e.isIntersecting)) readOn();
    });
    io.observe(el);
    return () => io.disconnect();
  }, [active, cursor]);
}
