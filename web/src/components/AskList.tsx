import { memo } from 'preact/compat';
import { useEffect, useId, useLayoutEffect, useMemo, useRef, useState } from 'preact/hooks';
import { hasDraft } from '../drafts';
import { historyList, openAsks, projectsOf } from '../merge';
import { arrivalsShown } from '../store';
import { filtered, searchScope, type Filters } from '../triage';
import { advanceFrom, getState, loadHistoryPage, navigate, queueDismissAll, requestDetailFocus, setState, setProject, toast, useApp, type AppState } from '../state';
import type { Actor, Ask, AskKind } from '../types';
import { agentOf, askTitle, Countdown, KIND_LABEL, StatusChips, Time, TitleText, useNow, useReadOn } from './common';
import { deadlineOf } from '../deadline';
import { InboxIcon, KindIcon } from './icons';
import { CopyButton } from './Blocks';
import type { MoveFilter } from '../store';
import { isSnoozed, isUnread, type AskMark } from '../marks';
import { snoozeLabel } from './common';
import { ExampleButton, SearchBox, SearchResults, searchQuery, type SearchParams } from './Search';

export type Tab = 'inbox' | 'history';

export function filtersOf(s: AppState): Filters {
  return { project: s.project, kind: s.kindFilter, move: s.moveFilter };
}

/**
 * Everything the list holds for a tab under its filters, held arrivals included. The open asks
 * leave out the person's snoozed ones, which the "Snoozed" filter shows instead (worked out at
 * `now`: a snooze ends by the clock, with nothing to run).
 */
export function listFor(s: AppState, tab: Tab, now = Date.now()): Ask[] {
  const f = filtersOf(s);
  if (tab === 'history') return filtered(historyList(s.live, s.history.pages, s.history.oldest, s.project), { ...f, move: '' });
  const open = filtered(openAsks(s.live, s.project), f);
  const want = f.move === 'snoozed';
  return s.marks.size || want ? open.filter((a) => isSnoozed(s.marks.get(a.id), a, now) === want) : open;
}

/** The list as shown: on the inbox, without the asks waiting behind the "N new" pill. */
export function shownList(s: AppState, tab: Tab, now = Date.now()): Ask[] {
  const all = listFor(s, tab, now);
  return tab === 'inbox' && s.held.size ? all.filter((a) => !s.held.has(a.id)) : all;
}

/** Rows drawn beyond the screen's edges, each way, when the window is drawn again. */
const OVERSCAN = 8;
/**
 * The window is drawn again only once fewer than this many drawn rows are left beyond an edge of
 * the screen: a list scrolled a row at a time (j at the screen's edge) adds and lays out rows once
 * in every few presses, not on every one (docs/benchmarks.md, "Inbox", eighth pass).
 */
const SLACK = 2;
/** A list this long or shorter is drawn whole: windowing pays only on long ones. */
const WHOLE = 60;
/** A row's height before one is measured (styles.css: .ask-row). */
const ROW_H = 62;

/**
 * The list's keyboard cursor, for the shortcuts (j/k) and for the triage flow: the list is
 * windowed, so a row off screen is not in the page to be focused until the list draws it.
 */
export const listCursor: {
  ids: readonly string[];
  /** Draws the row and focuses it (scrolled into view). */
  focus: (id: string) => void;
} = { ids: [], focus: () => {} };

let pendingFocus: string | null = null;

/** Focuses an ask's row once the list has drawn it (after the next render). */
export function focusRow(id: string): void {
  pendingFocus = id;
  listCursor.focus(id);
}

/** The last row picked: a shift-click picks every row between it and the one clicked. */
let anchor: string | null = null;

/** Picks an open ask for a bulk action, or unpicks it; `range` picks (or unpicks) the rows from the last one picked to it. */
export function pick(id: string, range: boolean): void {
  const s = getState();
  const ids = listCursor.ids;
  const next = new Set(s.picked);
  const on = !next.has(id);
  const from = range && anchor ? ids.indexOf(anchor) : -1;
  const to = ids.indexOf(id);
  if (from >= 0 && to >= 0) {
    for (let i = Math.min(from, to); i <= Math.max(from, to); i++) {
      if (on) next.add(ids[i]);
      else next.delete(ids[i]);
    }
  } else if (on) next.add(id);
  else next.delete(id);
  anchor = id;
  setState({ picked: next });
}

/** The open asks picked, as the list shows them (one closed meanwhile, or filtered out, is left out). */
export function pickedAsks(s: AppState): Ask[] {
  return s.picked.size ? shownList(s, 'inbox').filter((a) => s.picked.has(a.id) && a.status !== 'closed') : [];
}

/**
 * Dismisses every ask picked, in one action held for the undo time like any reply (Undo keeps them
 * open); an ask open beside the list among them gives way to the next one.
 */
export function dismissPicked(): void {
  const s = getState();
  const asks = pickedAsks(s);
  if (!asks.length) return;
  if (!s.online || s.conn.status === 'offline') {
    toast('You are offline: nothing can be dismissed until the connection is back.', 'error');
    return;
  }
  const list = shownList(s, 'inbox');
  setState({ picked: new Set() });
  anchor = null;
  void queueDismissAll(asks);
  if (s.route.name === 'ask' && asks.some((a) => a.id === (s.route as { id: string }).id)) advanceFrom(s.route.id, list, focusRow);
}

export function ListPane({ tab }: { tab: Tab }) {
  const s = useApp();
  const now = useNow();
  // Computed again only when what they are made of changes (a key, a move, draws nothing new here).
  const all = useMemo(() => listFor(s, tab, now), [tab, s.live, s.history.pages, s.history.oldest, s.project, s.kindFilter, s.moveFilter, s.marks, now]);
  const items = useMemo(() => (tab === 'inbox' && s.held.size ? all.filter((a) => !s.held.has(a.id)) : all), [all, s.held, tab]);
  const newCount = all.length - items.length;
  const allOpen = openAsks(s.live);
  const open = useMemo(() => (s.marks.size ? allOpen.filter((a) => !isSnoozed(s.marks.get(a.id), a, now)) : allOpen), [allOpen, s.marks, now]);
  const openCount = open.length;
  const snoozedCount = allOpen.length - open.length;
  const yourMove = useMemo(() => open.filter((a) => a.status === 'awaiting_human').length, [open]);
  const unreadCount = useMemo(() => open.filter((a) => isUnread(s.marks.get(a.id), a, now)).length, [open, s.marks, now]);
  const openNote = `${openCount} open: ${yourMove} waiting on you${unreadCount ? `, ${unreadCount} unread` : ''}${snoozedCount ? `, ${snoozedCount} snoozed` : ''}`;
  const known = useMemo(() => projectsOf(s.live, s.history.pages), [s.live, s.history.pages]);
  const projects = s.project && !known.includes(s.project) ? [s.project, ...known] : known;
  const selected = s.route.name === 'ask' ? s.route.id : null;
  const isFiltered = !!(s.project || s.kindFilter || (tab === 'inbox' && s.moveFilter));
  const picked = tab === 'inbox' ? pickedAsks(s) : [];
  const [query, setQuery] = useState(searchQuery.current);
  const typed = query.trim();
  // Searching: what the list shows under its filters (searchScope: with none, every ask), the
  // server's answer a page at a time as the list scrolls, kept to the snoozed asks or the others
  // by the person's own marks, which the server's search does not know. The history under a
  // filter is read from the server the same way (every closed ask, not only the pages read).
  const scope = searchScope(tab, filtersOf(s));
  const server: SearchParams | null = typed
    ? { q: typed, project: s.project, kind: s.kindFilter, state: scope.state }
    : tab === 'history' && (s.project || s.kindFilter)
      ? { q: '', project: s.project, kind: s.kindFilter, state: 'closed' }
      : null;
  const snoozedIds = useMemo(
    () => new Set(scope.snoozed === null ? [] : allOpen.filter((a) => isSnoozed(s.marks.get(a.id), a, now)).map((a) => a.id)),
    [scope.snoozed, allOpen, s.marks, now],
  );
  const keep = scope.snoozed === null ? undefined : (id: string) => snoozedIds.has(id) === scope.snoozed;

  useEffect(() => {
    if (tab === 'history' && s.history.nextBefore === null && !s.history.loading && !s.history.error) void loadHistoryPage();
  }, [tab, s.token]);

  // The end of the history in view: the next page, as the server's filtered history reads on
  // (Search.tsx), so the oldest ask is a scroll away, not a click per page. The button stays for
  // the keyboard, and after a failure.
  const historyEnd = useRef<HTMLDivElement>(null);
  const more = tab === 'history' && !server && !!s.history.nextBefore && !s.history.loading && !s.history.error;
  useReadOn(historyEnd, more, s.history.nextBefore, () => void loadHistoryPage());

  return (
    <div class="list-pane">
      <div class="list-tools">
        <div class="list-tools-row first">
          <nav class="tabs" aria-label="Lists">
            <a
              href="/"
              class={`tab ${tab === 'inbox' ? 'on' : ''}`}
              aria-describedby="open-tab-note"
              title={openNote}
              aria-current={tab === 'inbox' ? 'page' : undefined}
              onClick={(e) => {
                e.preventDefault();
                navigate({ name: 'inbox' });
              }}
            >
              {/* The tab reads "Open N", once, to the eye and to a screen reader; the rest (whose move,
                  how many unread) is its description, and the unread ones a dot on the count. */}
              Open{' '}
              <span class="count">{openCount}</span>
              {unreadCount > 0 && <span class="unread-count" data-unread-count={unreadCount} aria-hidden="true" />}
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
          <span id="open-tab-note" hidden>
            {openNote}
          </span>
          <label class="project-filter">
            <span class="sr-only">Project</span>
            <select value={s.project} title={s.project || undefined} onChange={(e) => setProject((e.target as HTMLSelectElement).value)}>
              <option value="">All projects</option>
              {projects.map((p) => (
                <option value={p} key={p}>
                  {p}
                </option>
              ))}
            </select>
          </label>
        </div>
        <SearchBox
          scope={scope.words}
          value={query}
          onInput={(v) => {
            searchQuery.current = v;
            setQuery(v);
          }}
        />
        <div class="list-tools-row filters">
          <label class="filter">
            <span class="sr-only">Kind</span>
            <select value={s.kindFilter} onChange={(e) => setState({ kindFilter: (e.target as HTMLSelectElement).value as AskKind | '' })}>
              <option value="">All kinds</option>
              {(Object.keys(KIND_LABEL) as AskKind[]).map((k) => (
                <option value={k} key={k}>
                  {KIND_LABEL[k]}s
                </option>
              ))}
            </select>
          </label>
          {tab === 'inbox' && (
            <label class="filter">
              <span class="sr-only">Whose move</span>
              <select value={s.moveFilter} onChange={(e) => setState({ moveFilter: (e.target as HTMLSelectElement).value as MoveFilter })}>
                <option value="">Anyone's move</option>
                <option value="yours">Your move</option>
                <option value="agents">Agent's move</option>
                <option value="snoozed">Snoozed{snoozedCount ? ` (${snoozedCount})` : ''}</option>
              </select>
            </label>
          )}
          {isFiltered && !server && (
            <span class="filter-note muted small" data-filter-note>
              {items.length} shown
            </span>
          )}
        </div>
        {picked.length > 0 && (
          <div class="bulk-bar" role="group" aria-label="Picked asks" data-bulk-bar>
            <span class="bulk-count" role="status">
              {picked.length} picked
            </span>
            <span class="spacer" />
            <button type="button" class="btn small danger" data-bulk-dismiss onClick={() => dismissPicked()} title="Dismiss the picked asks (e)">
              Dismiss {picked.length}
            </button>
            <button type="button" class="btn small ghost" onClick={() => setState({ picked: new Set() })}>
              Clear
            </button>
          </div>
        )}
        {/* Above the list, never in it: arrivals do not push the rows down under the thumb. */}
        {newCount > 0 && (
          <button type="button" class="new-pill" data-new-pill onClick={() => setState(arrivalsShown)}>
            {newCount} new
          </button>
        )}
      </div>

      {server ? (
        <SearchResults params={server} label={typed ? 'Search results' : 'Closed asks'} scope={typed ? scope.words : null} keep={typed ? keep : undefined} />
      ) : !s.liveReady && tab === 'inbox' ? (
        <div class="list-empty muted">Connecting…</div>
      ) : items.length === 0 && newCount === 0 ? (
        <EmptyList tab={tab} filtered={isFiltered} />
      ) : (
        <WindowedList
          items={items}
          selected={selected}
          me={s.whoami?.actor ?? null}
          now={now}
          pending={s.pending ? (s.pending.ids ?? [s.pending.askId]) : null}
          marks={tab === 'inbox' ? s.marks : null}
          picked={tab === 'inbox' ? s.picked : null}
          known={s.online && s.conn.status === 'live'}
          label={tab === 'history' ? 'Closed asks' : 'Open asks'}
        />
      )}

      {tab === 'history' && !server && (
        <div class="list-more" ref={historyEnd}>
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

/**
 * The rows on screen and a few beyond, in a list as tall as all of them (padding stands in for the
 * rest): a list of 500 asks draws some 30 rows. Every row is as tall as the first one measured.
 */
function WindowedList({
  items,
  selected,
  me,
  now,
  pending,
  picked,
  marks,
  known,
  label,
}: {
  items: Ask[];
  selected: string | null;
  me: Actor | null;
  now: number;
  /** The asks whose reply is held for undo. */
  pending: readonly string[] | null;
  /** The asks picked for a bulk action; null where nothing is picked from (the history). */
  picked: ReadonlySet<string> | null;
  /** The person's marks (unread, snoozed); null where the list shows closed asks. */
  marks: ReadonlyMap<string, AskMark> | null;
  known: boolean;
  label: string;
}) {
  const ref = useRef<HTMLUListElement>(null);
  const rowH = useRef(ROW_H);
  const count = items.length;
  // The first draw guesses the window from the screen's height (the list starts near the top), so
  // a long list draws a screenful of rows, not WHOLE, and nothing is measured before it is painted.
  const [range, setRange] = useState<[number, number]>(() => [0, count <= WHOLE ? count : Math.min(count, Math.ceil(window.innerHeight / ROW_H) + OVERSCAN)]);
  /**
   * The row that has the focus, or was last asked for (j/k, the triage flow) and is about to: it is
   * drawn even when just beyond the window, so the focus is never dropped with it. Kept from the
   * focus itself, not from the request alone, so a row the focus has left is not held drawn.
   */
  const focused = useRef<string | null>(null);
  const [, redraw] = useState(0);

  /** The rows drawn in the last render, [start, end). */
  const drawn = useRef<[number, number]>([0, 0]);

  /** The rows on the screen, [from, to); null before the list is in the page. */
  const onScreen = (): [number, number] | null => {
    const el = ref.current;
    if (!el) return null;
    const first = el.querySelector<HTMLElement>('li');
    if (first && first.offsetHeight > 0) rowH.current = first.offsetHeight;
    const h = rowH.current;
    const top = -el.getBoundingClientRect().top;
    return [Math.max(0, Math.floor(top / h)), Math.min(count, Math.ceil((top + window.innerHeight) / h))];
  };

  /** Draws the window again if the rows on the screen (`shown`, read now if not given) need it. */
  const measure = (shown = onScreen()) => {
    if (!shown) return;
    const [from, to] = shown;
    setRange((r) => {
      if (count <= WHOLE) return r[0] === 0 && r[1] === count ? r : [0, count];
      if (r[0] <= Math.max(0, from - SLACK) && Math.min(r[1], count) >= Math.min(count, to + SLACK)) return r;
      const start = Math.max(0, from - OVERSCAN);
      return [start, Math.min(count, Math.max(start, to + OVERSCAN))];
    });
  };

  useLayoutEffect(() => {
    // Measured on the frame after this draw, not in it: reading the layout here would force the
    // whole page's style and layout before its first paint (docs/benchmarks.md, "Inbox").
    const frame = requestAnimationFrame(() => measure());
    // While every row on the screen is drawn, the window is topped up after the scroll's frame
    // is painted, so a key that scrolls the list (j at its edge) paints its focus first; a row on
    // the screen not drawn yet (a fling) is drawn before that frame.
    let later: ReturnType<typeof setTimeout> | undefined;
    const onScroll = () => {
      const shown = onScreen();
      if (shown && drawn.current[0] <= shown[0] && drawn.current[1] >= shown[1]) later ??= setTimeout(() => ((later = undefined), measure()));
      else measure(shown);
    };
    document.addEventListener('scroll', onScroll, { capture: true, passive: true });
    window.addEventListener('resize', onScroll);
    return () => {
      cancelAnimationFrame(frame);
      clearTimeout(later);
      document.removeEventListener('scroll', onScroll, { capture: true });
      window.removeEventListener('resize', onScroll);
    };
  }, [count]);

  listCursor.ids = useMemo(() => items.map((a) => a.id), [items]);
  /** Focuses the row of an ask if the list has drawn it, scrolled into view; false if it has not. */
  const focusDrawn = (id: string): boolean => {
    const row = ref.current?.querySelector<HTMLElement>(`[data-ask-row="${CSS.escape(id)}"]`);
    if (!row) return false;
    if (pendingFocus === id) pendingFocus = null;
    row.focus({ preventScroll: true });
    row.scrollIntoView({ block: 'nearest' });
    return true;
  };
  // A row already drawn takes the focus at once, with nothing drawn again: j's frame is then the
  // focus alone (docs/benchmarks.md, "Inbox", seventh pass). One beyond the window is drawn first.
  listCursor.focus = (id: string) => {
    focused.current = id;
    if (!focusDrawn(id)) redraw((n) => n + 1);
  };

  let [start, end] = range;
  const want = focused.current;
  const fi = want ? items.findIndex((a) => a.id === want) : -1;
  if (fi >= 0 && fi >= start - 50 && fi < end + 50) {
    start = Math.min(start, fi);
    end = Math.max(end, fi + 1);
  }
  start = Math.min(start, count);
  end = Math.min(Math.max(end, start), count);
  drawn.current = [start, end];

  useLayoutEffect(() => {
    const id = pendingFocus;
    if (!id) return;
    if (!items.some((a) => a.id === id)) {
      pendingFocus = null; // not in this list (filtered out, or gone)
      return;
    }
    focusDrawn(id);
  });

  const h = rowH.current;
  return (
    <ul
      class="ask-list"
      aria-label={label}
      ref={ref}
      onFocusIn={(e) => {
        const id = (e.target as HTMLElement).closest<HTMLElement>('[data-ask-row]')?.dataset.askRow;
        if (id) focused.current = id;
      }}
      style={{ paddingTop: `${start * h}px`, paddingBottom: `${(count - end) * h}px` }}
    >
      {items.slice(start, end).map((a, i) => (
        <AskRow
          key={a.id}
          ask={a}
          selected={a.id === selected}
          me={me}
          now={now}
          sending={!!pending?.includes(a.id)}
          picked={picked ? picked.has(a.id) : null}
          unread={!!marks && isUnread(marks.get(a.id), a, now)}
          snoozedUntil={marks ? snoozeLabel(marks.get(a.id), a, now) : null}
          known={known}
          pos={start + i + 1}
          size={count}
        />
      ))}
    </ul>
  );
}

function EmptyList({ tab, filtered }: { tab: Tab; filtered: boolean }) {
  return (
    <div class="list-empty">
      <InboxIcon />
      {tab === 'inbox' ? (
        <>
          <p class="strong">{filtered ? 'Nothing open under these filters.' : 'Nothing waiting on you.'}</p>
          <p class="muted small">New asks from your agents appear here the moment they are made.</p>
          {!filtered && <ExampleButton />}
          {!filtered && <AgentSetup />}
        </>
      ) : (
        <p class="strong">{filtered ? 'No closed asks under these filters yet.' : 'No closed asks yet.'}</p>
      )}
    </div>
  );
}

interface RowProps {
  ask: Ask;
  selected: boolean;
  me: Actor | null;
  /** The minute the ages are told from: a new one redraws the row. */
  now: number;
  /** Its reply is held, waiting out the undo time. */
  sending: boolean;
  /** Whether it is picked for a bulk action; null where rows are not picked (closed asks). */
  picked: boolean | null;
  /** Not opened by the person since it came or changed. */
  unread: boolean;
  /** While snoozed: until when, in words. */
  snoozedUntil: string | null;
  /** Whether the page hears the server now (else whether an agent waits is not known). */
  known: boolean;
  pos: number;
  size: number;
}

/** One ask in the list, redrawn only when one of its props changes (the list redraws often). */
const AskRow = memo(function AskRow({ ask, selected, me, sending, picked, unread, snoozedUntil, known, pos, size }: RowProps) {
  const draft = ask.status !== 'closed' && hasDraft(ask.id);
  // Only a teammate's agent is named in the list: most asks are the person's own, and saying so on
  // every row would be noise.
  const by = ask.raisedBy && ask.raisedBy.id !== me?.id ? agentOf(ask.raisedBy, me) : null;
  return (
    <li aria-setsize={size} aria-posinset={pos} class={picked === null ? undefined : `pickable ${picked ? 'is-picked' : ''}`}>
      {picked !== null && ask.status !== 'closed' && (
        <label class="row-pick" title="Pick for a bulk dismiss (x; shift-click picks a range)">
          <input
            type="checkbox"
            checked={picked}
            data-pick={ask.id}
            onClick={(e) => pick(ask.id, e.shiftKey)}
            aria-label={`Pick «${askTitle(ask, 80)}»`}
          />
        </label>
      )}
      <a
        href={'/asks/' + encodeURIComponent(ask.id)}
        class={`ask-row kind-${ask.kind} status-${ask.status} ${selected ? 'selected' : ''} ${unread ? 'unread' : ''}`}
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
          <span class={`kind-badge kind-${ask.kind}`} title={KIND_LABEL[ask.kind]}>
            <KindIcon kind={ask.kind} />
            <span class="sr-only">{KIND_LABEL[ask.kind]}</span>
          </span>
          {unread && (
            <span class="unread-dot" data-unread title="Unread">
              <span class="sr-only">Unread</span>
            </span>
          )}
          {ask.kind === 'approval' ? (
            <span class="row-title row-command" title={ask.prompt.title}>
              <span class="row-tool">{ask.prompt.tool}</span>
              <code>
                <TitleText ask={ask} max={160} />
              </code>
            </span>
          ) : (
            <span class="row-title">
              <TitleText ask={ask} max={160} />
            </span>
          )}
          <Time at={ask.status === 'closed' ? (ask.closedAt ?? ask.updatedAt) : ask.createdAt} />
        </span>
        <span class="row-bottom">
          {ask.project && <span class="project-tag">{ask.project}</span>}
          {snoozedUntil && <span class="chip chip-snoozed">{snoozedUntil}</span>}
          <StatusChips ask={ask} compact known={known} />
          {ask.status !== 'closed' && deadlineOf(ask) && <Countdown at={deadlineOf(ask)!.at} compact />}
          {sending && <span class="chip chip-sending">Sending…</span>}
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
});

/**
 * How to connect an agent, on the empty inbox: the lines `loopback serve` prints, for this address.
 * The page never holds an agent's token (it is the person's inbox), so the lines name where it goes:
 * the one `loopback serve` printed, or a new one from `loopback token create`.
 */
export function AgentSetup() {
  const mcp = location.origin + '/mcp';
  const lines: { label: string; text: string }[] = [
    { label: 'An agent token for this machine (or use the one loopback serve printed)', text: 'loopback token create --name my-laptop' },
    { label: 'Claude Code', text: `claude mcp add --transport http loopback ${mcp} --header "Authorization: Bearer AGENT_TOKEN"` },
    { label: 'Cursor (~/.cursor/mcp.json, under "mcpServers")', text: `"loopback": {"url": "${mcp}", "headers": {"Authorization": "Bearer AGENT_TOKEN"}}` },
    { label: 'VS Code (.vscode/mcp.json, under "servers")', text: `"loopback": {"type": "http", "url": "${mcp}", "headers": {"Authorization": "Bearer AGENT_TOKEN"}}` },
  ];
  const titleId = useId();
  return (
    <section class="setup" aria-labelledby={titleId}>
      <h2 class="section-title" id={titleId}>
        Connect an agent
      </h2>
      <p class="muted small">
        Put an agent token where it says AGENT_TOKEN: it can ask you, never answer for you. Your own sign-in link never
        goes to an agent.
      </p>
      {lines.map((l) => (
        <div key={l.label}>
          <p class="small">{l.label}</p>
          <div class="setup-line">
            <pre data-setup-line>{l.text}</pre>
            <CopyButton text={l.text} label={`Copy the ${l.label.split(' (')[0]} line`} />
          </div>
        </div>
      ))}
    </section>
  );
}
