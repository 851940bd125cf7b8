// Syntax highlighting with highlight.js's core and a fixed set of common languages, so the bundle
// carries only what agents are likely to show. The output is HTML of <span class="hljs-…"> around
// escaped text: highlight.js escapes the code itself, and the classes are styled by styles.css.
// This module is its own chunk, loaded by highlight.ts once the list is up (or an ask is open):
// the first script does not carry it (issue 29: list interactive at 4× CPU).

import hljs from 'highlight.js/lib/core';
import { escapeHtml } from './escape';
import bash from 'highlight.js/lib/languages/bash';
import c from 'highlight.js/lib/languages/c';
import cpp from 'highlight.js/lib/languages/cpp';
import csharp from 'highlight.js/lib/languages/csharp';
import css from 'highlight.js/lib/languages/css';
import diff from 'highlight.js/lib/languages/diff';
import dockerfile from 'highlight.js/lib/languages/dockerfile';
import go from 'highlight.js/lib/languages/go';
import ini from 'highlight.js/lib/languages/ini';
import java from 'highlight.js/lib/languages/java';
import javascript from 'highlight.js/lib/languages/javascript';
import json from 'highlight.js/lib/languages/json';
import kotlin from 'highlight.js/lib/languages/kotlin';
import makefile from 'highlight.js/lib/languages/makefile';
import markdown from 'highlight.js/lib/languages/markdown';
import php from 'highlight.js/lib/languages/php';
import plaintext from 'highlight.js/lib/languages/plaintext';
import python from 'highlight.js/lib/languages/python';
import ruby from 'highlight.js/lib/languages/ruby';
import rust from 'highlight.js/lib/languages/rust';
import scss from 'highlight.js/lib/languages/scss';
import shell from 'highlight.js/lib/languages/shell';
import sql from 'highlight.js/lib/languages/sql';
import swift from 'highlight.js/lib/languages/swift';
import typescript from 'highlight.js/lib/languages/typescript';
import xml from 'highlight.js/lib/languages/xml';
import yaml from 'highlight.js/lib/languages/yaml';

const languages = {
  bash, c, cpp, csharp, css, diff, dockerfile, go, ini, java, javascript, json, kotlin, makefile,
  markdown, php, plaintext, python, ruby, rust, scss, shell, sql, swift, typescript, xml, yaml,
};
for (const [name, lang] of Object.entries(languages)) hljs.registerLanguage(name, lang);
// Names agents use that the grammars do not list as aliases.
hljs.registerAliases(['toml', 'conf', 'properties', 'env'], { languageName: 'ini' });
hljs.registerAliases(['golang'], { languageName: 'go' });
hljs.registerAliases(['html', 'svg', 'vue'], { languageName: 'xml' });
hljs.registerAliases(['jsx', 'mjs', 'cjs'], { languageName: 'javascript' });
hljs.registerAliases(['tsx', 'mts', 'cts'], { languageName: 'typescript' });
hljs.registerAliases(['text', 'txt', 'plain'], { languageName: 'plaintext' });
hljs.registerAliases(['patch'], { languageName: 'diff' });

/** File extensions (and a few whole names) to languages, for code and diffs given a filename. */
const byExtension: Record<string, string> = {
  sh: 'bash', bash: 'bash', zsh: 'bash', c: 'c', h: 'c', cc: 'cpp', cpp: 'cpp', cxx: 'cpp', hpp: 'cpp',
  hh: 'cpp', cs: 'csharp', css: 'css', scss: 'scss', go: 'go', mod: 'go', ini: 'ini', toml: 'ini',
  cfg: 'ini', java: 'java', js: 'javascript', jsx: 'javascript', mjs: 'javascript',
  cjs: 'javascript', json: 'json', kt: 'kotlin', kts: 'kotlin', md: 'markdown', php: 'php',
  py: 'python', rb: 'ruby', rs: 'rust', sql: 'sql', swift: 'swift', ts: 'typescript',
  tsx: 'typescript', mts: 'typescript', html: 'xml', htm: 'xml', xml: 'xml', svg: 'xml', vue: 'xml',
  yml: 'yaml', yaml: 'yaml', mk: 'makefile', diff: 'diff', patch: 'diff', txt: 'plaintext',
  dockerfile: 'dockerfile', makefile: 'makefile', gnumakefile: 'makefile',
};

/** The language to highlight with: the one named when known, else guessed from the filename. */
export function languageFor(language?: string, filename?: string): string | null {
  const named = (language ?? '').trim().toLowerCase();
  if (named && hljs.getLanguage(named)) return named;
  if (filename) {
    const base = filename.split('/').pop()!.toLowerCase();
    const ext = base.includes('.') ? base.split('.').pop()! : base;
    const lang = byExtension[ext] ?? byExtension[base];
    if (lang) return lang;
  }
  return null;
}

/** Highlighted HTML for code; plain escaped text when no language is known. */
export function highlight(code: string, language: string | null): string {
  if (language && hljs.getLanguage(language)) {
    try {
      return hljs.highlight(code, { language, ignoreIllegals: true }).value;
    } catch {
      // fall through to plain text
    }
  }
  return escapeHtml(code);
}

/**
 * Highlights lines one at a time, for a diff, whose lines come from two versions of a file and so
 * cannot be highlighted as one text. A construct spanning lines (a block comment, a long string)
 * is coloured line by line; that is the usual trade-off of diff viewers.
 */
export function highlightLines(lines: readonly string[], language: string | null): string[] {
  if (!language || !hljs.getLanguage(language)) return lines.map(escapeHtml);
  return lines.map((l) => {
    try {
      return hljs.highlight(l, { language, ignoreIllegals: true }).value;
    } catch {
      return escapeHtml(l);
    }
  });
}


