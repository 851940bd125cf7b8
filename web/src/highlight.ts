// Syntax highlighting, loaded after the list. highlight.js and its grammars (hljs.ts) are a chunk
// of their own, about a third of what the first script used to carry; the inbox's list neither
// needs nor waits for them (issue 29: the list interactive within 1 s at 4× CPU). Until they are
// here, code and diffs show as plain escaped text in the same monospaced boxes, so the colours come
// in without moving anything; components that highlight subscribe with useHighlighter() and draw
// again once it has loaded. The service worker keeps the chunk with the rest of the shell
// (vite.config.ts gives it every file of the build), so offline it loads as fast as online.

import { useEffect, useState } from 'preact/hooks';
import { escapeHtml } from './escape';

export { escapeHtml };

type Impl = typeof import('./hljs');

let impl: Impl | null = null;
let loading: Promise<void> | null = null;
const waiting = new Set<() => void>();

/** Loads highlight.js (once); resolves when code is highlighted from then on. */
export function loadHighlighter(): Promise<void> {
  loading ??= import('./hljs').then(
    (m) => {
      impl = m;
      for (const f of waiting) f();
      waiting.clear();
    },
    (err: unknown) => {
      // A failed fetch (offline with no cached shell): plain text stays; a later call tries again.
      loading = null;
      throw err;
    },
  );
  return loading;
}

/** Whether highlight.js has loaded (code is highlighted, not plain). */
export function highlighterReady(): boolean {
  return impl !== null;
}

/**
 * For components that highlight: starts the load and returns whether it is done, drawing the
 * component again when it is.
 */
export function useHighlighter(): boolean {
  const [ready, setReady] = useState(impl !== null);
  useEffect(() => {
    if (impl) {
      if (!ready) setReady(true);
      return;
    }
    const done = () => setReady(true);
    waiting.add(done);
    loadHighlighter().catch(() => {});
    return () => {
      waiting.delete(done);
    };
  }, []);
  return ready;
}

/** The language to highlight with: the one named when known, else guessed from the filename. */
export function languageFor(language?: string, filename?: string): string | null {
  return impl ? impl.languageFor(language, filename) : null;
}

/** Highlighted HTML for code; plain escaped text when no language is known or not loaded yet. */
export function highlight(code: string, language: string | null): string {
  return impl ? impl.highlight(code, language) : escapeHtml(code);
}

/** Highlights a diff's lines one at a time (hljs.ts); plain escaped text until loaded. */
export function highlightLines(lines: readonly string[], language: string | null): string[] {
  return impl ? impl.highlightLines(lines, language) : lines.map(escapeHtml);
}
