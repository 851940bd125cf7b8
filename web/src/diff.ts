// Unified diffs (as `git diff` prints them), parsed by parse-diff into files, hunks and lines with
// their old and new line numbers, ready to render as a table.

import parseDiff from 'parse-diff';

export interface DiffLine {
  kind: 'add' | 'del' | 'ctx' | 'note';
  oldNo: number | null;
  newNo: number | null;
  text: string;
}

export interface DiffHunk {
  header: string;
  lines: DiffLine[];
}

export interface DiffFile {
  /** What to call the file: its new name, or its old name when deleted, or `a → b` when renamed. */
  name: string;
  from: string | null;
  to: string | null;
  status: 'added' | 'deleted' | 'renamed' | 'modified';
  additions: number;
  deletions: number;
  hunks: DiffHunk[];
}

const DEV_NULL = '/dev/null';

/** Parses a unified diff; `fallbackName` names a file the diff itself does not (hunks only). */
export function parseUnifiedDiff(text: string, fallbackName?: string): DiffFile[] {
  // A final newline would otherwise read as one more (empty) context line.
  const files = parseDiff(text.replace(/\r\n/g, '\n').replace(/\n$/, ''));
  return files
    .filter((f) => f.chunks.length > 0 || f.from || f.to)
    .map((f) => {
      const from = f.from && f.from !== DEV_NULL ? f.from : null;
      const to = f.to && f.to !== DEV_NULL ? f.to : null;
      const status: DiffFile['status'] =
        f.new || (!from && to) ? 'added' : f.deleted || (from && !to) ? 'deleted' : from && to && from !== to ? 'renamed' : 'modified';
      const name =
        status === 'renamed' ? `${from} → ${to}` : (to ?? from ?? fallbackName ?? 'diff');
      return {
        name,
        from,
        to,
        status,
        additions: f.additions,
        deletions: f.deletions,
        hunks: f.chunks.map((c) => ({
          header: c.content,
          lines: c.changes.map((ch): DiffLine => {
            const body = ch.content.slice(1);
            if (ch.content.startsWith('\\')) return { kind: 'note', oldNo: null, newNo: null, text: ch.content };
            if (ch.type === 'add') return { kind: 'add', oldNo: null, newNo: ch.ln, text: body };
            if (ch.type === 'del') return { kind: 'del', oldNo: ch.ln, newNo: null, text: body };
            return { kind: 'ctx', oldNo: ch.ln1, newNo: ch.ln2, text: body };
          }),
        })),
      };
    });
}

/** The file name to guess a language from. */
export function languageName(f: DiffFile, fallbackName?: string): string | undefined {
  return f.to ?? f.from ?? fallbackName;
}
