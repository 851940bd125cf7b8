// What agents show: markdown, highlighted code, diffs and uploaded images, in order.

import { Fragment } from 'preact';
import { useEffect, useLayoutEffect, useMemo, useRef, useState } from 'preact/hooks';
import { parseUnifiedDiff, languageName, type DiffFile } from '../diff';
import { fileUrl, hydrateImages } from '../files';
import { highlight, highlightLines, languageFor, useHighlighter } from '../highlight';
import { renderMarkdown } from '../markdown';
import type { Block, CodeBlock, DiffBlock, ImageBlock } from '../types';
import { CheckIcon, ChevronIcon, CopyIcon, FileIcon } from './icons';
import { focusDraft, lineKey, LineCommentRow, useLineComments } from './LineComments';
import type { LineSide } from '../revision7';

/** Whether markdown may hold a code block (fenced or indented), which highlighting changes. */
const MAY_HAVE_CODE = /```|~~~|^(?: {4}|\t)\S/m;

/**
 * Sanitised markdown (see markdown.ts). The element's children are set here, never by Preact. Its
 * code blocks are plain until highlight.js has loaded (highlight.ts), then drawn again, coloured.
 */
export function Markdown({ text, class: cls }: { text: string; class?: string }) {
  const ref = useRef<HTMLDivElement>(null);
  const hl = useHighlighter();
  const again = MAY_HAVE_CODE.test(text) && hl;
  useLayoutEffect(() => {
    const el = ref.current;
    if (!el) return;
    el.replaceChildren(renderMarkdown(text));
    hydrateImages(el);
  }, [text, again]);
  return <div class={cls ? `md ${cls}` : 'md'} ref={ref} />;
}

export function Blocks({ blocks }: { blocks?: readonly Block[] }) {
  if (!blocks?.length) return null;
  return (
    <div class="blocks">
      {blocks.map((b, i) => (
        <BlockView key={i} block={b} />
      ))}
    </div>
  );
}

export function BlockView({ block }: { block: Block }) {
  switch (block.type) {
    case 'markdown':
      return <Markdown text={block.text} class="block block-markdown" />;
    case 'code':
      return <CodeView block={block} />;
    case 'diff':
      return <DiffView block={block} />;
    case 'image':
      return <ImageView block={block} />;
    default:
      return <p class="block muted">(a block of a kind this inbox does not know)</p>;
  }
}

export function CopyButton({ text, label }: { text: string; label: string }) {
  const [done, setDone] = useState(false);
  if (!navigator.clipboard) return null;
  return (
    <button
      type="button"
      class="icon-btn small"
      aria-label={label}
      title={label}
      onClick={() => {
        navigator.clipboard.writeText(text).then(() => {
          setDone(true);
          setTimeout(() => setDone(false), 1500);
        }, () => {});
      }}
    >
      {done ? <CheckIcon size={15} /> : <CopyIcon />}
    </button>
  );
}

/** Code longer than this is folded to its first FOLD_SHOW lines until the person opens it. */
const FOLD_OVER = 40;
const FOLD_SHOW = 24;
/** A diff file longer than this (in lines) shows its first DIFF_SHOW lines until opened. */
const DIFF_FOLD_OVER = 150;
const DIFF_SHOW = 80;

export function CodeView({ block }: { block: CodeBlock }) {
  const hl = useHighlighter();
  const lang = languageFor(block.language, block.filename);
  const code = block.code.replace(/\n$/, '');
  const lines = code.split('\n').length;
  const [open, setOpen] = useState(lines <= FOLD_OVER);
  const shown = open ? code : code.split('\n').slice(0, FOLD_SHOW).join('\n');
  // highlight.js escapes the code; its output is only text and <span class="hljs-…">.
  const html = useMemo(() => highlight(shown, lang), [shown, lang, hl]);
  return (
    <figure class="block code-block">
      <figcaption class="block-head">
        <FileIcon />
        <span class="file-name">{block.filename ?? 'Code'}</span>
        {(block.language || lang) && <span class="lang-tag">{block.language || lang}</span>}
        <span class="spacer" />
        <CopyButton text={block.code} label="Copy code" />
      </figcaption>
      <pre class="code-scroll" tabIndex={0}>
        <code class={`hljs${lang ? ` language-${lang}` : ''}`} dangerouslySetInnerHTML={{ __html: html }} />
      </pre>
      {lines > FOLD_OVER && (
        <button type="button" class="fold-btn" aria-expanded={open} onClick={() => setOpen(!open)}>
          {open ? 'Fold' : `Show all ${lines} lines`}
        </button>
      )}
    </figure>
  );
}

function narrow(): boolean {
  return typeof matchMedia !== 'undefined' && matchMedia('(max-width: 720px)').matches;
}

export function DiffView({ block }: { block: DiffBlock }) {
  const files = useMemo(() => parseUnifiedDiff(block.diff, block.filename), [block.diff, block.filename]);
  // Long lines wrap on a phone from the start; on a wide screen they scroll, and either can change.
  const [wrap, setWrap] = useState(narrow);
  const [collapsed, setCollapsed] = useState<ReadonlySet<number>>(() => new Set());
  const root = useRef<HTMLDivElement>(null);
  if (!files.some((f) => f.hunks.length)) {
    // Not something parse-diff understands: show it as text, coloured as a diff.
    return <CodeView block={{ type: 'code', code: block.diff, language: 'diff', filename: block.filename }} />;
  }
  const toggle = (i: number) => {
    const next = new Set(collapsed);
    if (next.has(i)) next.delete(i);
    else next.add(i);
    setCollapsed(next);
  };
  const added = files.reduce((n, f) => n + f.additions, 0);
  const removed = files.reduce((n, f) => n + f.deletions, 0);
  return (
    <div class={`block diff-block ${wrap ? 'wrap' : ''}`} ref={root}>
      <div class="diff-tools">
        <span class="diff-summary">
          {files.length} {files.length === 1 ? 'file' : 'files'}{' '}
          <span class="diff-stat" aria-label={`${added} added, ${removed} removed`}>
            <span class="plus">+{added}</span> <span class="minus">−{removed}</span>
          </span>
        </span>
        <span class="spacer" />
        <button type="button" class="btn small ghost" aria-pressed={wrap} onClick={() => setWrap(!wrap)}>
          Wrap lines
        </button>
        {files.length > 1 && (
          <button
            type="button"
            class="btn small ghost"
            onClick={() => setCollapsed(collapsed.size === files.length ? new Set() : new Set(files.map((_, i) => i)))}
          >
            {collapsed.size === files.length ? 'Expand all' : 'Collapse all'}
          </button>
        )}
      </div>
      {files.length > 1 && (
        <nav class="diff-files" aria-label="Files in this diff">
          <ol>
            {files.map((f, i) => (
              <li key={i}>
                <button
                  type="button"
                  class="diff-file-link"
                  onClick={() => {
                    if (collapsed.has(i)) toggle(i);
                    requestAnimationFrame(() =>
                      root.current?.querySelector<HTMLElement>(`[data-diff-file="${i}"] .diff-file-toggle`)?.focus(),
                    );
                    root.current?.querySelector<HTMLElement>(`[data-diff-file="${i}"]`)?.scrollIntoView({ block: 'start' });
                  }}
                >
                  <span class="file-name">{f.name}</span>
                  <span class="diff-stat" aria-label={`${f.additions} added, ${f.deletions} removed`}>
                    <span class="plus">+{f.additions}</span> <span class="minus">−{f.deletions}</span>
                  </span>
                </button>
              </li>
            ))}
          </ol>
        </nav>
      )}
      {files.map((f, i) => (
        <DiffFileView key={i} index={i} file={f} fallbackName={block.filename} open={!collapsed.has(i)} onToggle={() => toggle(i)} />
      ))}
    </div>
  );
}

function DiffFileView({
  file,
  fallbackName,
  index,
  open,
  onToggle,
}: {
  file: DiffFile;
  fallbackName?: string;
  index: number;
  open: boolean;
  onToggle: () => void;
}) {
  const hl = useHighlighter();
  const lang = languageFor(undefined, languageName(file, fallbackName));
  const total = file.hunks.reduce((n, h) => n + h.lines.length, 0);
  // Line comments (revision 7): by the file's path as the diff names it (diff.ts, ask.ParseDiff).
  const lc = useLineComments();
  const path = file.to ?? file.from ?? fallbackName ?? '';
  const commented = !!lc && [...lc.shown.map((s) => s.comment), ...(lc.drafts ?? [])].some((c) => c.path === path);
  const [full, setFull] = useState(total <= DIFF_FOLD_OVER || commented);
  const highlighted = useMemo(
    () => (open ? file.hunks.map((h) => highlightLines(h.lines.map((l) => l.text), lang)) : []),
    [file, lang, open, hl],
  );
  // Folded: the first DIFF_SHOW lines, hunk by hunk.
  let budget = full ? Infinity : DIFF_SHOW;
  const hunks = file.hunks.map((h) => {
    const n = Math.max(0, Math.min(h.lines.length, budget));
    budget -= n;
    return n;
  });
  return (
    <figure class={`diff-file ${open ? '' : 'collapsed'}`} data-diff-file={index}>
      <figcaption class="block-head">
        <button type="button" class="diff-file-toggle" aria-expanded={open} onClick={onToggle}>
          <ChevronIcon />
          <FileIcon />
          <span class="file-name">{file.name}</span>
        </button>
        {file.status !== 'modified' && <span class={`file-status ${file.status}`}>{file.status}</span>}
        <span class="spacer" />
        <span class="diff-stat" aria-label={`${file.additions} added, ${file.deletions} removed`}>
          <span class="plus">+{file.additions}</span> <span class="minus">−{file.deletions}</span>
        </span>
      </figcaption>
      {open && (
        <div class="diff-scroll" tabIndex={0} role="region" aria-label={`Changes in ${file.name}`}>
          <table class="diff-table">
            <colgroup>
              <col class="ln-col" />
              <col class="ln-col" />
              <col class="sign-col" />
              <col />
            </colgroup>
            {file.hunks.map((h, hi) =>
              hunks[hi] === 0 ? null : (
                <tbody key={hi}>
                  <tr class="hunk-row">
                    <td colSpan={4}>{h.header}</td>
                  </tr>
                  {h.lines.slice(0, hunks[hi]).map((l, li) => {
                    // A line takes a comment on its side: a removed line on the old file's, any other on the new file's.
                    const side: LineSide | null = l.kind === 'del' ? 'old' : l.kind === 'note' ? null : 'new';
                    const no = side === 'old' ? l.oldNo : side === 'new' ? l.newNo : null;
                    const can = !!lc?.drafts && !!side && !!no && !!path;
                    const cell = (which: LineSide, n: number | null) =>
                      can && which === side ? (
                        <td class={`ln ln-${which} ln-commentable`} data-ln={n ?? ''}>
                          <button
                            type="button"
                            class="ln-btn"
                            data-ln={n ?? ''}
                            data-lc-btn={lineKey(path, side!, no!)}
                            aria-label={`Comment on ${which === 'old' ? 'old line' : 'line'} ${n} of ${path}`}
                            title="Add a comment on this line"
                            onClick={() => {
                              lc!.add(path, side!, no!);
                              focusDraft(lc!.id, lineKey(path, side!, no!));
                            }}
                          />
                        </td>
                      ) : (
                        <td class={`ln ln-${which}`} data-ln={n ?? ''} aria-label={n ? `${which} line ${n}` : undefined} />
                      );
                    return (
                    <Fragment key={li}>
                    <tr class={`line ${l.kind}`}>
                      {cell('old', l.oldNo)}
                      {cell('new', l.newNo)}
                      <td class="sign" aria-hidden="true">
                        {l.kind === 'add' ? '+' : l.kind === 'del' ? '−' : ''}
                      </td>
                      {l.kind === 'note' ? (
                        <td class="text note">{l.text}</td>
                      ) : (
                        <td class="text">
                          <span class="sr-only">{l.kind === 'add' ? 'added: ' : l.kind === 'del' ? 'removed: ' : ''}</span>
                          <code dangerouslySetInnerHTML={{ __html: highlighted[hi]?.[li] || ' ' }} />
                        </td>
                      )}
                    </tr>
                    {lc && side && no && path && <LineCommentRow ctl={lc} path={path} side={side} line={no} />}
                    </Fragment>
                    );
                  })}
                </tbody>
              ),
            )}
          </table>
          {!full && (
            <button type="button" class="fold-btn" onClick={() => setFull(true)}>
              Show the other {total - DIFF_SHOW} lines of {file.name}
            </button>
          )}
        </div>
      )}
    </figure>
  );
}

export function ImageView({ block }: { block: ImageBlock }) {
  const [url, setUrl] = useState<string | null>(null);
  const [error, setError] = useState<string | null>(null);
  useEffect(() => {
    let live = true;
    setUrl(null);
    setError(null);
    fileUrl(block.uploadId).then(
      (u) => live && setUrl(u),
      (e: Error) => live && setError(e.message),
    );
    return () => {
      live = false;
    };
  }, [block.uploadId]);
  const alt = block.caption || 'An image the agent uploaded';
  return (
    <figure class="block image-block">
      {error ? (
        <div class="image-missing" role="img" aria-label={alt}>
          Image {block.uploadId} could not be loaded: {error}
        </div>
      ) : url ? (
        <a href={url} target="_blank" rel="noopener noreferrer" title="Open full size">
          <img src={url} alt={alt} data-upload={block.uploadId} />
        </a>
      ) : (
        <div class="image-loading" aria-busy="true">
          Loading image…
        </div>
      )}
      {block.caption && <figcaption>{block.caption}</figcaption>}
    </figure>
  );
}
