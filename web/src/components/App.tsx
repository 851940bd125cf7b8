import type { RefObject } from 'preact';
import { useEffect, useLayoutEffect, useRef, useState } from 'preact/hooks';
import { displayName } from '../auth';
import { openAsks } from '../merge';
import { usesTabNotifications } from '../push';
import {
  closeHelp,
  enableNotifications,
  followHelp,
  getState,
  navigate,
  openHelp,
  resolveChoice,
  retryLive,
  setNotice,
  signIn,
  signOut,
  turnPushOff,
  turnPushOn,
  useApp,
  type AppState,
  type Choice,
} from '../state';
import type { Whoami } from '../types';
import { AskView } from './AskView';
import { ListPane, type Tab } from './AskList';
import { useNow } from './common';
import { BellIcon, BellOffIcon, HelpIcon, InboxIcon, LogoIcon, SignOutIcon } from './icons';

export function App() {
  const s = useApp();
  useShortcuts();
  if (!s.token) return <SignIn message={s.signInMessage} busy={s.signingIn} />;
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
      {s.notice && <NoticeBanner text={s.notice} />}
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
      {s.choice && <SwitchDialog choice={s.choice} />}
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
      <Bell s={s} />
      <button type="button" class="icon-btn" aria-label="Keyboard shortcuts" title="Keyboard shortcuts (?)" onClick={openHelp}>
        <HelpIcon />
      </button>
      <Account who={s.whoami} />
    </header>
  );
}

/**
 * Who is signed in, and the way out: a button with the person's initial (and name, on a wide
 * screen) opening a small menu with their name, their space and *Sign out*.
 */
function Account({ who }: { who: Whoami | null }) {
  const [open, setOpen] = useState(false);
  const root = useRef<HTMLDivElement>(null);
  const button = useRef<HTMLButtonElement>(null);
  const name = who ? displayName(who) : null;
  usePopover(open, setOpen, root, button);

  return (
    <div class="account" ref={root}>
      <button
        type="button"
        class="account-btn"
        ref={button}
        aria-haspopup="true"
        aria-expanded={open}
        aria-controls="account-menu"
        aria-label={name ? `Account: ${name}` : 'Account'}
        title={who ? `Signed in as ${name}, space ${who.space}` : 'Account'}
        onClick={() => setOpen(!open)}
      >
        <span class="avatar" aria-hidden="true">
          {name ? initial(name) : '?'}
        </span>
        {name && (
          <span class="account-name" data-whoami>
            {name}
          </span>
        )}
      </button>
      {open && (
        <div class="popover account-menu" id="account-menu" role="group" aria-label="Account">
          {who ? (
            <p class="account-who">
              <span class="muted small">Signed in as</span>
              <strong class="account-menu-name">{name}</strong>
              <span class="muted small">Space {who.space}</span>
            </p>
          ) : (
            <p class="account-who muted small">Signed in. Who you are shows once Loopback answers.</p>
          )}
          <button
            type="button"
            class="btn wide"
            onClick={() => signOut('You signed out. Your drafts on this device were removed.', true)}
          >
            <SignOutIcon /> Sign out
          </button>
        </div>
      )}
    </div>
  );
}

/**
 * A menu under a button (the account, the bell) closes on a click outside it or on Esc, which gives
 * the focus back to its button.
 */
function usePopover(open: boolean, setOpen: (o: boolean) => void, root: RefObject<HTMLElement>, button: RefObject<HTMLElement>) {
  // A layout effect: attached before the next event, so an Esc right after opening is never missed.
  useLayoutEffect(() => {
    if (!open) return;
    const onPointer = (e: PointerEvent) => {
      if (!root.current?.contains(e.target as Node)) setOpen(false);
    };
    // In the capture phase, so the page's own Esc (back to the list) does not also run.
    const onKey = (e: KeyboardEvent) => {
      if (e.key !== 'Escape') return;
      e.preventDefault();
      e.stopPropagation();
      setOpen(false);
      button.current?.focus();
    };
    document.addEventListener('pointerdown', onPointer);
    document.addEventListener('keydown', onKey, true);
    return () => {
      document.removeEventListener('pointerdown', onPointer);
      document.removeEventListener('keydown', onKey, true);
    };
  }, [open]);
}

/**
 * The bell: Web Push on this device. The button shows the state at a glance (a bell with a dot when
 * this device gets notifications, crossed out when it cannot); its menu says what the state means
 * and what to do: turn it on or off, allow notifications again, or, on an iPhone, add Loopback to
 * the Home Screen first.
 */
function Bell({ s }: { s: AppState }) {
  const [open, setOpen] = useState(false);
  const root = useRef<HTMLDivElement>(null);
  const button = useRef<HTMLButtonElement>(null);
  usePopover(open, setOpen, root, button);
  const p = s.push;
  const v = bellText(s);
  const crossed = p.kind === 'unsupported' || p.kind === 'denied' || p.kind === 'ios-home-screen';
  const busy = p.kind === 'working';
  return (
    <div class="popover-root" ref={root}>
      <button
        type="button"
        class={`icon-btn bell-btn bell-${p.kind}`}
        ref={button}
        aria-haspopup="true"
        aria-expanded={open}
        aria-controls="bell-menu"
        aria-label={`Notifications: ${v.short}`}
        aria-busy={busy ? 'true' : undefined}
        title={`Notifications: ${v.short}`}
        data-push={p.kind}
        onClick={() => setOpen(!open)}
      >
        {crossed ? <BellOffIcon /> : <BellIcon />}
        {p.kind === 'on' && <span class="bell-dot" aria-hidden="true" />}
      </button>
      {open && (
        <div class="popover bell-menu" id="bell-menu" role="group" aria-labelledby="bell-title">
          <p class="bell-title" id="bell-title">
            <strong>{v.title}</strong>
          </p>
          <p class="bell-text small">{v.text}</p>
          {p.kind === 'off' && (
            <button type="button" class="btn primary wide" onClick={() => void turnPushOn()}>
              <BellIcon /> Turn on for this device
            </button>
          )}
          {p.kind === 'on' && (
            <button type="button" class="btn wide" onClick={() => void turnPushOff()}>
              <BellOffIcon /> Turn off for this device
            </button>
          )}
          {p.kind === 'working' && p.doing !== 'check' && (
            <button type="button" class="btn wide" disabled>
              {p.doing === 'on' ? 'Turning on…' : 'Turning off…'}
            </button>
          )}
          {usesTabNotifications(p) && <TabNotifications permission={s.notifications} />}
          {s.pushNote && (
            <p class="bell-note small" role="alert">
              {s.pushNote}
            </p>
          )}
        </div>
      )}
    </div>
  );
}

/** Where Web Push does not work: the page's own notifications, while this tab is open (as before push). */
function TabNotifications({ permission }: { permission: AppState['notifications'] }) {
  if (permission === 'unsupported') return null;
  if (permission === 'granted') return <p class="bell-text small">This tab notifies you of new asks while it is open in the background.</p>;
  if (permission === 'denied') return <p class="bell-text small">Notifications are blocked for this site in this browser.</p>;
  return (
    <button type="button" class="btn wide" onClick={() => void enableNotifications()}>
      <BellIcon /> Notify me while this tab is open
    </button>
  );
}

/** What each state of the bell is called (`short`, on the button) and what it tells the person. */
function bellText(s: Pick<AppState, 'push'>): { short: string; title: string; text: string } {
  const p = s.push;
  switch (p.kind) {
    case 'on':
      return {
        short: 'on for this device',
        title: 'On for this device',
        text: 'This device gets a notification when an agent needs you, even with the inbox closed (not while you are looking at the inbox, which shows the ask already).',
      };
    case 'off':
      return {
        short: 'off for this device',
        title: 'Off for this device',
        text: 'Get a notification on this device when an agent needs you, even with the inbox closed.',
      };
    case 'working':
      return p.doing === 'check'
        ? { short: 'checking', title: 'Checking…', text: 'Finding out whether this device gets notifications.' }
        : {
            short: p.doing === 'on' ? 'turning on' : 'turning off',
            title: p.doing === 'on' ? 'Turning on…' : 'Turning off…',
            text: p.doing === 'on' ? 'Your browser may ask whether Loopback may show notifications: allow it.' : 'Taking this device off.',
          };
    case 'denied':
      return {
        short: 'blocked',
        title: 'Notifications are blocked',
        text:
          'This browser blocks notifications from Loopback. To allow them, open the site settings (the icon left of the address), ' +
          'set Notifications to Allow, and reload. On Android: Chrome menu, Settings, Site settings, Notifications. ' +
          'On an iPhone: Settings, Notifications, Loopback.',
      };
    case 'ios-home-screen':
      return {
        short: 'add Loopback to your Home Screen first',
        title: 'iPhone/iPad: add Loopback to your Home Screen first',
        text:
          'On iPhone and iPad, notifications work only in the Home Screen app (iOS 16.4 or later). In Safari, tap Share, ' +
          'then Add to Home Screen. Open Loopback from there, sign in (the Home Screen app keeps its own sign-in: paste your token), ' +
          'and turn notifications on.',
      };
    case 'unsupported':
      switch (p.why) {
        case 'insecure':
          return {
            short: 'not available on http://',
            title: 'Notifications need a secure address',
            text: 'Browsers show notifications only for https:// addresses (and localhost). Open Loopback over HTTPS to get them on this device.',
          };
        case 'server':
          return {
            short: 'not sent by this server',
            title: 'This Loopback sends no notifications',
            text: 'The server is older than this inbox and has no Web Push. Update it to get notifications on this device.',
          };
        case 'worker':
          return {
            short: 'not available here',
            title: 'Notifications are not available here',
            text: 'The inbox could not start its service worker in this browser (a private window, or a server that does not allow one), so this device cannot get notifications.',
          };
        default:
          return {
            short: 'not supported by this browser',
            title: 'This browser gets no notifications from Loopback',
            text: 'It has no service worker or Push API. On an iPhone or iPad, they need iOS 16.4 or later and Loopback on the Home Screen.',
          };
      }
  }
}

function initial(name: string): string {
  return (Array.from(name.trim())[0] ?? '?').toUpperCase();
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

/** Something about signing in the person should read (a link that was not used, and why). */
function NoticeBanner({ text }: { text: string }) {
  return (
    <div class="banner notice" role="alert" data-notice>
      <span>{text}</span>
      <button type="button" class="btn small" onClick={() => setNotice(null)}>
        Dismiss
      </button>
    </div>
  );
}

/**
 * A sign-in link names someone else than the person signed in: they choose, seeing both. The dialog
 * opens itself once; however it closes (a button, Esc, a navigation), only *Switch* switches.
 */
function SwitchDialog({ choice }: { choice: Choice }) {
  const ref = useRef<HTMLDialogElement>(null);
  useLayoutEffect(() => {
    const d = ref.current;
    if (!d) return;
    const onClose = () => resolveChoice(d.returnValue === 'switch');
    d.addEventListener('close', onClose);
    if (!d.open) d.showModal();
    return () => d.removeEventListener('close', onClose);
  }, [choice]);
  const current = choice.current ? displayName(choice.current) : null;
  const next = displayName(choice.next);
  return (
    <dialog class="switch-dialog" ref={ref} aria-labelledby="switch-title" aria-describedby="switch-why">
      <h2 id="switch-title">Switch to another sign-in?</h2>
      <p id="switch-why">
        The link you opened signs this browser in as someone else. Switch only if you opened it yourself, to sign in as them.
      </p>
      <dl class="identities">
        <div class="identity" data-identity="current">
          <dt>Signed in now</dt>
          <dd>
            <strong>{current ?? 'The sign-in kept on this device'}</strong>
            <span class="muted small">{choice.current ? `Space ${choice.current.space}` : 'Loopback did not say who it is'}</span>
          </dd>
        </div>
        <div class="identity" data-identity="next">
          <dt>The link</dt>
          <dd>
            <strong>{next}</strong>
            <span class="muted small">Space {choice.next.space}</span>
          </dd>
        </div>
      </dl>
      <p class="muted small">Switching removes the drafts kept on this device.</p>
      <form method="dialog" class="switch-actions">
        <button class="btn primary" type="submit" value="keep" autofocus>
          {current ? `Keep ${current}` : 'Keep the current sign-in'}
        </button>
        <button class="btn" type="submit" value="switch">
          Switch to {next}
        </button>
      </form>
    </dialog>
  );
}

function SignIn({ message, busy }: { message: string | null; busy: boolean }) {
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
            if (token.trim() && !busy) void signIn(token.trim());
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
          <button type="submit" class="btn primary wide" disabled={!token.trim() || busy}>
            {busy ? 'Signing in…' : 'Sign in'}
          </button>
        </form>
      </div>
    </main>
  );
}

/**
 * The shortcuts dialog. Whether it is open is the store's alone (openHelp, closeHelp): the dialog
 * follows each change of the store at once, never a render's effect (effects/help.ts).
 */
function Help() {
  const ref = useRef<HTMLDialogElement>(null);
  useLayoutEffect(() => (ref.current ? followHelp(ref.current) : undefined), []);
  return (
    <dialog class="help" ref={ref} aria-labelledby="help-title">
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
      <button class="btn primary wide" type="button" onClick={closeHelp}>
        Close
      </button>
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
      if (st.help || document.querySelector('dialog[open]')) return; // a dialog handles its own keys
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

function focusRow(id: string | null) {
  const row = id ? document.querySelector<HTMLElement>(`[data-ask-row="${CSS.escape(id)}"]`) : null;
  (row ?? document.querySelector<HTMLElement>('[data-ask-row]'))?.focus();
}

