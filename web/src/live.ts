// The event socket (docs/design/events.md). A browser cannot send headers on a WebSocket, so the page
// first asks for a one-time ticket with its token (POST /api/v1/events/tickets) and offers it as the
// subprotocol `loopback.ticket.<ticket>` beside `loopback.v1`. The server sends a snapshot, then every
// change. When the socket closes for any reason the page reconnects with a new ticket, waiting
// 1 s, 2 s, 4 s … up to 30 s (with jitter) between tries.
//
// What crosses the wire (contract revision 6, docs/design/inbox.md "Live"): a page that holds no
// asks yet reads the whole snapshot over HTTP (`GET /api/v1/snapshot`, gzipped by the binary and by
// CloudFront; API Gateway's socket has no compression) while it takes its ticket, shows it, and
// opens the socket offering the newest `updatedAt` it holds (`?since=`). A page that reconnects
// offers its watermark the same way. The socket's first frame is then a delta (`since` set: merged
// into what is held), or, when the server cannot send one (an older server, too much changed), the
// whole snapshot (replacing it).

import { api, ApiError, isForbidden } from './api';
import type { ErrorCode } from './codes';
import type { AskMark } from './marks';
import { compareTimes } from './time';
import type { Ask, EventTicket, Reply, ServerEvent, Snapshot } from './types';

/**
 * Revision 6's SnapshotEvent.since (spec/main.tsp, "r6: wire"), and revision 7's MarkEvent ("r7:
 * marks live": one of the person's own marks changed, on any device of theirs): the types follow
 * once the revisions are frozen.
 */
type Frame = (ServerEvent & { since?: string }) | MarkEvent;

export interface MarkEvent {
  type: 'mark.updated';
  mark: AskMark;
}

export type ConnState =
  | { status: 'connecting'; attempt: number }
  | { status: 'live' }
  | { status: 'retrying'; at: number; attempt: number; reason: string }
  | { status: 'offline' }
  | { status: 'stopped' };

export interface LiveHandlers {
  /** A snapshot: the whole state (`delta` false: replace what is held), or what changed since the watermark offered (merge). */
  snapshot(s: Snapshot, delta: boolean, alongside?: unknown): void;
  /**
   * Read beside the whole snapshot over HTTP (the person's marks), so the first list is drawn once
   * and right; what it resolves to is handed to snapshot. A failure is the handler's to catch.
   */
  alongside?(): Promise<unknown>;
  ask(type: 'ask.opened' | 'ask.updated', a: Ask): void;
  /** One of the person's own marks changed (on this device or another): the mark as it stands. */
  mark?(m: AskMark): void;
  state(s: ConnState): void;
  /** The ticket was refused with 403 auth.forbidden: the credential is an agent's, and retrying is no use. */
  forbidden(): void;
}

/**
 * The largest frame the page sends on the socket: what API Gateway carries (128 KB, as 128,000
 * bytes). A reply that does not fit goes over HTTP.
 */
export const MAX_SOCKET_FRAME = 128_000;
/** How long a reply sent on the socket waits for its answer before the page asks the ask instead. */
export const SOCKET_REPLY_TIMEOUT_MS = 10_000;

/**
 * The socket closed (or went quiet) before a reply's answer came: the reply may or may not have
 * been made. The caller reads the ask to know (effects/asks.ts).
 */
export class SocketLost extends Error {}

export const BACKOFF_BASE_MS = 1000;
export const BACKOFF_MAX_MS = 30_000;
const SNAPSHOT_TIMEOUT_MS = 15_000;

/** How long to wait before try number `attempt` (1-based), with ±20 % jitter from `rand`. */
export function backoff(attempt: number, rand: () => number = Math.random): number {
  const base = Math.min(BACKOFF_MAX_MS, BACKOFF_BASE_MS * 2 ** Math.max(0, attempt - 1));
  return Math.round(base * (0.8 + 0.4 * rand()));
}

/** The newest `updatedAt` of a snapshot's asks and `mark`; null when there is none. */
export function newest(s: Snapshot, mark: string | null): string | null {
  let m = mark;
  for (const a of [...(s.open ?? []), ...(s.recent ?? [])]) if (m === null || compareTimes(a.updatedAt, m) > 0) m = a.updatedAt;
  return m;
}

export class Live {
  private ws: WebSocket | null = null;
  private timer: ReturnType<typeof setTimeout> | null = null;
  private attempt = 0;
  private running = false;
  private generation = 0;
  /** The newest `updatedAt` this session has had from the server (snapshots and frames), offered as `since`. */
  private mark: string | null = null;
  /** The socket's snapshot has come: it is live, and takes replies (contract revision 8). */
  private ready = false;
  /** Replies sent on the socket, waiting for their answers, by ref. */
  private pending = new Map<string, { resolve(a: Ask): void; reject(e: Error): void; timer: ReturnType<typeof setTimeout> }>();
  private refs = 0;

  constructor(private readonly h: LiveHandlers) {}

  start(): void {
    if (this.running) return;
    this.running = true;
    addEventListener('online', this.onOnline);
    addEventListener('offline', this.onOffline);
    document.addEventListener('visibilitychange', this.onVisible);
    void this.connect();
  }

  stop(): void {
    this.running = false;
    this.generation++;
    removeEventListener('online', this.onOnline);
    removeEventListener('offline', this.onOffline);
    document.removeEventListener('visibilitychange', this.onVisible);
    this.clearTimer();
    this.closeSocket();
    this.h.state({ status: 'stopped' });
  }

  /**
   * Sends a reply on the socket (contract revision 8: the same reply as `POST …/reply`, without a
   * request of its own), or returns null when the socket cannot take it now (not live, or the
   * reply too large for a frame): then send it over HTTP. The promise gives the ask as the reply
   * left it; a refusal is an ApiError, as over HTTP; SocketLost when the socket closed first.
   */
  reply(askId: string, reply: Reply): Promise<Ask> | null {
    const ws = this.ws;
    if (!ws || !this.ready || ws.readyState !== WebSocket.OPEN) return null;
    const ref = String(++this.refs);
    const frame = JSON.stringify({ type: 'ask.reply', ref, askId, reply });
    if (new TextEncoder().encode(frame).length > MAX_SOCKET_FRAME) return null;
    return new Promise<Ask>((resolve, reject) => {
      const timer = setTimeout(() => this.settle(ref, null, new SocketLost('no answer on the socket')), SOCKET_REPLY_TIMEOUT_MS);
      this.pending.set(ref, { resolve, reject, timer });
      try {
        ws.send(frame);
      } catch (err) {
        this.settle(ref, null, new SocketLost((err as Error).message));
      }
    });
  }

  private settle(ref: string, a: Ask | null, err: Error | null): void {
    const p = this.pending.get(ref);
    if (!p) return;
    this.pending.delete(ref);
    clearTimeout(p.timer);
    if (a) p.resolve(a);
    else p.reject(err ?? new SocketLost('no answer'));
  }

  /** Every reply still waiting is told the socket is gone. */
  private lose(why: string): void {
    for (const ref of [...this.pending.keys()]) this.settle(ref, null, new SocketLost(why));
  }

  /** Skips the wait and tries again now. */
  retryNow(): void {
    if (!this.running || this.ws) return;
    this.clearTimer();
    void this.connect();
  }

  private onOnline = () => this.retryNow();
  private onOffline = () => {
    if (!this.running) return;
    this.generation++;
    this.clearTimer();
    this.closeSocket();
    this.h.state({ status: 'offline' });
  };
  private onVisible = () => {
    if (document.visibilityState === 'visible') this.retryNow();
  };

  private async connect(): Promise<void> {
    const gen = ++this.generation;
    this.attempt++;
    this.h.state({ status: 'connecting', attempt: this.attempt });
    let ticket: EventTicket;
    try {
      // Nothing held yet: the whole snapshot over HTTP (compressed) beside the ticket, then a delta
      // over the socket. Only its asks are taken from it; the socket says when the page is live.
      const first = this.mark === null ? Promise.all([api('GET', '/snapshot'), this.h.alongside?.()]) : null;
      const t = api('POST', '/events/tickets');
      t.catch(() => undefined); // awaited below; not an unhandled rejection if the snapshot fails first
      if (first) {
        const [snap, beside] = await first;
        if (gen !== this.generation) return;
        this.mark = newest(snap, null);
        this.h.snapshot(snap, false, beside);
      }
      ticket = await t;
    } catch (err) {
      if (gen !== this.generation) return;
      if (err instanceof ApiError && err.status === 401) {
        this.stop(); // the app signs out
        return;
      }
      if (isForbidden(err)) {
        this.stop();
        this.h.forbidden();
        return;
      }
      this.retry(gen, (err as Error).message);
      return;
    }
    if (gen !== this.generation) return;

    const since = this.mark;
    const url =
      (location.protocol === 'https:' ? 'wss://' : 'ws://') + location.host + '/api/v1/events' + (since ? '?since=' + encodeURIComponent(since) : '');
    let ws: WebSocket;
    try {
      ws = new WebSocket(url, ['loopback.v1', 'loopback.ticket.' + ticket.ticket]);
    } catch (err) {
      this.retry(gen, (err as Error).message);
      return;
    }
    this.ws = ws;
    let gotSnapshot = false;
    const watchdog = setTimeout(() => {
      if (!gotSnapshot) ws.close(4000, 'no snapshot');
    }, SNAPSHOT_TIMEOUT_MS);

    ws.onmessage = (ev) => {
      if (gen !== this.generation) return;
      let frame: Frame;
      try {
        frame = JSON.parse(String(ev.data)) as Frame;
      } catch {
        return;
      }
      if (frame.type === 'snapshot') {
        gotSnapshot = true;
        clearTimeout(watchdog);
        this.attempt = 0;
        const delta = typeof frame.since === 'string';
        this.mark = newest(frame.snapshot, delta ? this.mark : null);
        this.h.snapshot(frame.snapshot, delta);
        this.ready = true;
        this.h.state({ status: 'live' });
      } else if ((frame.type === 'ask.opened' || frame.type === 'ask.updated') && frame.ask) {
        if (this.mark === null || compareTimes(frame.ask.updatedAt, this.mark) > 0) this.mark = frame.ask.updatedAt;
        this.h.ask(frame.type, frame.ask);
      } else if (frame.type === 'mark.updated' && frame.mark && typeof frame.mark.askId === 'string') {
        this.h.mark?.(frame.mark);
      } else if (frame.type === 'ask.replied' && frame.ask) {
        // Not a change in the socket's order (on AWS it comes before the stream's): the watermark
        // is left to the changes, as it is for an HTTP reply's response.
        this.settle(frame.ref, frame.ask, null);
      } else if (frame.type === 'request.failed' && frame.problem && frame.ref) {
        this.settle(frame.ref, null, new ApiError(frame.status, frame.problem.code as ErrorCode, frame.problem.message));
      }
    };
    ws.onclose = (ev) => {
      clearTimeout(watchdog);
      if (this.ws === ws) {
        this.ws = null;
        this.ready = false;
        this.lose('the socket closed');
      }
      if (gen !== this.generation) return;
      this.retry(gen, ev.reason || (gotSnapshot ? 'connection lost' : 'could not connect'));
    };
  }

  private retry(gen: number, reason: string): void {
    if (!this.running || gen !== this.generation) return;
    if (typeof navigator !== 'undefined' && navigator.onLine === false) {
      this.h.state({ status: 'offline' });
      return; // 'online' brings it back
    }
    const wait = backoff(Math.max(1, this.attempt));
    this.h.state({ status: 'retrying', at: Date.now() + wait, attempt: this.attempt, reason });
    this.clearTimer();
    this.timer = setTimeout(() => {
      this.timer = null;
      if (this.running && gen === this.generation) void this.connect();
    }, wait);
  }

  private clearTimer(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
  }

  private closeSocket(): void {
    const ws = this.ws;
    this.ws = null;
    this.ready = false;
    this.lose('the socket was closed');
    if (ws) {
      ws.onmessage = null;
      ws.onclose = null;
      ws.close(1000, 'bye');
    }
  }
}
