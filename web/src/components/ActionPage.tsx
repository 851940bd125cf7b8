// An action link's confirmation page (/act#<token>): what the link would answer, and a button
// whose POST answers it. The token rides in the fragment, which no browser sends to a server or in
// a Referer, and leaves the address bar at once. Opening the page (a GET, a mail scanner's
// prefetch) never answers: only the button does. It works signed in or not: the signed token,
// made for one person, one ask and a few replies, is the credential.

import { useEffect, useState } from 'preact/hooks';
import { LogoIcon } from './icons';

/**
 * The contract's ActionView and ActionChoice (revision 4). Written here until revision 4 is frozen
 * and contract.gen.ts (which reads frozen revisions only) has them.
 */
interface ActionChoice {
  label: string;
  reply: { outcome: string };
}
export interface ActionView {
  askId: string;
  kind: string;
  title: string;
  project?: string;
  person: { id: string; name?: string };
  via: string;
  choices: ActionChoice[];
  expiresAt: string;
  status: string;
  used: boolean;
  answered?: string;
}

type Phase =
  | { name: 'loading' }
  | { name: 'ready'; view: ActionView }
  | { name: 'sending'; view: ActionView; choice: number }
  | { name: 'done'; view: ActionView }
  | { name: 'refused'; message: string; view?: ActionView };

/** Takes the token from the fragment and clears the fragment from the address bar and history. */
export function takeActionToken(loc: Location = location, hist: History = history): string {
  const token = decodeURIComponent(loc.hash.replace(/^#/, '')).trim();
  hist.replaceState(null, '', loc.pathname);
  return token;
}

async function call(method: 'GET' | 'POST', token: string, choice?: number): Promise<ActionView> {
  const init: RequestInit = { method, cache: 'no-store', referrerPolicy: 'no-referrer', credentials: 'omit' };
  if (method === 'POST') {
    init.headers = { 'Content-Type': 'application/json' };
    init.body = JSON.stringify({ choice: choice ?? 0 });
  }
  const res = await fetch('/api/v1/actions/' + encodeURIComponent(token), init);
  const body = (await res.json().catch(() => null)) as (ActionView & { message?: string }) | null;
  if (!res.ok) throw new Error(body?.message ?? `The link was refused (${res.status}).`);
  return body as ActionView;
}

function who(v: ActionView): string {
  return v.person.name || v.person.id;
}

export function ActionPage({ token }: { token: string }) {
  const [phase, setPhase] = useState<Phase>({ name: 'loading' });
  useEffect(() => {
    if (!token) {
      setPhase({ name: 'refused', message: 'This link carries no answer. Open the ask in the inbox instead.' });
      return;
    }
    call('GET', token).then(
      (view) => setPhase(view.used || view.status === 'closed' ? { name: 'refused', message: view.answered ?? 'This ask is closed.', view } : { name: 'ready', view }),
      (e: Error) => setPhase({ name: 'refused', message: e.message }),
    );
  }, [token]);

  const answer = (view: ActionView, choice: number) => {
    setPhase({ name: 'sending', view, choice });
    call('POST', token, choice).then(
      (after) => setPhase({ name: 'done', view: after }),
      (e: Error) => setPhase({ name: 'refused', message: e.message, view }),
    );
  };

  const view = 'view' in phase ? phase.view : undefined;
  return (
    <main class="signin action-page">
      <div class="signin-card">
        <h1 class="brand big">
          <LogoIcon size={30} />
          <span>Loopback</span>
        </h1>
        {phase.name === 'loading' && <p aria-busy="true">Reading the link…</p>}
        {view && (
          <section aria-labelledby="action-title">
            {view.project && <p class="muted">{view.project}</p>}
            <h2 id="action-title" class="ask-title">
              {view.title}
            </h2>
          </section>
        )}
        {(phase.name === 'ready' || phase.name === 'sending') && (
          <>
            <p>
              Answer as <strong>{who(phase.view)}</strong>: nothing is sent until you press a button.
            </p>
            <div class="action-choices">
              {phase.view.choices.map((c, i) => (
                <button
                  key={i}
                  type="button"
                  class="btn primary big"
                  data-choice={i}
                  disabled={phase.name === 'sending'}
                  onClick={() => answer(phase.view, i)}
                >
                  {c.label}
                </button>
              ))}
            </div>
            <p class="muted">
              Or <a href={'/asks/' + encodeURIComponent(phase.view.askId)}>open it in the inbox</a> to answer in your own words.
            </p>
          </>
        )}
        {phase.name === 'done' && (
          <p class="signin-message" role="status" data-state="done">
            Done. {phase.view.answered}
          </p>
        )}
        {phase.name === 'refused' && (
          <p class="signin-message" role="alert" data-state="refused">
            {phase.message}
          </p>
        )}
      </div>
    </main>
  );
}
