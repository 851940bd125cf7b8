import { useEffect, useState } from 'preact/hooks';
import { openAsks } from '../merge';
import { enableNotifications, getState, navigate, retryLive, signIn, signOut, useApp, type AppState } from '../state';
import { AskView } from './AskView';
import { ListPane, type Tab } from './AskList';
import { useNow } from './common';
import { BellIcon, HelpIcon, InboxIcon, LogoIcon, SignOutIcon } from './icons';

export function App() {
  const s = useApp();
  useShortcuts();
  if (!s.token) return <SignIn message={s.signInMessage} />;
  const tab: Tab = s.route.name === 'history' ? 'history' : s.route.name === 'ask' ? lastTab.current : 'inbox';
  if (s.route.name !== 'ask') lastTab.current = tab;
  const detail = s.route.name === 'ask';
  return (
    <div class="app">
      <a class="skip-link" href="#main">
        Skip to content
      </a>
      <TopBar s={s} />
      {s.banner && <ReloadBanner kind={s.banner} />}
      <main id="main" class={`layout ${detail ? 'has-detail' : 'no-detail'}`}>
        <aside class="pane-list" aria-label={tab === 'history' ? 'History' : 'Open asks'}>
          <ListPane tab={tab} />
        </aside>
        <section class="pane-detail" aria-label="Ask">
          {s.route.name === 'ask' ? <AskView key={s.route.id} id={s.route.id} /> : <Placeholder s={s} tab={tab} />}
        </section>
      </main>
      {s.toast && (
        <div class={`toast toast-${s.toast.kind}`} role={s.toast.kind === 'error' ? 'alert' : 'status'}>
          {s.toast.text}
        </div>
      )}
      <Help />
    </div>
  );
}

const lastTab = { current: 'inbox' as Tab };

function Placeholder({ s, tab }: { s: AppState; tab: Tab }) {
  const waiting = openAsks(s.live).filter((a) => a.status === 'awaiting_human').length;
  return (
    <div class="placeholder">
      <InboxIcon />
      {tab === 'history' ? (
        <p>Pick a closed ask to read it with its whole thread.</p>
      ) : waiting ? (
        <p>
          {waiting} {waiting === 1 ? 'ask is' : 'asks are'} waiting on you. Pick one from the list.
        </p>
      ) : (
        <p>All caught up. New asks appear here live.</p>
      )}
      <p class="muted small">
        Press <kbd>j</kbd>/<kbd>k</kbd> to move through the list, <kbd>?</kbd> for all shortcuts.
      </p>
    </div>
  );
}

function TopBar({ s }: { s: AppState }) {
  return (
    <header class="topbar">
      <a
        class="brand"
        href="/"
        onClick={(e) => {
          e.preventDefault();
          navigate({ name: 'inbox' });
        }}
      >
        <LogoIcon />
        <span>Loopback</span>
      </a>
      <ConnectionPill s={s} />
      <span class="spacer" />
      {s.whoami && (
        <span class="whoami" title={`Space ${s.whoami.space}`}>
          {s.whoami.actor.name || s.whoami.actor.id}
        </span>
      )}
      {s.notifications === 'default' && (
        <button
          type="button"
          class="icon-btn"
          title="Notify me of new asks while this tab is in the background"
          aria-label="Turn on notifications"
          onClick={() => void enableNotifications()}
        >
          <BellIcon />
        </button>
      )}
      <button type="button" class="icon-btn" aria-label="Keyboard shortcuts" title="Keyboard shortcuts (?)" onClick={openHelp}>
        <HelpIcon />
      </button>
      <button type="button" class="icon-btn" aria-label="Sign out" title="Sign out" onClick={() => signOut('You signed out. Your drafts on this device were removed.', true)}>
        <SignOutIcon />
      </button>
    </header>
  );
}

function ConnectionPill({ s }: { s: AppState }) {
  useNow(1000);
  const c = s.conn;
  let label: string;
  let cls: string;
  let retry = false;
  switch (c.status) {
    case 'live':
      label = 'Live';
      cls = 'live';
      break;
    case 'connecting':
      label = c.attempt > 1 ? 'Reconnecting…' : 'Connecting…';
      cls = 'connecting';
      break;
    case 'retrying': {
      const secs = Math.max(0, Math.ceil((c.at - Date.now()) / 1000));
      label = `Offline · retrying in ${secs} s`;
      cls = 'down';
      retry = true;
      break;
    }
    case 'offline':
      label = 'No network';
      cls = 'down';
      break;
    default:
      label = 'Not connected';
      cls = 'down';
  }
  return (
    <span class={`conn conn-${cls}`} role="status" aria-live="polite" data-conn={c.status}>
      <span class="dot" aria-hidden="true" />
      {/* The countdown changes every second: screen readers get one steady phrase instead. */}
      <span class="conn-label" aria-hidden={retry ? 'true' : undefined}>
        {label}
      </span>
      {retry && <span class="sr-only">Offline, retrying</span>}
      {retry && (
        <button type="button" class="link-btn" onClick={retryLive}>
          Retry now
        </button>
      )}
    </span>
  );
}

function ReloadBanner({ kind }: { kind: 'server-newer' | 'reload' }) {
  return (
    <div class="banner" role="alert" data-banner={kind}>
      <span>
        {kind === 'server-newer'
          ? 'A newer version of Loopback is running. Reload to get the inbox that goes with it.'
          : 'This page is newer than the Loopback it talks to, which refused it. Reload to get the matching inbox.'}{' '}
        Your drafts are kept.
      </span>
      <button type="button" class="btn primary small" onClick={() => location.reload()}>
        Reload
      </button>
    </div>
  );
}

function SignIn({ message }: { message: string | null }) {
  const [token, setToken] = useState('');
  return (
    <main class="signin">
      <div class="signin-card">
        <h1 class="brand big">
          <LogoIcon size={30} />
          <span>Loopback</span>
        </h1>
        <p class="lead">Answer your agents' questions, reviews and briefings, from every project, in one inbox.</p>
        {message && (
          <p class="signin-message" role="alert">
            {message}
          </p>
        )}
        <p>
          Open the <strong>Inbox</strong> link that <code>loopback serve</code> printed. It signs this browser in, and
          its token never leaves your machine in a request.
        </p>
        <form
          class="signin-form"
          onSubmit={(e) => {
            e.preventDefault();
            if (token.trim()) void signIn(token.trim());
          }}
        >
          <label class="field-label" for="token">
            Or paste your token
          </label>
          <input
            id="token"
            type="password"
            autoComplete="off"
            spellcheck={false}
            value={token}
            placeholder="lb_…"
            onInput={(e) => setToken((e.target as HTMLInputElement).value)}
          />
          <button type="submit" class="btn primary wide" disabled={!token.trim()}>
            Sign in
          </button>
        </form>
      </div>
    </main>
  );
}

/** The shortcuts dialog. It opens and closes itself (openHelp, Esc, Close), never through a render. */
function Help() {
  return (
    <dialog class="help" aria-labelledby="help-title">
      <h2 id="help-title">Keyboard shortcuts</h2>
      <dl class="shortcuts">
        <dt>
          <kbd>j</kbd> <kbd>k</kbd>
        </dt>
        <dd>Next / previous ask in the list</dd>
        <dt>
          <kbd>Enter</kbd>
        </dt>
        <dd>Open the ask in focus</dd>
        <dt>
          <kbd>Esc</kbd>
        </dt>
        <dd>Back to the list</dd>
        <dt>
          <kbd>g</kbd> <kbd>i</kbd> / <kbd>g</kbd> <kbd>h</kbd>
        </dt>
        <dd>Go to open asks / history</dd>
        <dt>
          <kbd>Ctrl</kbd> <kbd>Enter</kbd>
        </dt>
        <dd>Send, while typing an answer</dd>
        <dt>
          <kbd>?</kbd>
        </dt>
        <dd>This help</dd>
      </dl>
      <form method="dialog">
        <button class="btn primary wide" type="submit">
          Close
        </button>
      </form>
    </dialog>
  );
}

/** j/k move through the list (and open the ask on a wide screen), Enter opens, Esc goes back, ? helps. */
function useShortcuts() {
  useEffect(() => {
    let g = false;
    const onKey = (e: KeyboardEvent) => {
      const st = getState(); // the store, not the last render: a key can come before the render
      if (!st.token || e.defaultPrevented || e.metaKey || e.ctrlKey || e.altKey) return;
      const t = e.target as HTMLElement | null;
      if (t && (t.isContentEditable || /^(INPUT|TEXTAREA|SELECT)$/.test(t.tagName))) return;
      if (helpDialog()?.open) return; // the dialog handles its own keys
      if (g) {
        g = false;
        if (e.key === 'i') return navigate({ name: 'inbox' });
        if (e.key === 'h') return navigate({ name: 'history' });
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

function helpDialog() {
  return document.querySelector<HTMLDialogElement>('dialog.help');
}

/**
 * Opens the help dialog directly. The dialog alone knows whether it is open: it once mirrored a state
 * flag, and an effect left over from an earlier render could close it again right after a quick Esc, ?.
 */
function openHelp() {
  const d = helpDialog();
  if (d && !d.open) d.showModal();
}

function focusRow(id: string | null) {
  const row = id ? document.querySelector<HTMLElement>(`[data-ask-row="${CSS.escape(id)}"]`) : null;
  (row ?? document.querySelector<HTMLElement>('[data-ask-row]'))?.focus();
}

