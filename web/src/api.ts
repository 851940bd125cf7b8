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
  const headers: Record<string, string> = {
    Authorization: `Bearer ${token}`,
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
  if (res.status === 401) {
    hooks.unauthorized(problem.message);
  } else if (res.status === 409 && problem.code === 'reload') {
    hooks.reload('reload');
  }
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
