// The person's own marks on the open ask (contract revision 6): read or unread (u), and snooze,
// until a time (presets, or one of their own) or until the agent moves. A snoozed ask leaves the
// open asks for the "Snoozed" filter, and comes back, unread, at its time or when the agent moves.

import { useId, useState } from 'preact/hooks';
import { isSnoozed, isUnread, snoozePresets, type SnoozeInput } from '../marks';
import { advanceFrom, getState, setMark, useApp } from '../state';
import type { Ask } from '../types';
import { focusRow, shownList } from './AskList';
import { snoozeLabel, snoozeTime, useNow } from './common';

/** Marks the open ask read or unread (the u key and the button alike). */
export function toggleRead(a: Ask): void {
  const m = getState().marks.get(a.id);
  void setMark(a.id, { read: isUnread(m, a, Date.now()) });
}

export function MarkBar({ ask }: { ask: Ask }) {
  const s = useApp();
  const now = useNow();
  const [open, setOpen] = useState(false);
  const [custom, setCustom] = useState('');
  const id = useId();
  if (ask.status === 'closed') return null;
  const m = s.marks.get(ask.id);
  const unread = isUnread(m, ask, now);
  const snoozed = isSnoozed(m, ask, now);

  const snooze = (input: SnoozeInput) => {
    setOpen(false);
    const list = shownList(getState(), 'inbox');
    void setMark(ask.id, { snooze: input });
    // Out of the open asks: on to the next one, as after an answer.
    advanceFrom(ask.id, list, focusRow);
  };
  const customOk = custom !== '' && new Date(custom).getTime() > now;

  return (
    <div class="mark-bar" data-mark-bar>
      <button type="button" class="btn small ghost" data-toggle-read onClick={() => toggleRead(ask)} title="Mark read or unread (u)">
        {unread ? 'Mark read' : 'Mark unread'}
      </button>
      {snoozed ? (
        <>
          <span class="chip chip-snoozed" data-snoozed>
            {snoozeLabel(m, ask, now)}
          </span>
          <button type="button" class="btn small ghost" onClick={() => void setMark(ask.id, { snooze: null })}>
            Wake now
          </button>
        </>
      ) : (
        <button type="button" class="btn small ghost" aria-expanded={open} aria-controls={id} data-snooze-open onClick={() => setOpen(!open)}>
          Snooze
        </button>
      )}
      {open && !snoozed && (
        <div class="snooze-menu" id={id} role="group" aria-label="Snooze until">
          {snoozePresets(new Date(now)).map((p) => (
            <button type="button" class="btn small" key={p.label} data-snooze={p.label} onClick={() => snooze({ until: p.until.toISOString() })}>
              {p.label} <span class="muted small">{snoozeTime(p.until, new Date(now))}</span>
            </button>
          ))}
          <button type="button" class="btn small" data-snooze="agent" onClick={() => snooze({ untilAgentMoves: true })}>
            Until the agent moves
          </button>
          <form
            class="snooze-custom"
            onSubmit={(e) => {
              e.preventDefault();
              if (customOk) snooze({ until: new Date(custom).toISOString() });
            }}
          >
            <label class="small" for={`${id}-at`}>
              Until
            </label>
            <input id={`${id}-at`} type="datetime-local" value={custom} onInput={(e) => setCustom((e.target as HTMLInputElement).value)} />
            <button type="submit" class="btn small" disabled={!customOk}>
              Snooze
            </button>
          </form>
        </div>
      )}
    </div>
  );
}
