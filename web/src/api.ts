// The HTTP API, as the person's client. Every request carries the bearer token and the contract
// revision this page was built for (`Loopback-Revision`); every response's own `Loopback-Revision`
// is compared with it, so a newer server is noticed on any call, and a `409 reload` (this page is
// newer than the server, as after a rollback) is reported the same way.

import { REVISION, type Problem } from './types';

export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
  ) {
    super(message);
  }
}

export interface ApiHooks {
  /** The token was refused (401): sign out and say why. */
  unauthorized(message: string): void;
  /** 'server-newer': responses name a newer revision; 'reload': the server refused this page as newer than itself. */
  reload(kind: 'server-newer' | 'reload'): void;
}

let token: string | null = null;
let hooks: ApiHooks = { unauthorized() {}, reload() {} };

export function setToken(t: string | null): void {
  token = t;
}

export function setHooks(h: ApiHooks): void {
  hooks = h;
}

/** Notes the revision a response was written in. */
export function noteRevision(res: Response): void {
  const r = Number(res.headers.get('Loopback-Revision'));
  if (Number.isInteger(r) && r > REVISION) hooks.reload('server-newer');
}

/** Sends a request to the API under /api/v1; throws ApiError with the server's Problem. */
export async function api<T>(method: string, path: string, body?: unknown): Promise<T> {
  const res = await request(method, path, body);
  if (res.status === 204) return undefined as T;
  return (await res.json()) as T;
}

/** Like api, but returns the raw response (for files). */
export async function request(method: string, path: string, body?: unknown, signal?: AbortSignal): Promise<Response> {
  if (!token) throw new ApiError(401, 'auth.unauthorized', 'Not signed in.');
  try {
    return await send(token, method, path, body, signal);
  } catch (err) {
    if (err instanceof ApiError) {
      if (err.status === 401) hooks.unauthorized(err.message);
      else if (err.status === 409 && err.code === 'reload') hooks.reload('reload');
    }
    throw err;
  }
}

/**
 * Reads the API with a token that is not (yet) the page's: the one a sign-in link or the sign-in
 * form brings, checked before it is kept. A refusal is only thrown, never reported to the hooks, so
 * a bad token in a link cannot sign out the person who is signed in.
 */
export async function probe<T>(withToken: string, method: string, path: string): Promise<T> {
  const res = await send(withToken, method, path);
  return (await res.json()) as T;
}

/**
 * Sends a request with a token that is no longer the page's: the one being signed out, to take this
 * device's push subscription off the server on the way out. Like probe, a refusal is only thrown.
 */
export async function sendAs(withToken: string, method: string, path: string): Promise<void> {
  await send(withToken, method, path);
}

async function send(withToken: string, method: string, path: string, body?: unknown, signal?: AbortSignal): Promise<Response> {
  const headers: Record<string, string> = {
    Authorization: `Bearer ${withToken}`,
    'Loopback-Revision': String(REVISION),
  };
  if (body !== undefined) headers['Content-Type'] = 'application/json';
  let res: Response;
  try {
    res = await fetch('/api/v1' + path, {
      method,
      headers,
      body: body === undefined ? undefined : JSON.stringify(body),
      cache: 'no-store',
      credentials: 'omit',
      signal,
    });
  } catch (err) {
    if ((err as Error).name === 'AbortError') throw err;
    throw new ApiError(0, 'network', 'Loopback cannot be reached. Check that it is running.');
  }
  noteRevision(res);
  if (res.ok) return res;
  const problem = await readProblem(res);
  throw new ApiError(res.status, problem.code, problem.message);
}

async function readProblem(res: Response): Promise<Problem> {
  try {
    const p = (await res.json()) as Partial<Problem>;
    if (typeof p.code === 'string' && typeof p.message === 'string') return p as Problem;
  } catch {
    // not JSON
  }
  return { code: `http.${res.status}`, message: `${res.status} ${res.statusText}`.trim() };
}

/** The server's answer to an agent's credential on the person's API: it may only be used over MCP. */
export function isForbidden(err: unknown): boolean {
  return err instanceof ApiError && err.status === 403 && err.code === 'auth.forbidden';
}
