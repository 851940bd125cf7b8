// Search (contract revision 6): every ask of the space, open and closed, found on the server by
// its words (GET /api/v1/search), and the history under filters, read from the server a page at a
// time as the list scrolls. The highlight is text the server cut from what an agent wrote: shown
// as text, its matched words in <mark>, never as markup.

import { useEffect, useRef, useState } from 'preact/hooks';
import { ApiError } from '../api';
import { searchAsks, sendExample, type AskSummary as Summary, type SearchState } from '../search';
import { navigate, requestDetailFocus, useApp } from '../state';
import type { AskKind } from '../types';
import { KIND_LABEL, Time, useReadOn } from './common';
import { KindIcon } from './icons';

/** How long typing must pause before the server is asked. */
export const SEARCH_DEBOUNCE_MS = 250;
/** Results a page: a history page is long, so reaching the oldest takes few requests. */
const PAGE = 50;

export interface SearchParams {
  q: string;
  project: string;
  kind: AskKind | '';
  state: SearchState | '';
}

/** The query typed last, kept while the list pane comes and goes (a phone shows one pane). */
export const searchQuery = { current: '' };

/** The search box: `/` focuses it (shortcuts.ts); Esc empties it. */
export function SearchBox({ value, scope, onInput }: { value: string; scope: string; onInput: (q: string) => void }) {
  return (
    <div class="search-box" role="search">
      <label class="sr-only" for="search-input">
        Search {scope}
      </label>
      <input
        id="search-input"
        data-search
        type="search"
        placeholder={`Search ${scope}  /`}
        autocomplete="off"
        maxLength={200}
        value={value}
        onInput={(e) => onInput((e.target as HTMLInputElement).value)}
        onKeyDown={(e) => {
          if (e.key === 'Escape' && value) {
            e.preventDefault();
            e.stopPropagation();
            onInput('');
          }
        }}
      />
    </div>
  );
}

const STATUS_LABEL: Record<Summary['status'], string> = {
  awaiting_human: 'Your move',
  awaiting_agent: "Agent's move",
  closed: 'Closed',
};

/**
 * The server's results for params, newest first, more read as the end of the list comes into
 * view (and by a button, for keyboards and where the observer is not). Typing is debounced.
 */
export function SearchResults({
  params,
  label,
  scope = null,
  keep,
}: {
  params: SearchParams;
  label: string;
  /** What is searched, in words (triage.ts searchScope), said above the results; null: nothing said. */
  scope?: string | null;
  /** Which of the server's results the list keeps (by the person's marks); undefined: all. */
  keep?: (id: string) => boolean;
}) {
  const s = useApp();
  const [all, setItems] = useState<Summary[]>([]);
  const items = keep ? all.filter((a) => keep(a.id)) : all;
  const [next, setNext] = useState<string | undefined>(undefined);
  const [loading, setLoading] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const [done, setDone] = useState(false);
  const gen = useRef(0);
  const key = JSON.stringify(params);
  const sentinel = useRef<HTMLDivElement>(null);

  const load = async (cursor: string | undefined, g: number) => {
    setLoading(true);
    setError(null);
    try {
      const page = await searchAsks({
        q: params.q || undefined,
        project: params.project || undefined,
        kind: params.kind || undefined,
        state: params.state || undefined,
        cursor,
        limit: PAGE,
      });
      if (g !== gen.current) return;
      setItems((old) => (cursor ? [...old, ...page.items] : page.items));
      setNext(page.next);
      setDone(!page.next);
    } catch (err) {
      if (g !== gen.current) return;
      setError(err instanceof ApiError ? err.message : 'Could not reach Loopback.');
    } finally {
      if (g === gen.current) setLoading(false);
    }
  };

  // A new query: start again, after a pause in the typing.
  useEffect(() => {
    const g = ++gen.current;
    setItems([]);
    setNext(undefined);
    setDone(false);
    if (!s.online) return;
    setLoading(true);
    const t = setTimeout(() => void load(undefined, g), params.q ? SEARCH_DEBOUNCE_MS : 0);
    return () => clearTimeout(t);
  }, [key, s.online]);

  // The end of the list in view: the next page.
  useReadOn(sentinel, !!next && !loading, next, () => void load(next, gen.current));

  // Kept to the person's snoozed asks (or the others), a page may keep few: read on while so.
  useEffect(() => {
    if (keep && next && !loading && !error && items.length < PAGE / 2) void load(next, gen.current);
  }, [next, loading, items.length]);

  const selected = s.route.name === 'ask' ? s.route.id : null;
  if (!s.online) {
    return (
      <div class="list-empty" data-search-offline>
        <p class="strong">Search needs a connection.</p>
        <p class="muted small">This device is offline: the server holds every ask's text. Search works again once you are back online.</p>
      </div>
    );
  }
  return (
    <div class="search-results" data-search-results>
      {scope && (
        <p class="search-scope muted small" data-search-scope>
          Searching {scope}
        </p>
      )}
      <p class="sr-only" role="status" aria-live="polite">
        {loading ? 'Searching…' : `${items.length}${next ? ' or more' : ''} ${items.length === 1 ? 'ask' : 'asks'} found`}
      </p>
      {items.length === 0 && !loading && !error && !next ? (
        <div class="list-empty">
          <p class="strong">{params.q ? `Nothing matches “${params.q}”.` : 'No asks under these filters.'}</p>
          <p class="muted small">{params.q ? 'Every word is matched as the start of a word, in titles, prompts and replies.' : 'Change the filters above.'}</p>
        </div>
      ) : (
        <ul class="ask-list search-list" aria-label={label}>
          {items.map((a, i) => (
            <li key={a.id} aria-setsize={done ? items.length : -1} aria-posinset={i + 1}>
              <a
                href={'/asks/' + encodeURIComponent(a.id)}
                class={`ask-row search-hit kind-${a.kind} status-${a.status} ${a.id === selected ? 'selected' : ''}`}
                aria-current={a.id === selected ? 'true' : undefined}
                data-ask-row={a.id}
                data-search-hit={a.id}
                onClick={(e) => {
                  if (e.button !== 0 || e.metaKey || e.ctrlKey || e.shiftKey || e.altKey) return;
                  e.preventDefault();
                  if (e.detail === 0) requestDetailFocus();
                  navigate({ name: 'ask', id: a.id });
                }}
              >
                <span class="row-top">
                  <span class={`kind-badge kind-${a.kind}`} title={KIND_LABEL[a.kind]}>
                    <KindIcon kind={a.kind} />
                    <span class="sr-only">{KIND_LABEL[a.kind]}</span>
                  </span>
                  <span class="row-title">{a.title || KIND_LABEL[a.kind]}</span>
                  <Time at={a.closedAt ?? a.createdAt} />
                </span>
                {a.highlight.length > 0 && (
                  <span class="hit-text" data-highlight>
                    {a.highlight.map((f, j) => (f.match ? <mark key={j}>{f.text}</mark> : f.text))}
                  </span>
                )}
                <span class="row-bottom">
                  {a.project && <span class="project-tag">{a.project}</span>}
                  <span class={`chip chip-${a.status}`}>{STATUS_LABEL[a.status]}</span>
                </span>
              </a>
            </li>
          ))}
        </ul>
      )}
      <div class="list-more" ref={sentinel}>
        {error && (
          <p class="error-text" role="alert">
            {error}
          </p>
        )}
        {loading ? (
          <p class="muted small center">Searching…</p>
        ) : next ? (
          <button type="button" class="btn ghost wide" onClick={() => void load(next, gen.current)}>
            Load more
          </button>
        ) : (
          items.length > 0 && <p class="muted small center">That is everything.</p>
        )}
      </div>
    </div>
  );
}

/** "Send me a test ask": an example question in the person's own space, opened at once. */
export function ExampleButton() {
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(null);
  return (
    <div class="example-ask">
      <button
        type="button"
        class="btn"
        data-example-ask
        disabled={busy}
        onClick={async () => {
          setBusy(true);
          setError(null);
          try {
            const a = await sendExample();
            navigate({ name: 'ask', id: a.id });
          } catch (err) {
            setError(err instanceof ApiError ? err.message : 'Could not reach Loopback.');
          } finally {
            setBusy(false);
          }
        }}
      >
        {busy ? 'Sending…' : 'Send me a test ask'}
      </button>
      <p class="muted small">See an ask arrive and answer it before any agent is connected. Nobody waits on it; answering it only closes it.</p>
      {error && (
        <p class="error-text" role="alert">
          {error}
        </p>
      )}
    </div>
  );
}
