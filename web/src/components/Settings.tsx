// The Settings page: where Loopback reaches the person besides this inbox, and the space's rules
// for asks nobody answers. One section per surface, each in its own file under settings/.

import { useLayoutEffect, useRef } from 'preact/hooks';
import { navigate } from '../state';
import { BackIcon } from './icons';
import { DeadlineSettings } from './settings/Deadline';
import { MailSettings } from './settings/Mail';
import { PasskeySettings } from './settings/Passkeys';
import { PeopleSettings } from './settings/People';
import { PushSettings } from './settings/Push';
import { SlackSettings } from './settings/Slack';

export function SettingsPage() {
  const heading = useRef<HTMLHeadingElement>(null);
  useLayoutEffect(() => heading.current?.focus({ preventScroll: true }), []);
  return (
    <article class="settings-page" aria-labelledby="settings-title">
      <button type="button" class="back-btn" onClick={() => navigate({ name: 'inbox' })}>
        <BackIcon /> <span>Inbox</span>
      </button>
      <header class="rules-head">
        <h2 id="settings-title" class="ask-title" tabIndex={-1} ref={heading}>
          Settings
        </h2>
        <p class="muted">How you sign in, where Loopback reaches you besides this inbox, and what happens when nobody answers.</p>
      </header>
      <PasskeySettings />
      <PeopleSettings />
      <SlackSettings />
      <MailSettings />
      <PushSettings />
      <DeadlineSettings />
    </article>
  );
}
