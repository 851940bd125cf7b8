// Reading and answering asks: one ask on its own, a reply (on the event socket when it is live,
// else over HTTP), the history page by page, and the project filter kept on this device.

import { api, ApiError } from '../api';
import { getState, PROJECT_KEY, setState } from '../app';
import { clearDraft } from '../drafts';
import { SocketLost } from '../live';
import { socketReply } from './socket';
import { askAbsorbed, askMissing, askRead, historyFailed, historyLoading, historyPage } from '../store';
import type { Ask, Reply } from '../types';
import { toast } from './toasts';

/** Reads an ask the socket does not hold (an older closed one). */
export async function loadAsk(id: string): Promise<void> {
  try {
    const a = await api('GET', '/asks/{id}', { path: { id } });
    setState((s) => askRead(s, a));
  } catch (err) {
    if (err instanceof ApiError && err.status === 404) {
      setState((s) => askMissing(s, id));
    } else {
      toast((err as Error).message, 'error');
    }
  }
}

/**
 * Sends a reply. On success the ask as the server left it is merged in, and the ask's draft is
 * removed. A refusal is shown and rethrown; a 409 (someone else moved first) also refreshes the ask.
 */
export async function sendReply(a: Ask, reply: Reply, quiet = false): Promise<Ask> {
  try {
    // A dismissal goes by its own route (revision 6), which takes it whoever's move it is: the way
    // out of an ask whose agent owes a turn and is gone.
    const updated =
      reply.outcome === 'dismissed' ? await api('POST', '/asks/{id}/dismiss', { path: { id: a.id } }) : await replyToAsk(a, reply);
    clearDraft(a.id);
    setState((s) => askAbsorbed(s, updated));
    if (!quiet) toast(doneMessage(reply), 'ok');
    return updated;
  } catch (err) {
    if (err instanceof ApiError && err.status === 409 && err.code !== 'reload') {
      void loadAsk(a.id);
    }
    if (!(err instanceof ApiError && err.status === 401)) toast(problemText(err), 'error');
    throw err;
  }
}

/**
 * Makes a reply: on the event socket when it is live (contract revision 8), which spares the
 * answer a request of its own and wakes the agent sooner, else with POST …/reply. A socket that
 * closes before its answer leaves it unknown whether the reply was made: the ask says, and only a
 * reply not made goes again over HTTP. A credential refused on the socket is refused over HTTP too,
 * where the page's sign-out follows.
 */
async function replyToAsk(a: Ask, reply: Reply): Promise<Ask> {
  const viaSocket = socketReply(a.id, reply);
  if (viaSocket) {
    try {
      return await viaSocket;
    } catch (err) {
      if (err instanceof SocketLost) {
        const now = await api('GET', '/asks/{id}', { path: { id: a.id } });
        if (replyMade(a, now, getState().whoami?.actor.id)) return now;
      } else if (!(err instanceof ApiError && err.status === 401)) {
        throw err;
      }
    }
  }
  return api('POST', '/asks/{id}/reply', { path: { id: a.id }, body: reply });
}

/** Whether the ask, read again, holds a person's turn after those of the ask as it was replied to: this person's, when known. */
export function replyMade(before: Ask, now: Ask, me: string | undefined): boolean {
  return now.thread.slice(before.thread.length).some((e) => e.author === 'human' && (me === undefined || e.by?.id === me));
}

function doneMessage(r: Reply): string {
  switch (r.outcome) {
    case 'answered':
      return 'Answer sent.';
    case 'approved':
      return 'Approved.';
    case 'changes_requested':
      return 'Changes requested.';
    case 'follow_up':
      return 'Question sent to the agent.';
    case 'dismissed':
      return 'Dismissed.';
    case 'responded':
      return 'Replies sent.';
    case 'allowed':
      return r.remember ? 'Allowed, and the rule is made.' : 'Allowed.';
    case 'denied':
      return r.remember ? 'Denied, and the rule is made.' : 'Denied.';
  }
}

export function problemText(err: unknown): string {
  if (err instanceof ApiError) {
    switch (err.code) {
      case 'ask.closed':
        return 'This ask is already closed; it was answered elsewhere.';
      case 'ask.awaiting_agent':
        return "It is the agent's move on this ask now.";
      case 'reload':
        return 'This page is newer than the server. Reload to continue.';
      default:
        return err.message;
    }
  }
  return (err as Error)?.message ?? String(err);
}

/** Closed asks read a page at a time, as the server's filtered history is (Search.tsx). */
export const HISTORY_PAGE = 50;

export async function loadHistoryPage(): Promise<void> {
  const h = getState().history;
  if (h.loading || h.nextBefore === undefined) return;
  setState(historyLoading);
  try {
    const page = await api('GET', '/asks', { query: { limit: HISTORY_PAGE, before: h.nextBefore || undefined } });
    setState((s) => historyPage(s, page));
  } catch (err) {
    setState((s) => historyFailed(s, problemText(err)));
  }
}

export function setProject(project: string): void {
  try {
    if (project) localStorage.setItem(PROJECT_KEY, project);
    else localStorage.removeItem(PROJECT_KEY);
  } catch {
    // not kept
  }
  setState({ project });
}
