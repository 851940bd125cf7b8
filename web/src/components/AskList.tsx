import { useEffect } from 'preact/hooks';
import { hasDraft } from '../drafts';
import { historyList, openAsks, projectsOf } from '../merge';
import { loadHistoryPage, navigate, requestDetailFocus, setProject, useApp, type AppState } from '../state';
import type { Actor, Ask } from '../types';
import { agentOf, askTitle, Countdown, KIND_LABEL, StatusChips, Time, useNow } from './common';
import { deadlineOf } from '../deadline';
import { InboxIcon, KindIcon } from './icons';

export type Tab = 'inbox' | 'history';

export function listFor(s: AppState, tab: Tab): Ask[] {
  return tab === 'history'
    ? historyList(s.live, s.history.pages, s.history.oldest, s.project)
    : openAsks(s.live, s.project);
}

export function ListPane({ tab }: { tab: Tab }) {
  const s = useApp();
  useNow();
  const items = listFor(s, tab);
  const openCount = openAsks(s.live).length;
  const yourMove = openAsks(s.live).filter((a) => a.status === 'awaiting_human').length;
  const projects = projectsOf(s.live, s.history.pages);
  if (s.project && !projects.includes(s.project)) projects.unshift(s.project);
  const selected = s.route.name === 'ask' ? s.route.id : null;

  useEffect(() => {
    if (tab === 'history' && s.history.nextBefore === null && !s.history.loading && !s.history.error) void loadHistoryPage();
  }, [tab, s.token]);

  return (
    <div class="list-pane">
      <div class="list-tools">
        <nav class="tabs" aria-label="Lists">
          <a
            href="/"
            class={`tab ${tab === 'inbox' ? 'on' : ''}`}
            aria-current={tab === 'inbox' ? 'page' : undefined}
            onClick={(e) => {
              e.preventDefault();
              navigate({ name: 'inbox' });
            }}
          >
            Open <span class="count" aria-label={`${openCount} open, ${yourMove} waiting on you`}>{openCount}</span>
          </a>
          <a
            href="/history"
            class={`tab ${tab === 'history' ? 'on' : ''}`}
            aria-current={tab === 'history' ? 'page' : undefined}
            onClick={(e) => {
              e.preventDefault();
              navigate({ name: 'history' });
            }}
          >
            History
          </a>
        </nav>
        <label class="project-filter">
          <span class="sr-only">Project</span>
          <select value={s.project} onChange={(e) => setProject((e.target as HTMLSelectElement).value)}>
            <option value="">All projects</option>
            {projects.map((p) => (
              <option value={p} key={p}>
                {p}
              </option>
            ))}
          </select>
        </label>
      </div>

      {!s.liveReady && tab === 'inbox' ? (
        <div class="list-empty muted">Connecting…</div>
      ) : items.length === 0 ? (
        <EmptyList tab={tab} filtered={!!s.project} />
      ) : (
        <ul class="ask-list" aria-label={tab === 'history' ? 'Closed asks' : 'Open asks'}>
          {items.map((a) => (
            <AskRow key={a.id} ask={a} selected={a.id === selected} me={s.whoami?.actor ?? null} />
          ))}
        </ul>
      )}

      {tab === 'history' && (
        <div class="list-more">
          {s.history.error && <p class="error-text">{s.history.error}</p>}
          {s.history.nextBefore !== undefined ? (
            <button type="button" class="btn ghost wide" disabled={s.history.loading} onClick={() => void loadHistoryPage()}>
              {s.history.loading ? 'Loading…' : s.history.nextBefore === null ? 'Load history' : 'Load older'}
            </button>
          ) : (
            items.length > 0 && <p class="muted small center">That is everything.</p>
          )}
        </div>
      )}
    </div>
  );
}

function EmptyList({ tab, filtered }: { tab: Tab; filtered: boolean }) {
  return (
    <div class="list-empty">
      <InboxIcon />
      {tab === 'inbox' ? (
        <>
          <p class="strong">{filtered ? 'Nothing open in this project.' : 'Nothing waiting on you.'}</p>
          <p class="muted small">New asks from your agents appear here the moment they are made.</p>
        </>
      ) : (
        <p class="strong">{filtered ? 'No closed asks in this project yet.' : 'No closed asks yet.'}</p>
      )}
    </div>
  );
}

function AskRow({ ask, selected, me }: { ask: Ask; selected: boolean; me: Actor | null }) {
  const draft = ask.status !== 'closed' && hasDraft(ask.id);
  // Only a teammate's agent is named in the list: most asks are the person's own, and saying so on
  // every row would be noise.
  const by = ask.raisedBy && ask.raisedBy.id !== me?.id ? agentOf(ask.raisedBy, me) : null;
  return (
    <li>
      <a
        href={'/asks/' + encodeURIComponent(ask.id)}
        class={`ask-row kind-${ask.kind} status-${ask.status} ${selected ? 'selected' : ''}`}
        aria-current={selected ? 'true' : undefined}
        data-ask-row={ask.id}
        onClick={(e) => {
          if (e.button !== 0 || e.metaKey || e.ctrlKey || e.shiftKey || e.altKey) return;
          e.preventDefault();
          // Opened from the keyboard (Enter): take the focus to the ask itself.
          if (e.detail === 0) {
            if (selected) document.querySelector<HTMLElement>('.ask-view .ask-title')?.focus();
            else requestDetailFocus();
          }
          navigate({ name: 'ask', id: ask.id });
        }}
      >
        <span class="row-top">
          <span class={`kind-badge kind-${ask.kind}`}>
            <KindIcon kind={ask.kind} />
            {KIND_LABEL[ask.kind]}
          </span>
          {ask.project && <span class="project-tag">{ask.project}</span>}
          <span class="spacer" />
          <Time at={ask.status === 'closed' ? (ask.closedAt ?? ask.updatedAt) : ask.createdAt} />
        </span>
        {ask.kind === 'approval' ? (
          <span class="row-title row-command" title={ask.prompt.title}>
            <span class="row-tool">{ask.prompt.tool}</span>
            <code>{askTitle(ask, 160)}</code>
          </span>
        ) : (
          <span class="row-title">{askTitle(ask, 160)}</span>
        )}
        <span class="row-bottom">
          <StatusChips ask={ask} compact />
          {ask.status !== 'closed' && deadlineOf(ask) && <Countdown at={deadlineOf(ask)!.at} compact />}
          {draft && <span class="chip chip-draft">Draft</span>}
          {(by || ask.client) && (
            <span class="row-source">
              {by && <span class="row-by">{by}</span>}
              {ask.client && <span class="row-client">{ask.client}</span>}
            </span>
          )}
        </span>
      </a>
    </li>
  );
}
