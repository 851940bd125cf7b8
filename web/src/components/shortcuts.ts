// The inbox's keyboard shortcuts, and the list tab an ask was opened from (Esc goes back to it).

import { useEffect } from 'preact/hooks';
import { getState, navigate, openHelp } from '../state';
import type { Tab } from './AskList';

/** The list tab shown last: an ask opened from the history goes back to the history. */
export const lastTab = { current: 'inbox' as Tab };

/**
 * j/k move through the list (and open the ask on a wide screen), Enter opens, Esc goes back, ? helps,
 * a/d allow or deny an open approval, g i / g h / g r go to the open asks, history, rules.
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
        case 'Escape':
          if (st.route.name === 'ask') {
            e.preventDefault();
            navigate({ name: lastTab.current === 'history' ? 'history' : 'inbox' });
            requestAnimationFrame(() => focusRow(st.route.name === 'ask' ? st.route.id : null));
          }
          return;
        case 'a':
        case 'd': {
          // An open approval's verdict: the buttons decide (disabled while one is being sent).
          if (st.route.name !== 'ask') return;
          const b = document.querySelector<HTMLButtonElement>(`.approval [data-verdict="${e.key === 'a' ? 'allow' : 'deny'}"]`);
          if (!b || b.disabled) return;
          e.preventDefault();
          b.click();
          return;
        }
        case 'j':
        case 'k': {
          e.preventDefault();
          const rows = Array.from(document.querySelectorAll<HTMLAnchorElement>('[data-ask-row]'));
          if (!rows.length) return;
          const active = document.activeElement as HTMLElement | null;
          let i = rows.findIndex((r) => r === active);
          if (i < 0) i = rows.findIndex((r) => r.classList.contains('selected'));
          const next = i < 0 ? 0 : Math.min(rows.length - 1, Math.max(0, i + (e.key === 'j' ? 1 : -1)));
          rows[next].focus();
          rows[next].scrollIntoView({ block: 'nearest' });
          // On a wide screen the list and the ask are side by side: show the ask as you move.
          if (matchMedia('(min-width: 960px)').matches) {
            navigate({ name: 'ask', id: rows[next].dataset.askRow! });
          }
          return;
        }
      }
    };
    document.addEventListener('keydown', onKey);
    return () => document.removeEventListener('keydown', onKey);
  }, []);
}

function focusRow(id: string | null) {
  const row = id ? document.querySelector<HTMLElement>(`[data-ask-row="${CSS.escape(id)}"]`) : null;
  (row ?? document.querySelector<HTMLElement>('[data-ask-row]'))?.focus();
}
