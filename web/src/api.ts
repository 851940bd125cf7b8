// The HTTP API, as the person's client. Every request carries the bearer token and the contract
// revision this page was built for (`Loopback-Revision`); every response's own `Loopback-Revision`
// is compared with it, so a newer server is noticed on any call, and a `409 reload` (this page is
// newer than the server, as after a rollback) is reported the same way.

//
// Every call names its route as the contract does (`'/asks/{id}'`), typed by the paths generated
// from the contract (contract.gen.ts): the method must be one the route has, its path parameters,
// query and JSON body are the operation's, and the answer is the operation's success response.

import type { ErrorCode } from './codes';
import type { paths } from './revision6';
import { REVISION, type Problem } from './types';

export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: ErrorCode,
    message: string,
  ) {
    super(message);
  }
}

type Method = 'GET' | 'POST' | 'PUT' | 'DELETE';
export type Path = keyof paths;
/** The methods the contract has on a route. */
export type MethodOf<P extends Path> = { [M in Method]: undefined extends paths[P][Lowercase<M>] ? never : M }[Method];
type Op<P extends Path, M extends Method> = NonNullable<paths[P][Lowercase<M>]>;

type PathParams<O> = O extends { parameters: { path: infer A } } ? A : never;
type Query<O> = O extends { parameters: { query?: infer Q } } ? NonNullable<Q> : never;
type Body<O> = O extends { requestBody: { content: { 'application/json': infer B } } } ? B : never;

/** What a call sends besides its route: the path's parameters, the query and the JSON body, each where the operation has one. */
export type Input<O> = ([PathParams<O>] extends [never] ? unknown : { path: PathParams<O> }) &
  ([Query<O>] extends [never] ? unknown : { query?: Query<O> }) &
  ([Body<O>] extends [never] ? unknown : { body: Body<O> });
type InputArg<O> = {} extends Input<O> ? [input?: Input<O>] : [input: Input<O>];

type Json<R> = R extends { content: { 'application/json': infer J } } ? J : undefined;
/** The operation's success response (200, 201 or 204, as the contract has it). */
export type Ok<O> = O extends { responses: infer R }
  ? 200 extends keyof R
    ? Json<R[200]>
    : 201 extends keyof R
      ? Json<R[201]>
      : 204 extends keyof R
        ? undefined
        : never
  : never;

interface AnyInput {
  path?: Record<string, string>;
  query?: Record<string, string | number | undefined>;
  body?: unknown;
}

/** The route with its path parameters filled in (each URI-encoded) and the query after it, in the order given. */
export function routeUrl(route: string, input: AnyInput = {}): string {
  const path = route.replace(/\{(\w+)\}/g, (_, name: string) => {
    const v = input.path?.[name];
    if (v === undefined) throw new Error(`${route}: no value for {${name}}`);
    return encodeURIComponent(v);
  });
  const q = new URLSearchParams();
  for (const [k, v] of Object.entries(input.query ?? {})) if (v !== undefined) q.append(k, String(v));
  const qs = q.toString();
  return qs ? `${path}?${qs}` : path;
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
export async function api<P extends Path, M extends MethodOf<P>>(method: M, route: P, ...[input]: InputArg<Op<P, M>>): Promise<Ok<Op<P, M>>> {
  const i = input as AnyInput | undefined;
  const res = await call(method, routeUrl(route, i), i?.body);
  if (res.status === 204) return undefined as Ok<Op<P, M>>;
  return (await res.json()) as Ok<Op<P, M>>;
}

/** Like api, but returns the raw response (for files). */
export async function request<P extends Path, M extends MethodOf<P>>(
  method: M,
  route: P,
  input: Input<Op<P, M>>,
  signal?: AbortSignal,
): Promise<Response> {
  const i = input as AnyInput;
  return call(method, routeUrl(route, i), i.body, signal);
}

/** Sends a request with the page's token, untyped: for routes of a revision not frozen yet (search.ts). */
export async function call(method: string, path: string, body?: unknown, signal?: AbortSignal): Promise<Response> {
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
export async function probe<P extends Path, M extends MethodOf<P>>(
  withToken: string,
  method: M,
  route: P,
  ...[input]: InputArg<Op<P, M>>
): Promise<Ok<Op<P, M>>> {
  const res = await send(withToken, method, routeUrl(route, input as AnyInput | undefined));
  return (await res.json()) as Ok<Op<P, M>>;
}

/**
 * Sends a request with a token that is no longer the page's: the one being signed out, to take this
 * device's push subscription off the server on the way out. Like probe, a refusal is only thrown.
 */
export async function sendAs<P extends Path, M extends MethodOf<P>>(withToken: string, method: M, route: P, ...[input]: InputArg<Op<P, M>>): Promise<void> {
  await send(withToken, method, routeUrl(route, input as AnyInput | undefined));
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

/**
 * Calls a route of revision 6 (pairing, invites) with the page's token. Untyped until revision 6 is
 * frozen and contract.gen.ts has its routes; then these calls become api() calls.
 */
export async function apiR6<T>(method: Method, path: string, body?: unknown): Promise<T> {
  const res = await call(method, path, body);
  if (res.status === 204) return undefined as T;
  return (await res.json()) as T;
}

/**
 * Calls a route that takes no credential (signing in with a pairing code or an invite, from a
 * signed-out page): no bearer token is sent, the code travels in the JSON body (never the URL),
 * and a refusal is only thrown.
 */
export async function sendOpen<T>(path: string, body: unknown): Promise<T> {
  let res: Response;
  try {
    res = await fetch('/api/v1' + path, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json', 'Loopback-Revision': String(REVISION) },
      body: JSON.stringify(body),
      cache: 'no-store',
      credentials: 'omit',
    });
  } catch {
    throw new ApiError(0, 'network', 'Loopback cannot be reached. Check that it is running.');
  }
  noteRevision(res);
  if (!res.ok) {
    const problem = await readProblem(res);
    throw new ApiError(res.status, problem.code, problem.message);
  }
  return (await res.json()) as T;
}

/** A Problem whose code is one of the server's (codes.ts; test/unit/codes.test.ts keeps the list the server's). */
type KnownProblem = Omit<Problem, 'code'> & { code: ErrorCode };

async function readProblem(res: Response): Promise<KnownProblem> {
  try {
    const p = (await res.json()) as Partial<Problem>;
    if (typeof p.code === 'string' && typeof p.message === 'string') return p as KnownProblem;
  } catch {
    // not JSON
  }
  return { code: `http.${res.status}`, message: `${res.status} ${res.statusText}`.trim() };
}

/** The server's answer to an agent's credential on the person's API: it may only be used over MCP. */
export function isForbidden(err: unknown): boolean {
  return err instanceof ApiError && err.status === 403 && err.code === 'auth.forbidden';
}
