// The inbox's keyboard shortcuts, and the list tab an ask was opened from (Esc goes back to it).

import { useEffect } from 'preact/hooks';
import { findAsk, getState, navigate, openHelp, queueReply, advanceFrom, toast, undoPending, wide } from '../state';
import { dismissPicked, pick } from './AskList';
import { toggleRead } from './MarkBar';
import { focusRow as focusListRow, listCursor, shownList, type Tab } from './AskList';
import { sendBlocked } from './Question';

/** The list tab shown last: an ask opened from the history goes back to the history. */
export const lastTab = { current: 'inbox' as Tab };

/**
 * j/k move through the list (and open the ask on a wide screen), Enter opens, Esc goes back, ? helps,
 * a/d allow or deny an open approval (a/c pick a review's verdict), 1–6 pick a question's choice,
 * e is done (dismisses the open ask, held for undo like any reply, and moves on), z undoes a held
 * reply, g i / g h / g r go to the open asks, history, rules.
 */
export function useShortcuts() {
  useEffect(() => {
    let g = false;
    const onKey = (e: KeyboardEvent) => {
      const st = getState(); // the store, not the last render: a key can come before the render
      if (!st.token || e.defaultPrevented || e.metaKey || e.ctrlKey || e.altKey) return;
      const t = e.target as HTMLElement | null;
      if (t && (t.isContentEditable || /^(INPUT|TEXTAREA|SELECT)$/.test(t.tagName))) return;
      if (st.help || document.querySelector('dialog[open]')) return; // a dialog handles its own keys
      if (g) {
        g = false;
        if (e.key === 'i') return navigate({ name: 'inbox' });
        if (e.key === 'h') return navigate({ name: 'history' });
        if (e.key === 'r') return navigate({ name: 'rules' });
      }
      switch (e.key) {
        case '?':
          e.preventDefault();
          openHelp();
          return;
        case 'g':
          g = true;
          return;
        case '/': {
          // The search box; on a phone showing an ask, the list comes back first.
          e.preventDefault();
          const box = document.querySelector<HTMLInputElement>('[data-search]');
          if (box && box.offsetParent !== null) return box.focus();
          navigate({ name: lastTab.current === 'history' ? 'history' : 'inbox' });
          requestAnimationFrame(() => document.querySelector<HTMLInputElement>('[data-search]')?.focus());
          return;
        }
        case 'Escape':
          if (st.route.name === 'ask') {
            e.preventDefault();
            navigate({ name: lastTab.current === 'history' ? 'history' : 'inbox' });
            const id = st.route.id;
            requestAnimationFrame(() => focusListRow(id));
          }
          return;
        case 'z':
          if (st.pending) {
            e.preventDefault();
            undoPending();
          }
          return;
        case 'a':
        case 'd': {
          // An open approval's verdict: the buttons decide (disabled while one is being sent).
          if (st.route.name !== 'ask') return;
          const b = document.querySelector<HTMLButtonElement>(`.approval [data-verdict="${e.key === 'a' ? 'allow' : 'deny'}"]`);
          if (b) {
            if (b.disabled) return;
            e.preventDefault();
            b.click();
            return;
          }
          if (e.key === 'a') pickVerdict(e, 'approve');
          return;
        }
        case 'c':
          pickVerdict(e, 'changes');
          return;
        case '1':
        case '2':
        case '3':
        case '4':
        case '5':
        case '6': {
          // A choice of the open question: as a click on it (a second press unpicks it).
          if (st.route.name !== 'ask') return;
          const b = document.querySelector<HTMLButtonElement>(`.question .choices:not([disabled]) [data-choice="${e.key}"]`);
          if (!b) return;
          e.preventDefault();
          b.click();
          return;
        }
        case 'u': {
          // Read or unread: the row under the cursor, or the open ask.
          const row = (document.activeElement as HTMLElement | null)?.closest<HTMLElement>('[data-ask-row]');
          const id = row?.dataset.askRow ?? (st.route.name === 'ask' ? st.route.id : null);
          const a = id ? findAsk(st, id) : null;
          if (!a || a.status === 'closed') return;
          e.preventDefault();
          toggleRead(a);
          return;
        }
        case 'x': {
          // Pick the row under the cursor (or the open ask) for a bulk action.
          const row = (document.activeElement as HTMLElement | null)?.closest<HTMLElement>('[data-ask-row]');
          const id = row?.dataset.askRow ?? (st.route.name === 'ask' ? st.route.id : null);
          if (!id || !listCursor.ids.includes(id)) return;
          const a = findAsk(st, id);
          if (!a || a.status === 'closed') return;
          e.preventDefault();
          pick(id, false);
          return;
        }
        case 'e': {
          // With asks picked: dismiss them all (held for undo, like any reply).
          if (st.picked.size) {
            e.preventDefault();
            dismissPicked();
            return;
          }
          // Done: the open ask is dismissed (held for undo) and the next one opens.
          if (st.route.name !== 'ask') return;
          const a = findAsk(st, st.route.id);
          if (!a || a.status === 'closed') return;
          e.preventDefault();
          if (a.kind === 'approval') {
            toast('An approval is allowed or denied: press a or d.', 'error');
            return;
          }
          const why = sendBlocked(st);
          if (why) {
            toast(why, 'error');
            return;
          }
          const list = shownList(st, 'inbox');
          void queueReply(a, { outcome: 'dismissed' }, 'Dismissing');
          advanceFrom(a.id, list, focusListRow);
          return;
        }
        case 'j':
        case 'k': {
          e.preventDefault();
          const ids = listCursor.ids;
          if (!ids.length) return;
          const active = (document.activeElement as HTMLElement | null)?.closest<HTMLElement>('[data-ask-row]');
          let i = active ? ids.indexOf(active.dataset.askRow!) : -1;
          if (i < 0 && st.route.name === 'ask') i = ids.indexOf(st.route.id);
          const next = i < 0 ? 0 : Math.min(ids.length - 1, Math.max(0, i + (e.key === 'j' ? 1 : -1)));
          focusListRow(ids[next]);
          // On a wide screen the list and the ask are side by side: show the ask as you move. The
          // row's focus is painted first, the ask on the frame after (and a key held down opens
          // only where it stops): the list answers the key at once however big the ask is.
          if (wide()) openSoon(ids[next]);
          return;
        }
      }
    };
    document.addEventListener('keydown', onKey);
    return () => document.removeEventListener('keydown', onKey);
  }, []);
}

let opening: { frame: number; timer: ReturnType<typeof setTimeout> | null } | null = null;

/** Opens an ask beside the list once the frame now being made is painted; a later call replaces it. */
function openSoon(id: string) {
  if (opening) {
    cancelAnimationFrame(opening.frame);
    if (opening.timer) clearTimeout(opening.timer);
  }
  const o: { frame: number; timer: ReturnType<typeof setTimeout> | null } = { frame: 0, timer: null };
  o.frame = requestAnimationFrame(() => {
    o.timer = setTimeout(() => {
      opening = null;
      navigate({ name: 'ask', id }, false, true);
    }, 0);
  });
  opening = o;
}

/** A review's verdict picked from the keyboard: Approve takes the focus to Send, the others to the words. */
function pickVerdict(e: KeyboardEvent, id: 'approve' | 'changes') {
  const seg = document.querySelector<HTMLButtonElement>(`.review-bar [data-action="${id}"]`);
  if (!seg) return;
  e.preventDefault();
  seg.click();
  requestAnimationFrame(() => {
    const target = id === 'approve' ? document.querySelector<HTMLElement>('[data-review-send]') : document.querySelector<HTMLElement>('.review-reply textarea');
    target?.focus();
  });
}
