// Markdown from agents, rendered and sanitised. Everything an agent writes is untrusted. marked turns
// it into HTML (GitHub-flavoured); raw HTML in it is shown as the text it is, but for a few bare
// tags. DOMPurify, with an allow-list of the tags and attributes markdown produces, then removes
// anything else before it reaches the page: no script, no event handler, no style, no form or frame,
// links only to http(s):, mailto: or within the page, and images only from the API's own files
// (/api/v1/files/{id}), which the page then fetches with its credentials (files.ts). Any other
// image is replaced by a note saying it was not loaded. A link whose target carries `token` in its
// query or fragment (`#token=lb_…`, encoded or not, here or on any other address) is shown as its
// plain text: the inbox signs in from such links, and an agent must never be able to offer one that
// switches the person to another space or signs them out (auth.ts has the rest of those rules).
//
// The page's Content-Security-Policy (no inline script or style, images only from 'self' and blob:)
// is the wall behind these two.

import DOMPurify from 'dompurify';
import { Marked, type Tokens } from 'marked';
import { escapeHtml, highlight, languageFor } from './highlight';
import { carriesToken } from './tokens';

export { carriesToken };

/**
 * Simple tags an agent may write as raw HTML in its markdown, bare (no attributes): they pass
 * through. Any other raw HTML (a tag with attributes, a script, a comment) is shown as the text it
 * is, so the person sees exactly what the agent wrote and no agent markup ever reaches an HTML
 * parser: not even the sanitiser's scratch document, where an inline handler or style would
 * already trip the page's CSP.
 */
const BARE_TAG = /^<\/?(b|i|em|strong|code|kbd|samp|var|sub|sup|mark|del|ins|s|u|small|br|hr|p|details|summary|blockquote|ul|ol|li|dl|dt|dd|table|thead|tbody|tr|th|td|h[1-6])\s*\/?>$/i;

function rawHtml(text: string): string {
  return text.replace(/<[^>]*>?|[^<]+/g, (part) => (part.startsWith('<') && BARE_TAG.test(part) ? part : escapeHtml(part)));
}

const marked = new Marked({
  gfm: true,
  breaks: false,
  async: false,
  renderer: {
    html({ text }: Tokens.HTML | Tokens.Tag) {
      return rawHtml(text);
    },
    code({ text, lang }: Tokens.Code) {
      const language = languageFor((lang ?? '').split(/\s/)[0]);
      const cls = language ? ` class="hljs language-${escapeHtml(language)}"` : ' class="hljs"';
      return `<pre><code${cls}>${highlight(text.replace(/\n$/, ''), language)}</code></pre>\n`;
    },
  },
});

const ALLOWED_TAGS = [
  'a', 'abbr', 'b', 'blockquote', 'br', 'code', 'dd', 'del', 'details', 'div', 'dl', 'dt', 'em',
  'h1', 'h2', 'h3', 'h4', 'h5', 'h6', 'hr', 'i', 'img', 'input', 'ins', 'kbd', 'li', 'mark', 'ol',
  'p', 'pre', 'q', 's', 'samp', 'small', 'span', 'strong', 'sub', 'summary', 'sup', 'table',
  'tbody', 'td', 'tfoot', 'th', 'thead', 'tr', 'u', 'ul', 'var',
];
const ALLOWED_ATTR = [
  'href', 'title', 'src', 'alt', 'class', 'align', 'colspan', 'rowspan', 'start', 'type',
  'checked', 'disabled', 'open', 'reversed',
];
/** Link targets allowed: http(s), mailto, a fragment, or a path on this origin (not `//host`). */
const SAFE_HREF = /^(?:https?:|mailto:|#|\/(?![/\\]))/i;
/** The only images shown: uploads, by their API path. */
const FILE_SRC = /^\/api\/v1\/files\/([A-Za-z0-9._~-]{1,200})$/;

let purifier: ReturnType<typeof DOMPurify> | null = null;

function getPurifier(): ReturnType<typeof DOMPurify> {
  if (purifier) return purifier;
  const p = DOMPurify(window);
  p.addHook('uponSanitizeAttribute', (_node, data) => {
    if (data.attrName === 'class') {
      // Only the highlighter's classes survive, so agent HTML cannot borrow the inbox's own
      // (a fake button, a fake "approved" badge).
      const kept = data.attrValue.split(/\s+/).filter((c) => /^(hljs[\w-]*|language-[\w+#.-]+)$/.test(c));
      if (kept.length) data.attrValue = kept.join(' ');
      else data.keepAttr = false;
    }
  });
  p.addHook('afterSanitizeAttributes', (node) => {
    const el = node as Element;
    if (el.tagName === 'A') {
      const href = el.getAttribute('href');
      if (href !== null && carriesToken(href)) {
        el.removeAttribute('href');
        el.setAttribute('data-token-link', '');
      } else if (href !== null && !SAFE_HREF.test(href.trim())) el.removeAttribute('href');
      if (/^https?:/i.test(el.getAttribute('href') ?? '')) {
        el.setAttribute('target', '_blank');
        el.setAttribute('rel', 'noopener noreferrer nofollow');
      }
    } else if (el.tagName === 'IMG') {
      const src = (el.getAttribute('src') ?? '').trim();
      el.removeAttribute('src');
      const m = FILE_SRC.exec(src);
      if (m) el.setAttribute('data-upload-id', m[1]);
      else el.setAttribute('data-blocked-src', src.slice(0, 200));
    } else if (el.tagName === 'INPUT') {
      // Task-list checkboxes only, and inert.
      if (el.getAttribute('type') !== 'checkbox') el.setAttribute('type', 'checkbox');
      el.setAttribute('disabled', '');
    }
  });
  purifier = p;
  return p;
}

/**
 * Renders untrusted markdown into a sanitised fragment of this document. Images of uploads carry
 * `data-upload-id` and no `src` (the caller loads them); other images are replaced by a note.
 */
export function renderMarkdown(src: string): DocumentFragment {
  const html = marked.parse(src ?? '') as string;
  return sanitizeHtml(html);
}

/** Sanitises HTML as renderMarkdown does (exported for tests and for agent HTML in markdown). */
export function sanitizeHtml(html: string): DocumentFragment {
  const frag = getPurifier().sanitize(html, {
    ALLOWED_TAGS,
    ALLOWED_ATTR,
    ALLOW_DATA_ATTR: false,
    ALLOW_ARIA_ATTR: false,
    ALLOW_UNKNOWN_PROTOCOLS: false,
    ALLOWED_URI_REGEXP: SAFE_HREF,
    ADD_URI_SAFE_ATTR: [],
    RETURN_DOM_FRAGMENT: true,
  }) as DocumentFragment;
  for (const img of Array.from(frag.querySelectorAll('img[data-blocked-src]'))) {
    const note = document.createElement('span');
    note.className = 'blocked-image';
    const alt = img.getAttribute('alt');
    note.textContent = `[image not loaded${alt ? `: ${alt}` : ''} — only uploaded images are shown]`;
    note.title = img.getAttribute('data-blocked-src') ?? '';
    img.replaceWith(note);
  }
  // A task list's checkboxes (inert) are named by their item: "Done: …" or "Not done: …".
  for (const box of Array.from(frag.querySelectorAll<HTMLInputElement>('input[type="checkbox"]'))) {
    const item = box.closest('li');
    const words = (item?.textContent ?? '').replace(/\s+/g, ' ').trim().slice(0, 200);
    box.setAttribute('aria-label', `${box.hasAttribute('checked') ? 'Done' : 'Not done'}${words ? ': ' + words : ''}`);
  }
  for (const a of Array.from(frag.querySelectorAll('a[data-token-link]'))) {
    const text = document.createElement('span');
    text.className = 'token-link';
    text.title = 'Not a link: links that carry a sign-in token are not allowed in what agents write';
    text.append(...Array.from(a.childNodes));
    a.replaceWith(text);
  }
  return frag;
}

// ----------------------------------------------------------------------------------- titles --
//
// A title is one line: a review's or briefing's title, or a question's first paragraph. Its inline
// markdown (code spans, emphasis) is rendered, and everything else kept as written: `#` and `_` are
// text ("PR #1043", "events_v2"), never stripped by a pattern. Links and images become their words
// (the row around a title is itself a link), and the sanitiser lets only inline text tags through.

const INLINE_TAGS = ['code', 'em', 'strong', 'del', 's', 'b', 'i', 'span', 'sub', 'sup', 'kbd', 'mark'];

const inlineMarked = new Marked({
  gfm: true,
  breaks: false,
  async: false,
  renderer: {
    html({ text }: Tokens.HTML | Tokens.Tag) {
      return escapeHtml(text);
    },
    link(this: { parser: { parseInline(t: Tokens.Generic[]): string } }, { tokens }: Tokens.Link) {
      return this.parser.parseInline(tokens);
    },
    image({ text }: Tokens.Image) {
      return escapeHtml(text);
    },
    br() {
      return ' ';
    },
  },
});

/** The source of a title's one line: the first block of markdown that has words, as written. */
export function titleSource(src: string): string {
  const tokens = marked.lexer(src ?? '');
  for (const t of tokens) {
    if (t.type === 'paragraph' || t.type === 'heading' || t.type === 'text') return (t as Tokens.Paragraph).text.replace(/\s+/g, ' ').trim();
    if (t.type === 'blockquote' || t.type === 'list') {
      const inner = titleSource(t.raw.replace(/^\s*(?:>|[-*+]|\d+[.)])\s?/gm, ''));
      if (inner) return inner;
    }
  }
  return '';
}

const inlineCache = new Map<string, DocumentFragment>();

/**
 * A title's inline markdown, rendered and sanitised, as a fragment of this document (a copy of a
 * cached one: a list redraws often). `max` bounds the source's length; CSS ellipsises the rest.
 */
export function renderTitle(src: string, max = 200): DocumentFragment {
  const key = max + '\u0000' + src;
  let frag = inlineCache.get(key);
  if (!frag) {
    let line = titleSource(src);
    if (line.length > max) line = line.slice(0, max - 1).trimEnd() + '…';
    frag = inlineFragment(inlineMarked.parseInline(line) as string);
    if (inlineCache.size > 2000) inlineCache.clear();
    inlineCache.set(key, frag);
  }
  return frag.cloneNode(true) as DocumentFragment;
}

let scratch: HTMLTemplateElement | null = null;
/** Elements whose content is dropped with them (were they ever to appear: raw HTML is escaped). */
const DROP_WITH_CONTENT = /^(script|style|template|iframe|object|embed|noscript|noembed|noframes|svg|math|textarea|title|xmp|select|option|head|frame|frameset)$/;

/**
 * A title's HTML (inlineMarked's: escaped text and the inline tags it writes) as a fragment of
 * this document holding only text and INLINE_TAGS, with no attribute: what DOMPurify made of it
 * with ALLOWED_TAGS INLINE_TAGS and no attributes, without a new scratch document per title (the
 * list draws dozens of titles as it loads and scrolls: DOMPurify's parseFromString for each was
 * the largest cost of a load in the page's own code, docs/benchmarks.md "Inbox"). The HTML is
 * parsed in an inert <template> (its content has no browsing context: nothing runs or loads), and
 * the fragment is built anew from its text and the allowed tags' names only; any other element
 * gives its text (or, for those above, nothing).
 */
export function inlineFragment(html: string): DocumentFragment {
  scratch ??= document.createElement('template');
  scratch.innerHTML = html;
  const out = document.createDocumentFragment();
  const copy = (from: Node, to: Node) => {
    for (let n = from.firstChild; n; n = n.nextSibling) {
      if (n.nodeType === Node.TEXT_NODE) to.appendChild(document.createTextNode((n as Text).data));
      else if (n.nodeType === Node.ELEMENT_NODE) {
        const tag = (n as Element).localName;
        if ((n as Element).namespaceURI !== 'http://www.w3.org/1999/xhtml' || DROP_WITH_CONTENT.test(tag)) continue;
        if (INLINE_TAGS.includes(tag)) copy(n, to.appendChild(document.createElement(tag)));
        else copy(n, to);
      }
    }
  };
  copy(scratch.content, out);
  scratch.innerHTML = '';
  return out;
}

/** Markdown as plain text, for one-line previews (the page's title, notifications): its words as written. */
export function plainText(src: string, max = 140): string {
  const text = tokensText(marked.lexer(src ?? '')).replace(/\s+/g, ' ').trim();
  return text.length > max ? text.slice(0, max - 1).trimEnd() + '…' : text;
}

function tokensText(tokens: readonly Tokens.Generic[]): string {
  let out = '';
  for (const t of tokens) {
    switch (t.type) {
      case 'code':
      case 'html':
      case 'hr':
      case 'space':
      case 'def':
        out += ' ';
        break;
      case 'image':
        out += (t as Tokens.Image).text;
        break;
      case 'codespan':
        out += (t as Tokens.Codespan).text;
        break;
      case 'escape':
        out += (t as Tokens.Escape).text;
        break;
      case 'br':
        out += ' ';
        break;
      case 'list':
        for (const item of (t as Tokens.List).items) out += ' ' + tokensText(item.tokens);
        out += ' ';
        break;
      case 'table':
        out += ' ';
        break;
      default: {
        const kids = (t as { tokens?: Tokens.Generic[] }).tokens;
        out += kids ? tokensText(kids) : ((t as { text?: string }).text ?? '');
        if (t.type === 'paragraph' || t.type === 'heading' || t.type === 'blockquote') out += ' ';
      }
    }
  }
  return out;
}
