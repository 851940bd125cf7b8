// Shapes of contract revision 7 that the page uses before revision 7 is frozen: the generated
// types (contract.gen.ts) come from the newest frozen revision (spec/revisions/<N>), so these are
// written here as openapi-typescript gives them, from spec/main.tsp's `r7: line comments` section.
// Once revision 7 is frozen and `npm run types` is run, contract.gen.ts has them too (Approved and
// ChangesRequested then carry `comments`) and this file can go.

import type { Approved, ChangesRequested, Reply } from './types';

/** Which side of a diff a comment is on: the new file's line, or the old file's (a removed line). */
export type LineSide = 'new' | 'old';

/** A person's comment on one line of a review's diff (LineComment). */
export interface LineComment {
  /** The file as the diff names it: its new path, or its old one when deleted. */
  path: string;
  line: number;
  side: LineSide;
  /** 1..2000 characters. */
  text: string;
}

/** At most this many comments on one reply (the contract's maxItems). */
export const MAX_LINE_COMMENTS = 100;
/** At most this many characters in one comment (the contract's maxLength). */
export const MAX_LINE_COMMENT_CHARS = 2000;

export type Approved7 = Approved & { comments?: LineComment[] };
export type ChangesRequested7 = ChangesRequested & { comments?: LineComment[] };

/** A reply's line comments: an approval's or a request for changes', else none. */
export function commentsOf(r: Reply): LineComment[] {
  if (r.outcome === 'approved' || r.outcome === 'changes_requested') return (r as Approved7 | ChangesRequested7).comments ?? [];
  return [];
}

/** Where a comment is, as the agent reads it: `path:line`, with "(old)" for a removed line. */
export function whereOf(c: LineComment): string {
  return `${c.path}:${c.line}${c.side === 'old' ? ' (old)' : ''}`;
}
