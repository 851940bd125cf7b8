// The bell in the top bar: Web Push on this device (effects/webpush.ts), and the page's own
// notifications where push does not work.

import { useRef, useState } from 'preact/hooks';
import { usesTabNotifications } from '../push';
import { enableNotifications, turnPushOff, turnPushOn, type AppState } from '../state';
import { BellIcon, BellOffIcon } from './icons';
import { usePopover } from './popover';

/**
 * The bell: Web Push on this device. The button shows the state at a glance (a bell with a dot when
 * this device gets notifications, crossed out when it cannot); its menu says what the state means
 * and what to do: turn it on or off, allow notifications again, or, on an iPhone, add Loopback to
 * the Home Screen first.
 */
export function Bell({ s }: { s: AppState }) {
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
