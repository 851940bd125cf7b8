// The signed-in inbox's frame (the list beside the ask, the bars and dialogs around them), or the
// sign-in page. Each view is its own file in components/.

import { useEffect } from 'preact/hooks';
import { loadHighlighter } from '../highlight';
import { openAsks } from '../merge';
import { undoPending, useApp, type AppState } from '../state';
import { AskView } from './AskView';
import { AgentSetup, ListPane, type Tab } from './AskList';
import { NoticeBanner, ReloadBanner, StaleBanner } from './Banners';
import { RulesPage } from './Rules';
import { AgentsPage } from './Agents';
import { ConnectPage } from './Connect';
import { SettingsPage } from './Settings';
import { Help } from './Help';
import { InboxIcon } from './icons';
import { lastTab, useShortcuts } from './shortcuts';
import { SignIn } from './SignIn';
import { PairDialog } from './Pairing';
import { usePairDialog } from '../pairing';
import { SwitchDialog } from './SwitchDialog';
import { TopBar } from './TopBar';

export function App() {
  const s = useApp();
  const pairing = usePairDialog();
  useShortcuts();
  // What only an open ask needs loads once the list is drawn, when the page is idle: so the list
  // never waits for it, and an ask opened later rarely does (highlight.ts).
  useEffect(() => {
    if (s.liveReady) whenIdle(() => void loadHighlighter().catch(() => {}));
  }, [s.liveReady]);
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
      {s.staleSince && <StaleBanner since={s.staleSince} />}
      {s.route.name === 'rules' ? (
        <main id="main" class="layout-page">
          <RulesPage focus={s.route.focus} />
        </main>
      ) : s.route.name === 'agents' ? (
        <main id="main" class="layout-page">
          <AgentsPage />
        </main>
      ) : s.route.name === 'connect' ? (
        <main id="main" class="layout-page">
          <ConnectPage key={s.route.id} id={s.route.id} />
        </main>
      ) : s.route.name === 'settings' ? (
        <main id="main" class="layout-page">
          <SettingsPage />
        </main>
      ) : (
        <main id="main" class={`layout ${detail ? 'has-detail' : 'no-detail'}`}>
          <aside class="pane-list" aria-label={tab === 'history' ? 'History' : 'Open asks'}>
            <ListPane tab={tab} />
          </aside>
          <section class="pane-detail" aria-label="Ask">
            {s.route.name === 'ask' ? <AskView key={s.route.id} id={s.route.id} /> : <Placeholder s={s} tab={tab} />}
          </section>
        </main>
      )}
      {s.toast && (
        <div class={`toast toast-${s.toast.kind}`} role={s.toast.kind === 'error' ? 'alert' : 'status'}>
          <span>{s.toast.text}</span>
          {s.toast.undo && s.pending && (
            <button type="button" class="toast-undo" onClick={() => undoPending()} title="Undo (z)">
              Undo
            </button>
          )}
        </div>
      )}
      <div id="announcer" class="sr-only" aria-live="polite" aria-atomic="true" />
      <Help />
      {s.choice && <SwitchDialog choice={s.choice} />}
      {pairing && <PairDialog />}
    </div>
  );
}

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
      {tab === 'inbox' && s.liveReady && s.live.size === 0 && <AgentSetup />}
      <p class="muted small">
        Press <kbd>j</kbd>/<kbd>k</kbd> to move through the list, <kbd>?</kbd> for all shortcuts.
      </p>
    </div>
  );
}

/** Runs f when the page is idle (at the latest after 5 s). */
function whenIdle(f: () => void): void {
  if (typeof requestIdleCallback === 'function') requestIdleCallback(f, { timeout: 5000 });
  else setTimeout(f, 200);
}
