import { beforeAll, describe, expect, it } from 'vitest';
import { parseUnifiedDiff } from '../../src/diff';
import { highlight, highlighterReady, languageFor, loadHighlighter } from '../../src/highlight';
import { carriesToken, inlineFragment, plainText, renderMarkdown, renderTitle, sanitizeHtml } from '../../src/markdown';

function html(md: string): string {
  const div = document.createElement('div');
  div.append(renderMarkdown(md));
  return div.innerHTML;
}

function clean(raw: string): string {
  const div = document.createElement('div');
  div.append(sanitizeHtml(raw));
  return div.innerHTML;
}

describe('before highlight.js has loaded', () => {
  it('shows code as plain escaped text in the same boxes', () => {
    expect(highlighterReady()).toBe(false);
    expect(highlight('<b>&', 'go')).toBe('&lt;b&gt;&amp;');
    const out = html('```go\nfunc main() {}\n```');
    expect(out).toContain('<pre><code class="hljs">func main() {}</code></pre>');
  });
});

describe('markdown', () => {
  beforeAll(() => loadHighlighter());
  it('renders GitHub-flavoured markdown with highlighted code', () => {
    const out = html('# Title\n\n**bold** and `code`\n\n| a | b |\n|---|---|\n| 1 | 2 |\n\n```go\nfunc main() {}\n```');
    expect(out).toContain('<h1>Title</h1>');
    expect(out).toContain('<strong>bold</strong>');
    expect(out).toContain('<table>');
    expect(out).toMatch(/<code class="hljs language-go">.*<span class="hljs-keyword">func<\/span>/);
  });

  it('shows raw HTML as text, but for a few bare tags', () => {
    const div = document.createElement('div');
    div.append(renderMarkdown('<script>alert(1)</script>\n\nPress <kbd>Ctrl</kbd> and <img src=x onerror=alert(2)>.\n\n<details><summary>More</summary>\n\nHidden *text*\n\n</details>'));
    expect(div.querySelector('script, img')).toBeNull();
    expect(div.textContent).toContain('<script>alert(1)</script>');
    expect(div.textContent).toContain('<img src=x onerror=alert(2)>');
    expect(div.querySelector('kbd')?.textContent).toBe('Ctrl');
    expect(div.querySelector('details summary')?.textContent).toBe('More');
  });

  it('sanitises: removes scripts, event handlers, styles, frames and forms', () => {
    const out = clean(
      '<script>alert(1)</script><img src=x onerror="alert(2)"><p onclick="alert(3)" style="color:red">x</p>' +
        '<iframe src="https://evil.example"></iframe><form action="https://evil.example"><input type="text"></form>' +
        '<svg onload="alert(4)"></svg><style>body{}</style><a href="#" onmouseover="alert(5)">h</a>',
    );
    expect(out).not.toMatch(/script|onerror|onclick|onload|onmouseover|style|iframe|form|svg|alert/i);
  });

  it('allows only safe link targets', () => {
    const out = html('[a](javascript:alert(1)) [b](data:text/html,<script>alert(1)</script>) [c](vbscript:x) [d](//evil.example/x) [e](https://ok.example/) [f](mailto:a@b.c) [g](#top)');
    expect(out).not.toMatch(/javascript:|data:|vbscript:|evil\.example/);
    expect(out).toContain('href="https://ok.example/"');
    expect(out).toContain('target="_blank"');
    expect(out).toContain('rel="noopener noreferrer nofollow"');
    expect(out).toContain('href="mailto:a@b.c"');
    expect(out).toContain('href="#top"');
  });

  it('renders links that carry a token as plain text, however they are written', () => {
    const links = [
      '[see the diff](#token=lb_other)',
      '[b](#x=1&token=lb_other)',
      '[c](#TOKEN=lb_other)',
      '[d](#%74oken=lb_other)',
      '[e](#%2574oken=lb_other)',
      '[f](#to&#9;ken=lb_other)',
      '[g](/asks/abc#token=lb_other)',
      '[h](/?token=lb_other)',
      '[i](http://127.0.0.1:8080/#token=lb_other)',
      '[j](https://example.com/cb?access_token=abc)',
      '[k](#token)',
      '[l](#%E0%A4%A&%74oken=x)',
      '<http://localhost:8080/asks/x#token=lb_other>',
      'http://localhost:8080/#token=lb_bare',
      '[m][ref]\n\n[ref]: #token=lb_ref',
    ];
    const div = document.createElement('div');
    div.append(renderMarkdown(links.join('\n\n')));
    expect(Array.from(div.querySelectorAll('a')).map((a) => a.outerHTML)).toEqual([]);
    expect(div.innerHTML).not.toMatch(/href=/);
    // The words stay, as text.
    const texts = Array.from(div.querySelectorAll('.token-link')).map((s) => s.textContent);
    expect(texts).toContain('see the diff');
    expect(texts).toContain('m');
    expect(texts).toHaveLength(links.length);
    // Formatting inside the link text survives; the link does not.
    const bold = document.createElement('div');
    bold.append(renderMarkdown('[**sign in** here](#token=x)'));
    expect(bold.querySelector('.token-link strong')?.textContent).toBe('sign in');
    expect(bold.querySelector('a')).toBeNull();
  });

  it('keeps links without a token, in the page and out', () => {
    const out = html('[a](#top) [b](/asks/abc) [c](https://ok.example/path#section) [d](/history?project=x) [e](https://ok.example/tokens-explained)');
    expect(out).toContain('href="#top"');
    expect(out).toContain('href="/asks/abc"');
    expect(out).toContain('href="https://ok.example/path#section"');
    expect(out).toContain('href="/history?project=x"');
    expect(out).toContain('href="https://ok.example/tokens-explained"'); // "token" in the path only
    expect(out).not.toContain('token-link');
  });

  it('spots a token in a query or fragment, decoded', () => {
    for (const href of ['#token=a', '#a&token=b', '#%74%6F%6B%65%6E=a', '#%25%37%34oken=a', '?Token=a', '/x?y=1#z&token', 'https://h/#to\nken=a', '#%zz&token=a']) {
      expect(carriesToken(href), href).toBe(true);
    }
    for (const href of ['#top', '/asks/token', 'https://h/token/x', 'mailto:token@example.com', '#tok', '/history?project=tok']) {
      expect(carriesToken(href), href).toBe(false);
    }
  });

  it('shows only uploaded images, and never with a src before the token fetch', () => {
    const out = html('![remote](https://evil.example/x.png) ![data](data:image/png;base64,AAAA) ![ok](/api/v1/files/up_123) ![dots](/api/v1/files/../asks)') +
      clean('<img srcset="https://evil.example/y.png 2x"><img src="https://evil.example/z.png">');
    expect(out).not.toMatch(/\ssrc(set)?=/);
    const div = document.createElement('div');
    div.innerHTML = out;
    expect(div.querySelectorAll('img').length).toBe(1); // the upload; the rest are notes
    expect(out).toContain('data-upload-id="up_123"');
    expect(out).toMatch(/image not loaded: remote/);
  });

  it('keeps only highlighter classes', () => {
    const out = clean('<span class="chip chip-you hljs-keyword">Approved</span>');
    expect(out).toContain('class="hljs-keyword"');
    expect(out).not.toContain('chip');
  });

  it('makes one-line previews', () => {
    expect(plainText('## Use **SQLite**?\n\n[docs](https://x)', 40)).toBe('Use SQLite? docs');
  });

  it('keeps every character of a title that is not markup', () => {
    expect(plainText('Merge PR #1043 into `events_v2`?')).toBe('Merge PR #1043 into events_v2?');
    expect(plainText('snake_case_name and C# and a_b_c')).toBe('snake_case_name and C# and a_b_c');
  });

  it('renders a title’s inline markdown, sanitised, on one line', () => {
    const t = (src: string) => {
      const div = document.createElement('div');
      div.append(renderTitle(src));
      return div.innerHTML;
    };
    expect(t('Merge PR #1043 into `events_v2`?')).toBe('Merge PR #1043 into <code>events_v2</code>?');
    expect(t('Use **SQLite** for _local_ runs')).toBe('Use <strong>SQLite</strong> for <em>local</em> runs');
    // Only the first paragraph, links as their words, no raw HTML, no images.
    expect(t('See [the docs](https://evil.example) now\n\nSecond paragraph')).toBe('See the docs now');
    expect(t('<img src=x onerror=alert(1)> hi')).toBe('&lt;img src=x onerror=alert(1)&gt; hi');
    expect(t('![alt text](https://x/y.png) `code`')).toBe('alt text <code>code</code>');
    expect(t('## Heading #1')).toBe('Heading #1');
    expect(t('```\ncode only\n```\nThen words')).toBe('Then words');
    expect(t('AT&amp;T &copy; 2 < 3 & "q" \'s\'')).toBe('AT&amp;T © 2 &lt; 3 &amp; "q" \'s\'');
  });
  it('keeps only inline tags without attributes, whatever HTML reaches it', () => {
    const f = (h: string) => {
      const div = document.createElement('div');
      div.append(inlineFragment(h));
      return div.innerHTML;
    };
    expect(f('<img src=x onerror=alert(1)><b onclick="x()" class="chip">bold</b><script>bad()</script>')).toBe('<b>bold</b>');
    expect(f('<a href="javascript:x">link</a> <code class="hljs" style="color:red">c</code><style>*{}</style>')).toBe('link <code>c</code>');
    expect(f('<svg><g onload="x()">s</g></svg><math><mi>m</mi></math><iframe srcdoc="<b>x</b>"></iframe><!-- c -->t')).toBe('t');
    expect(f('<div><p>para <em>e</em></p></div><template><b>no</b></template>')).toBe('para <em>e</em>');
    expect(f('&lt;b&gt; &amp;amp; &#39;')).toBe('&lt;b&gt; &amp;amp; \'');
  });
});

describe('highlighting', () => {
  beforeAll(() => loadHighlighter());
  it('finds the language by name or file name', () => {
    expect(languageFor('ts')).toBe('ts');
    expect(languageFor(undefined, 'cmd/main.go')).toBe('go');
    expect(languageFor('nonsense', 'Dockerfile')).toBe('dockerfile');
    expect(languageFor(undefined, 'README')).toBeNull();
  });
  it('escapes what it does not know', () => {
    expect(highlight('<b>&', null)).toBe('&lt;b&gt;&amp;');
    expect(highlight('<img src=x onerror=alert(1)>', 'xml')).not.toContain('<img');
  });
});

describe('diffs', () => {
  it('parses files, hunks and line numbers', () => {
    const files = parseUnifiedDiff(
      'diff --git a/a.go b/a.go\n--- a/a.go\n+++ b/a.go\n@@ -1,3 +1,3 @@ func x() {\n ctx\n-old\n+new\n ctx2\n' +
        'diff --git a/old.txt b/new.txt\nsimilarity index 90%\nrename from old.txt\nrename to new.txt\n--- a/old.txt\n+++ b/new.txt\n@@ -1 +1 @@\n-a\n+b\n\\ No newline at end of file\n',
    );
    expect(files).toHaveLength(2);
    const [a, b] = files;
    expect(a.name).toBe('a.go');
    expect(a.hunks[0].header).toMatch(/^@@ -1,3 \+1,3 @@/);
    expect(a.hunks[0].lines.map((l) => [l.kind, l.oldNo, l.newNo, l.text])).toEqual([
      ['ctx', 1, 1, 'ctx'],
      ['del', 2, null, 'old'],
      ['add', null, 2, 'new'],
      ['ctx', 3, 3, 'ctx2'],
    ]);
    expect(b.status).toBe('renamed');
    expect(b.name).toBe('old.txt → new.txt');
    expect(b.hunks[0].lines.at(-1)!.kind).toBe('note');
  });
  it('names a bare hunk after the block', () => {
    const [f] = parseUnifiedDiff('@@ -1 +1 @@\n-a\n+b\n', 'x.py');
    expect(f.name).toBe('x.py');
    expect(f.additions).toBe(1);
  });
});
