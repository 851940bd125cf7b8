// What agents show: markdown, highlighted code, diffs and uploaded images, in order.

import { useEffect, useLayoutEffect, useMemo, useRef, useState } from 'preact/hooks';
import { parseUnifiedDiff, languageName, type DiffFile } from '../diff';
import { fileUrl, hydrateImages } from '../files';
import { highlight, highlightLines, languageFor } from '../highlight';
import { renderMarkdown } from '../markdown';
import type { Block, CodeBlock, DiffBlock, ImageBlock } from '../types';
import { CheckIcon, CopyIcon, FileIcon } from './icons';

/** Sanitised markdown (see markdown.ts). The element's children are set here, never by Preact. */
export function Markdown({ text, class: cls }: { text: string; class?: string }) {
  const ref = useRef<HTMLDivElement>(null);
  useLayoutEffect(() => {
    const el = ref.current;
    if (!el) return;
    el.replaceChildren(renderMarkdown(text));
    hydrateImages(el);
  }, [text]);
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

function CopyButton({ text, label }: { text: string; label: string }) {
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

export function CodeView({ block }: { block: CodeBlock }) {
  const lang = languageFor(block.language, block.filename);
  // highlight.js escapes the code; its output is only text and <span class="hljs-…">.
  const html = useMemo(() => highlight(block.code.replace(/\n$/, ''), lang), [block.code, lang]);
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
    </figure>
  );
}

export function DiffView({ block }: { block: DiffBlock }) {
  const files = useMemo(() => parseUnifiedDiff(block.diff, block.filename), [block.diff, block.filename]);
  if (!files.some((f) => f.hunks.length)) {
    // Not something parse-diff understands: show it as text, coloured as a diff.
    return <CodeView block={{ type: 'code', code: block.diff, language: 'diff', filename: block.filename }} />;
  }
  return (
    <div class="block diff-block">
      {files.map((f, i) => (
        <DiffFileView key={i} file={f} fallbackName={block.filename} />
      ))}
    </div>
  );
}

function DiffFileView({ file, fallbackName }: { file: DiffFile; fallbackName?: string }) {
  const lang = languageFor(undefined, languageName(file, fallbackName));
  const highlighted = useMemo(
    () => file.hunks.map((h) => highlightLines(h.lines.map((l) => l.text), lang)),
    [file, lang],
  );
  return (
    <figure class="diff-file">
      <figcaption class="block-head">
        <FileIcon />
        <span class="file-name">{file.name}</span>
        {file.status !== 'modified' && <span class={`file-status ${file.status}`}>{file.status}</span>}
        <span class="spacer" />
        <span class="diff-stat" aria-label={`${file.additions} added, ${file.deletions} removed`}>
          <span class="plus">+{file.additions}</span> <span class="minus">−{file.deletions}</span>
        </span>
      </figcaption>
      <div class="diff-scroll" tabIndex={0}>
        <table class="diff-table">
          <colgroup>
            <col class="ln-col" />
            <col class="ln-col" />
            <col class="sign-col" />
            <col />
          </colgroup>
          {file.hunks.map((h, hi) => (
            <tbody key={hi}>
              <tr class="hunk-row">
                <td colSpan={4}>{h.header}</td>
              </tr>
              {h.lines.map((l, li) => (
                <tr key={li} class={`line ${l.kind}`}>
                  <td class="ln" data-ln={l.oldNo ?? ''} aria-label={l.oldNo ? `old line ${l.oldNo}` : undefined} />
                  <td class="ln" data-ln={l.newNo ?? ''} aria-label={l.newNo ? `new line ${l.newNo}` : undefined} />
                  <td class="sign" aria-hidden="true">
                    {l.kind === 'add' ? '+' : l.kind === 'del' ? '−' : ''}
                  </td>
                  {l.kind === 'note' ? (
                    <td class="text note">{l.text}</td>
                  ) : (
                    <td class="text">
                      <span class="sr-only">{l.kind === 'add' ? 'added: ' : l.kind === 'del' ? 'removed: ' : ''}</span>
                      <code dangerouslySetInnerHTML={{ __html: highlighted[hi][li] || ' ' }} />
                    </td>
                  )}
                </tr>
              ))}
            </tbody>
          ))}
        </table>
      </div>
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
