// Line comments on a review's diff (contract revision 7). The review provides what to show and
// whether the person may add comments; the diff (Blocks.tsx) asks for it line by line: a line
// number becomes a button that adds a comment under its line, and each comment, draft or sent,
// shows in a row under the line it is on.

import { createContext } from 'preact';
import { useContext } from 'preact/hooks';
import { MAX_LINE_COMMENT_CHARS, type LineComment, type LineSide } from '../revision7';

/** A sent comment, shown at its line: whose it is. */
export interface ShownComment {
  comment: LineComment;
  who: string;
}

export interface LineCommentsCtl {
  /** An id for the elements of this review's comments (the ask's id). */
  id: string;
  /** Comments already sent, shown at their lines (read-only). */
  shown: ShownComment[];
  /** The person's draft comments; null when no comment can be added (a closed review). */
  drafts: LineComment[] | null;
  add(path: string, side: LineSide, line: number): void;
  edit(index: number, text: string): void;
  remove(index: number): void;
}

export const LineCommentsContext = createContext<LineCommentsCtl | null>(null);

export function useLineComments(): LineCommentsCtl | null {
  return useContext(LineCommentsContext);
}

/** The key of a line, for data attributes and lookups. */
export function lineKey(path: string, side: LineSide, line: number): string {
  return `${side}:${line}:${path}`;
}

/** Focuses a draft's text box once it is rendered. */
export function focusDraft(id: string, key: string): void {
  requestAnimationFrame(() => {
    document
      .querySelector<HTMLTextAreaElement>(`[data-lc-review="${CSS.escape(id)}"] textarea[data-lc-key="${CSS.escape(key)}"]`)
      ?.focus();
  });
}

function place(c: LineComment): string {
  return `${c.side === 'old' ? 'old line' : 'line'} ${c.line} of ${c.path}`;
}

/** The comments under one line: those sent, then the person's drafts, editable. */
export function LineCommentRow({
  ctl,
  path,
  side,
  line,
}: {
  ctl: LineCommentsCtl;
  path: string;
  side: LineSide;
  line: number;
}) {
  const shown = ctl.shown.filter((s) => s.comment.path === path && s.comment.side === side && s.comment.line === line);
  const drafts = (ctl.drafts ?? []).map((c, i) => ({ c, i })).filter(({ c }) => c.path === path && c.side === side && c.line === line);
  if (!shown.length && !drafts.length) return null;
  const key = lineKey(path, side, line);
  return (
    <tr class="comment-row" data-lc-line={key}>
      <td colSpan={4}>
        <div class="line-comments">
          {shown.map((s, i) => (
            <div class="line-comment sent" key={'s' + i} data-line-comment>
              <div class="line-comment-head">
                <span class="who">{s.who}</span> on {place(s.comment)}
              </div>
              <div class="words">{s.comment.text}</div>
            </div>
          ))}
          {drafts.map(({ c, i }) => {
            const fid = `lc-${ctl.id}-${i}`;
            return (
              <div class="line-comment draft" key={'d' + i} data-line-comment-draft>
                <label class="line-comment-head" for={fid}>
                  Your comment on {place(c)}
                </label>
                <textarea
                  id={fid}
                  data-lc-key={key}
                  rows={2}
                  maxLength={MAX_LINE_COMMENT_CHARS}
                  value={c.text}
                  placeholder="Say what to change here, or why it is good…"
                  onInput={(e) => ctl.edit(i, (e.target as HTMLTextAreaElement).value)}
                  onKeyDown={(e) => {
                    if (e.key === 'Escape' && !c.text.trim()) {
                      e.preventDefault();
                      ctl.remove(i);
                    }
                  }}
                />
                <div class="line-comment-actions">
                  <span class="muted small">Sent with your verdict.</span>
                  <span class="spacer" />
                  <button type="button" class="btn small ghost" aria-label={`Remove your comment on ${place(c)}`} onClick={() => {
                      ctl.remove(i);
                      requestAnimationFrame(() =>
                        document
                          .querySelector<HTMLElement>(`[data-lc-review="${CSS.escape(ctl.id)}"] button[data-lc-btn="${CSS.escape(key)}"]`)
                          ?.focus(),
                      );
                    }}>
                    Remove
                  </button>
                </div>
              </div>
            );
          })}
        </div>
      </td>
    </tr>
  );
}
