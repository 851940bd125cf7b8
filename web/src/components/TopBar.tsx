// The bar across the top of the signed-in inbox: the brand, the event socket's state, the bell, the
// shortcuts' help and the account menu.

import { useRef, useState } from 'preact/hooks';
import { displayName } from '../auth';
import { setPairDialog } from '../pairing';
import { navigate, openHelp, retryLive, signOut, type AppState } from '../state';
import type { Whoami } from '../types';
import { Bell } from './Bell';
import { useNow } from './common';
import { HelpIcon, LogoIcon, RulesIcon, SignOutIcon } from './icons';
import { usePopover } from './popover';

export function TopBar({ s }: { s: AppState }) {
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
      <a
        class={`nav-link ${s.route.name === 'rules' ? 'on' : ''}`}
        href="/rules"
        aria-current={s.route.name === 'rules' ? 'page' : undefined}
        title="Rules that decide approvals (g r)"
        onClick={(e) => {
          if (e.button !== 0 || e.metaKey || e.ctrlKey || e.shiftKey || e.altKey) return;
          e.preventDefault();
          navigate({ name: 'rules' });
        }}
      >
        <RulesIcon />
        <span class="nav-label">Rules</span>
      </a>
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
          <a
            class="btn wide ghost account-rules"
            href="/rules"
            onClick={(e) => {
              if (e.button !== 0 || e.metaKey || e.ctrlKey || e.shiftKey || e.altKey) return;
              e.preventDefault();
              setOpen(false);
              navigate({ name: 'rules' });
            }}
          >
            <RulesIcon /> Rules
          </a>
          <a
            class="btn wide ghost account-agents"
            href="/agents"
            onClick={(e) => {
              if (e.button !== 0 || e.metaKey || e.ctrlKey || e.shiftKey || e.altKey) return;
              e.preventDefault();
              setOpen(false);
              navigate({ name: 'agents' });
            }}
          >
            Connected agents
          </a>
          <button
            type="button"
            class="btn wide ghost account-pair"
            onClick={() => {
              setOpen(false);
              setPairDialog(true);
            }}
          >
            Pair a phone
          </button>
          <a
            class="btn wide ghost account-settings"
            href="/settings"
            onClick={(e) => {
              if (e.button !== 0 || e.metaKey || e.ctrlKey || e.shiftKey || e.altKey) return;
              e.preventDefault();
              setOpen(false);
              navigate({ name: 'settings' });
            }}
          >
            Settings
          </a>
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
