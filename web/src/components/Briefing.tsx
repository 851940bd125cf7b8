import { useMemo, useState } from 'preact/hooks';
import {
  briefingPoints,
  draftReplies,
  judge,
  openPoints,
  pending,
  resolvedByAncestor,
  type BriefingDraft,
  type PointState,
  type Points,
} from '../briefing';
import { useDraft } from '../drafts';
import type { Actor, BriefingAsk } from '../types';
import { Blocks, Markdown } from './Blocks';
import { actorName, Reason, Time, Words } from './common';
import { CheckIcon, ChevronIcon } from './icons';
import { DismissButton, useSend } from './Question';

const emptyDraft = (): BriefingDraft => ({ texts: {}, resolved: {} });
const isEmpty = (d: BriefingDraft) =>
  !Object.values(d.texts).some((t) => t.trim()) && !Object.values(d.resolved).some(Boolean);

export function BriefingView({ ask, me }: { ask: BriefingAsk; me: Actor | null }) {
  const ps = useMemo(() => briefingPoints(ask), [ask]);
  const open = ask.status === 'awaiting_human';
  const [stored, setDraft, resetDraft] = useDraft<BriefingDraft>(ask.id, emptyDraft, isEmpty);
  // A draft may name points resolved since (elsewhere, or in an earlier round): ignore those.
  const draft = useMemo(() => cleanDraft(ps, stored), [ps, stored]);
  const { busy, send, blocked } = useSend(ask);
  const replies = draftReplies(ps, draft);
  const verdict = judge(ps, replies);
  const owed = pending(ps);
  const stillOpen = openPoints(ps);

  // Open by default: points whose latest word is the agent's, still open (the person reads those next).
  const [expanded, setExpanded] = useState<Set<string>>(() => {
    const s = new Set<string>();
    for (const id of ps.order) {
      const st = ps.byId.get(id)!;
      const last = st.turns[st.turns.length - 1];
      if (!st.resolved && last?.author === 'agent') s.add(id);
    }
    return s;
  });
  const toggleOpen = (id: string) => {
    const next = new Set(expanded);
    if (next.has(id)) next.delete(id);
    else next.add(id);
    setExpanded(next);
  };
  const setText = (id: string, text: string) => setDraft({ ...draft, texts: { ...draft.texts, [id]: text } });
  const setResolved = (id: string, on: boolean) => {
    const resolved = { ...draft.resolved };
    if (on) resolved[id] = true;
    else delete resolved[id];
    setDraft({ ...draft, resolved });
  };
  const resolveAll = () => {
    const resolved = { ...draft.resolved };
    for (const id of stillOpen) resolved[id] = true;
    setDraft({ ...draft, resolved });
  };

  const ctx: PointCtx = { ps, draft, open, expanded, toggleOpen, setText, setResolved, me, askId: ask.id };
  const written = replies.filter((r) => r.text).length;
  const resolving = replies.filter((r) => r.resolved).length;

  return (
    <div class="briefing">
      {ask.prompt.summary && <Markdown text={ask.prompt.summary} class="summary" />}
      <p class="briefing-progress">
        {ps.order.length - stillOpen.length} of {ps.order.length} points resolved
        {ask.status === 'awaiting_agent' && owed.length > 0 && (
          <> · the agent is answering {owed.length === 1 ? 'point' : 'points'} {owed.join(', ')}</>
        )}
      </p>
      <progress class="progress" value={ps.order.length - stillOpen.length} max={ps.order.length} aria-hidden="true" />
      {open && <p class="muted small hint">Open a point to read it and reply on it, or resolve it. Everything is sent together.</p>}

      {ask.prompt.sections.map((sec, si) => (
        <section class="briefing-section" key={si}>
          {sec.title && <h3 class="section-heading">{sec.title}</h3>}
          <ol class="points">
            {sec.points.map((p) => (
              <PointItem key={p.id} id={p.id} ctx={ctx} />
            ))}
          </ol>
        </section>
      ))}

      {open && (
        <div class="submit-bar" role="region" aria-label="Send your replies">
          {verdict.ok ? (
            <p class="submit-summary">
              {written > 0 && <>{written} written on</>}
              {written > 0 && resolving > 0 && ' · '}
              {resolving > 0 && <>{resolving} resolved</>}
              {verdict.closes ? ' · closes the briefing' : ` · the agent answers ${verdict.handsOver.join(', ')}`}
            </p>
          ) : null}
          <Reason id={`why-${ask.id}`} text={blocked ?? (verdict.ok ? null : verdict.reason)} />
          <div class="actions">
            <button
              type="button"
              class="btn primary"
              disabled={!verdict.ok || busy || !!blocked}
              aria-describedby={`why-${ask.id}`}
              onClick={() => verdict.ok && void send(verdict.reply, resetDraft)}
            >
              {busy ? 'Sending…' : verdict.ok && verdict.closes ? 'Send and close' : 'Send replies'}
            </button>
            {stillOpen.some((id) => !draft.resolved[id] && !resolvedByAncestor(ps, draft, id)) && (
              <button type="button" class="btn ghost" onClick={resolveAll}>
                Resolve all
              </button>
            )}
            <span class="spacer" />
            <DismissButton busy={busy} onDismiss={() => void send({ outcome: 'dismissed' }, resetDraft)} />
          </div>
        </div>
      )}
      {ask.status === 'awaiting_agent' && (
        <div class="submit-bar waiting-bar">
          <p class="turn-note">
            Waiting for the agent to answer. You can still dismiss the briefing.
          </p>
          <div class="actions">
            <span class="spacer" />
            <DismissButton busy={busy} onDismiss={() => void send({ outcome: 'dismissed' }, resetDraft)} />
          </div>
        </div>
      )}
    </div>
  );
}

function cleanDraft(ps: Points, d: BriefingDraft): BriefingDraft {
  const texts: Record<string, string> = {};
  const resolved: Record<string, boolean> = {};
  for (const [id, t] of Object.entries(d.texts ?? {})) if (ps.byId.get(id) && !ps.byId.get(id)!.resolved) texts[id] = t;
  for (const [id, r] of Object.entries(d.resolved ?? {})) if (r && ps.byId.get(id) && !ps.byId.get(id)!.resolved) resolved[id] = true;
  return { texts, resolved };
}

interface PointCtx {
  ps: Points;
  draft: BriefingDraft;
  open: boolean;
  expanded: Set<string>;
  toggleOpen(id: string): void;
  setText(id: string, t: string): void;
  setResolved(id: string, on: boolean): void;
  me: Actor | null;
  askId: string;
}

function PointItem({ id, ctx }: { id: string; ctx: PointCtx }) {
  const st = ctx.ps.byId.get(id);
  if (!st) return null;
  const p = st.point;
  const isOpen = ctx.expanded.has(id);
  const byAncestor = resolvedByAncestor(ctx.ps, ctx.draft, id);
  const willResolve = !!ctx.draft.resolved[id] || !!byAncestor;
  const text = ctx.draft.texts[id] ?? '';
  const editable = ctx.open && !st.resolved && !byAncestor;
  const bodyId = `point-${ctx.askId}-${id}`;
  const state = pointState(st, willResolve, text.trim() !== '');

  return (
    <li class={`point depth-${st.depth} ${st.resolved ? 'resolved' : ''} ${willResolve ? 'will-resolve' : ''}`} data-point={id}>
      <div class="point-row">
        <button
          type="button"
          class="point-toggle"
          aria-expanded={isOpen}
          aria-controls={bodyId}
          onClick={() => ctx.toggleOpen(id)}
        >
          <span class={`chev ${isOpen ? 'open' : ''}`}>
            <ChevronIcon />
          </span>
          <span class="point-id">{id}</span>
          <span class="point-title">{p.title}</span>
        </button>
        {state && <span class={`chip point-state ${state.cls}`}>{state.label}</span>}
        {editable && (
          <button
            type="button"
            class={`resolve-toggle ${ctx.draft.resolved[id] ? 'on' : ''}`}
            aria-pressed={!!ctx.draft.resolved[id]}
            aria-label={`Resolve point ${id}`}
            title={`Resolve point ${id}${st.children.length ? ' and everything beneath it' : ''}`}
            onClick={() => ctx.setResolved(id, !ctx.draft.resolved[id])}
          >
            <CheckIcon size={16} />
            <span class="resolve-label">{ctx.draft.resolved[id] ? 'Resolved' : 'Resolve'}</span>
          </button>
        )}
      </div>
      {isOpen && (
        <div class="point-body" id={bodyId}>
          {p.detail && <Markdown text={p.detail} />}
          <Blocks blocks={p.content} />
          {st.turns.length > 0 && (
            <ol class="point-turns">
              {st.turns.map((t, i) =>
                t.author === 'agent' ? (
                  <li class="turn turn-agent" key={i}>
                    <div class="entry-head">
                      <span class="who agent">Agent</span> answered <Time at={t.at} />
                    </div>
                    <Markdown text={t.answer} />
                    <Blocks blocks={t.content} />
                    {t.subPoints.length > 0 && (
                      <p class="muted small">Broke this point into {t.subPoints.join(', ')}.</p>
                    )}
                  </li>
                ) : (
                  <li class="turn turn-human" key={i}>
                    <div class="entry-head">
                      <span class="who">{actorName(t.by, ctx.me)}</span>
                      {t.text ? ' wrote' : ''}
                      {t.text && t.resolved ? ' and' : ''}
                      {t.resolved ? ' resolved it' : ''} <Time at={t.at} />
                    </div>
                    {t.text && <Words text={t.text} />}
                  </li>
                ),
              )}
            </ol>
          )}
          {editable && (
            <div class="point-reply">
              <label class="field-label" for={`reply-${ctx.askId}-${id}`}>
                Reply on point {id}
              </label>
              <textarea
                id={`reply-${ctx.askId}-${id}`}
                rows={2}
                value={text}
                placeholder="A question, a push-back, a comment…"
                onInput={(e) => ctx.setText(id, (e.target as HTMLTextAreaElement).value)}
              />
            </div>
          )}
          {byAncestor && !st.resolved && <p class="muted small">Resolved with point {byAncestor}.</p>}
        </div>
      )}
      {st.children.length > 0 && (
        <ol class="points sub-points">
          {st.children.map((c) => (
            <PointItem key={c} id={c} ctx={ctx} />
          ))}
        </ol>
      )}
    </li>
  );
}

function pointState(st: PointState, willResolve: boolean, hasText: boolean): { label: string; cls: string } | null {
  if (st.resolved) return { label: 'Resolved', cls: 'st-resolved' };
  if (st.pending) return { label: 'Agent answering', cls: 'st-pending' };
  if (willResolve && hasText) return { label: 'Reply + resolve', cls: 'st-draft' };
  if (hasText) return { label: 'Reply drafted', cls: 'st-draft' };
  const last = st.turns[st.turns.length - 1];
  if (last?.author === 'agent') return { label: 'Agent answered', cls: 'st-answered' };
  return null;
}
