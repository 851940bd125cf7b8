// The banners under the top bar: a revision mismatch with the server, and a note about signing in.

import { setNotice } from '../state';
import { fullTime } from '../time';

export function ReloadBanner({ kind }: { kind: 'server-newer' | 'reload' }) {
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
export function NoticeBanner({ text }: { text: string }) {
  return (
    <div class="banner notice" role="alert" data-notice>
      <span>{text}</span>
      <button type="button" class="btn small" onClick={() => setNotice(null)}>
        Dismiss
      </button>
    </div>
  );
}

/** Offline: the asks shown are what this device heard last, and nothing can be sent. */
export function StaleBanner({ since }: { since: string }) {
  return (
    <div class="banner stale" role="status" data-stale>
      <span>
        Offline: showing what this page last heard from Loopback, at {fullTime(since)}. Sending is off until it is back;
        your drafts are kept.
      </span>
    </div>
  );
}
