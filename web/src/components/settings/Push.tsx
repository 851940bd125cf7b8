// The Settings page's Push section: the person's quiet hours (contract revision 4,
// GET/PUT/DELETE /api/v1/push/quiet-hours), when nothing is pushed to their devices. Each person
// sets their own; no agent credential can (the routes are persons-only).

import { useEffect, useId, useState } from 'preact/hooks';
import { api, ApiError } from '../../api';

/** QuietHours in spec/main.tsp (revision 4, not yet in the generated types, which follow the newest frozen revision). */
export interface QuietHours {
  start: string;
  end: string;
  timeZone: string;
}

// The routes are revision 4's: called through the untyped form of api() until r4 is frozen and
// src/contract.gen.ts has them.
const call = api as unknown as (method: string, route: string, input?: { body?: unknown }) => Promise<unknown>;

export async function readQuietHours(): Promise<QuietHours | null> {
  try {
    return (await call('GET', '/push/quiet-hours')) as QuietHours;
  } catch (err) {
    if (err instanceof ApiError && err.status === 404) return null;
    throw err;
  }
}

/** This browser's IANA time zone, the default for new quiet hours. */
function browserZone(): string {
  try {
    return Intl.DateTimeFormat().resolvedOptions().timeZone || 'UTC';
  } catch {
    return 'UTC';
  }
}

/** The zones this browser knows, for the list to pick from. */
function zones(): string[] {
  const i = Intl as unknown as { supportedValuesOf?: (k: string) => string[] };
  try {
    return i.supportedValuesOf?.('timeZone') ?? [];
  } catch {
    return [];
  }
}

export function PushSettings() {
  const id = useId();
  const [saved, setSaved] = useState<QuietHours | null | undefined>(undefined);
  const [f, setF] = useState<QuietHours>({ start: '22:00', end: '07:00', timeZone: browserZone() });
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const [status, setStatus] = useState('');

  useEffect(() => {
    readQuietHours().then(
      (q) => {
        setSaved(q);
        if (q) setF(q);
      },
      (err: Error) => {
        setSaved(null);
        setError(err.message);
      },
    );
  }, []);

  const save = async () => {
    setBusy(true);
    setError(null);
    try {
      const q = (await call('PUT', '/push/quiet-hours', { body: f })) as QuietHours;
      setSaved(q);
      setF(q);
      setStatus(`Quiet from ${q.start} to ${q.end} (${q.timeZone}).`);
    } catch (err) {
      setError((err as Error).message);
    } finally {
      setBusy(false);
    }
  };

  const clear = async () => {
    setBusy(true);
    setError(null);
    try {
      await call('DELETE', '/push/quiet-hours');
      setSaved(null);
      setStatus('No quiet hours: pushes reach you at any hour.');
    } catch (err) {
      setError((err as Error).message);
    } finally {
      setBusy(false);
    }
  };

  const known = zones();
  return (
    <section class="settings-section" aria-labelledby={`push-title-${id}`}>
      <h3 id={`push-title-${id}`}>Notifications</h3>
      <p class="muted">
        Answer a question or approve a review from the notification itself, where your device shows buttons (not on iPhone: there a tap opens the
        ask). One notification per project. During your quiet hours nothing rings: asks wait here in the inbox, and their notifications are not
        sent later.
      </p>
      <form
        class="quiet-hours-form reply-panel"
        aria-label="Quiet hours"
        onSubmit={(e) => {
          e.preventDefault();
          void save();
        }}
      >
        <div class="quiet-hours-times">
          <label class="field-label" for={`quiet-start-${id}`}>
            Quiet from
          </label>
          <input id={`quiet-start-${id}`} name="start" type="time" required value={f.start} onInput={(e) => setF({ ...f, start: (e.target as HTMLInputElement).value })} />
          <label class="field-label" for={`quiet-end-${id}`}>
            until
          </label>
          <input id={`quiet-end-${id}`} name="end" type="time" required value={f.end} onInput={(e) => setF({ ...f, end: (e.target as HTMLInputElement).value })} />
        </div>
        <label class="field-label" for={`quiet-zone-${id}`}>
          Time zone
        </label>
        <input
          id={`quiet-zone-${id}`}
          name="timeZone"
          list={`quiet-zones-${id}`}
          required
          autoComplete="off"
          spellcheck={false}
          value={f.timeZone}
          onInput={(e) => setF({ ...f, timeZone: (e.target as HTMLInputElement).value })}
        />
        <datalist id={`quiet-zones-${id}`}>
          {known.map((z) => (
            <option key={z} value={z} />
          ))}
        </datalist>
        <p class="hint muted small" role="status" aria-live="polite">
          {saved === undefined ? 'Reading your quiet hours…' : status || (saved ? `Quiet from ${saved.start} to ${saved.end} (${saved.timeZone}).` : 'No quiet hours set.')}
        </p>
        {error && (
          <p class="error-text" role="alert">
            {error}
          </p>
        )}
        <div class="actions">
          <button type="submit" class="btn primary" disabled={busy || saved === undefined}>
            {busy ? 'Saving…' : 'Save quiet hours'}
          </button>
          {saved && (
            <button type="button" class="btn ghost" disabled={busy} onClick={() => void clear()}>
              No quiet hours
            </button>
          )}
        </div>
      </form>
    </section>
  );
}
