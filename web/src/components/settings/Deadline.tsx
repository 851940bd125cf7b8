// The Settings page's Deadline section: the space's escalation (contract revision 4). An ask nobody
// answers for so many minutes is also sent to the other people of the space, and to a Slack channel
// if one is named. A person sets it here; agents cannot (their credential is refused the route).

import { useEffect, useState } from 'preact/hooks';
import { api, ApiError } from '../../api';
import { clockTime, type EscalationSettings } from '../../deadline';
import { actorName } from '../common';
import { useApp } from '../../state';

/** The contract's bound on afterMinutes (a week). */
const MAX_MINUTES = 10080;

export function DeadlineSettings() {
  const s = useApp();
  const [saved, setSaved] = useState<EscalationSettings | null>(null);
  const [minutes, setMinutes] = useState('0');
  const [toPeople, setToPeople] = useState(true);
  const [channel, setChannel] = useState('');
  const [busy, setBusy] = useState(false);
  const [note, setNote] = useState<{ error: boolean; text: string } | null>(null);

  const show = (e: EscalationSettings) => {
    setSaved(e);
    setMinutes(String(e.afterMinutes));
    setToPeople(e.afterMinutes === 0 ? true : e.toPeople);
    setChannel(e.slackChannel ?? '');
  };

  useEffect(() => {
    api('GET', '/settings/escalation')
      .then(show)
      .catch((err: unknown) => setNote({ error: true, text: err instanceof ApiError ? err.message : String(err) }));
  }, []);

  const n = Number(minutes);
  const problem =
    !/^\d+$/.test(minutes.trim()) || n > MAX_MINUTES
      ? `Give a whole number of minutes, from 0 (never) to ${MAX_MINUTES} (a week).`
      : n > 0 && !toPeople && !channel.trim()
        ? 'Choose whom to tell: the other people of this space, a Slack channel, or both.'
        : null;

  const save = async (e: Event) => {
    e.preventDefault();
    if (problem) return;
    setBusy(true);
    setNote(null);
    try {
      const body: { afterMinutes: number; toPeople: boolean; slackChannel?: string } = { afterMinutes: n, toPeople: n > 0 && toPeople };
      if (n > 0 && channel.trim()) body.slackChannel = channel.trim();
      const out = await api('PUT', '/settings/escalation', { body: body });
      show(out);
      setNote({ error: false, text: n === 0 ? 'Escalation is off.' : 'Saved. Asks made from now on escalate this way.' });
    } catch (err) {
      setNote({ error: true, text: err instanceof ApiError ? err.message : String(err) });
    } finally {
      setBusy(false);
    }
  };

  return (
    <section class="settings-section" aria-labelledby="settings-deadline">
      <h3 id="settings-deadline" class="section-title">
        Deadlines and escalation
      </h3>
      <p class="muted small">
        An agent may give an ask a deadline, and a default answer it takes if nobody answers by then; the inbox counts down to it. Here, choose
        what happens to an ask nobody answers for a while.
      </p>
      <form class="escalation-form" onSubmit={save}>
        <label class="field-label" for="escalate-after">
          Escalate after (minutes; 0 is never)
        </label>
        <input
          id="escalate-after"
          name="afterMinutes"
          type="text"
          inputMode="numeric"
          value={minutes}
          onInput={(e) => setMinutes((e.target as HTMLInputElement).value)}
          aria-describedby="escalate-why"
        />
        <label class="check">
          <input type="checkbox" name="toPeople" checked={toPeople} disabled={n === 0} onChange={(e) => setToPeople((e.target as HTMLInputElement).checked)} /> Tell
          the other people of this space
        </label>
        <label class="field-label" for="escalate-channel">
          Slack channel (optional)
        </label>
        <input
          id="escalate-channel"
          name="slackChannel"
          type="text"
          placeholder="#ops"
          value={channel}
          disabled={n === 0}
          onInput={(e) => setChannel((e.target as HTMLInputElement).value)}
        />
        <p id="escalate-why" class="reason" role="status" aria-live="polite">
          {problem ?? ''}
        </p>
        <button type="submit" class="btn primary" disabled={!!problem || busy}>
          {busy ? 'Saving…' : 'Save'}
        </button>
        {note && (
          <p class={note.error ? 'error-text' : 'muted small'} role="status">
            {note.text}
          </p>
        )}
        {saved?.updatedAt && (
          <p class="muted small" data-testid="escalation-updated">
            Last set by {actorName(saved.updatedBy, s.whoami?.actor)}, {clockTime(saved.updatedAt)}.
          </p>
        )}
      </form>
    </section>
  );
}
