// Passkeys (contract revision 6): a person signs in to the inbox with a passkey instead of a
// pasted token, and registers or removes passkeys in Settings. A sign-in that verifies gets a new
// person credential for this browser from the server, its token once; the page keeps it exactly as
// it keeps the printed link's token (effects/session.ts signIn: checked, then kept), never in a
// URL and never logged. The routes are typed here until revision 6 is frozen (contract.gen.ts).
//
// WebAuthn's options and answers travel as the spec's JSON (binary members base64url): the
// browser's own PublicKeyCredential.parse…OptionsFromJSON and toJSON() where it has them, the
// same conversion by hand where it does not.

import { ApiError } from './api';
import { getState } from './app';
import { REVISION, type Actor } from './types';

/** The contract's Passkey. */
export interface Passkey {
  id: string;
  name: string;
  person: Actor;
  createdAt: string;
  lastUsedAt?: string;
}

/** The contract's PasskeyCeremony. */
interface Ceremony {
  id: string;
  options: { publicKey: Record<string, unknown>; mediation?: string };
  rpId: string;
  expiresAt: string;
}

/** The contract's PasskeySignIn. */
interface SignedIn {
  token: string;
  credentialId: string;
  space: string;
  actor: Actor;
  passkeyId: string;
}

async function call<T>(method: string, path: string, body?: unknown, withToken = true): Promise<T> {
  const headers: Record<string, string> = { 'Loopback-Revision': String(REVISION) };
  const token = withToken ? getState().token : null;
  if (token) headers.Authorization = `Bearer ${token}`;
  if (body !== undefined) headers['Content-Type'] = 'application/json';
  let res: Response;
  try {
    res = await fetch('/api/v1' + path, {
      method,
      headers,
      body: body === undefined ? undefined : JSON.stringify(body),
      cache: 'no-store',
      credentials: 'omit',
    });
  } catch {
    throw new ApiError(0, 'network', 'Loopback cannot be reached. Check that it is running.');
  }
  if (res.status === 204) return undefined as T;
  let json: unknown = null;
  try {
    json = await res.json();
  } catch {
    // not JSON
  }
  if (!res.ok) {
    const p = json as { code?: string; message?: string } | null;
    throw new ApiError(res.status, (p?.code ?? `http.${res.status}`) as ApiError['code'], p?.message ?? `${res.status} ${res.statusText}`);
  }
  return json as T;
}

export async function listPasskeys(): Promise<Passkey[]> {
  return (await call<{ items: Passkey[] }>('GET', '/passkeys')).items;
}

export async function removePasskey(id: string): Promise<void> {
  await call<void>('DELETE', '/passkeys/' + encodeURIComponent(id));
}

// ------------------------------------------------------------------------------- the browser --

/** Whether this browser can use passkeys at all (a secure context with WebAuthn). */
export function passkeysSupported(): boolean {
  return typeof window !== 'undefined' && window.isSecureContext && typeof window.PublicKeyCredential === 'function' && !!navigator.credentials;
}

function fromB64url(s: string): ArrayBuffer {
  const b64 = s.replace(/-/g, '+').replace(/_/g, '/') + '==='.slice((s.length + 3) % 4);
  const bin = atob(b64);
  const out = new Uint8Array(bin.length);
  for (let i = 0; i < bin.length; i++) out[i] = bin.charCodeAt(i);
  return out.buffer;
}

function toB64url(buf: ArrayBuffer | ArrayBufferView): string {
  const bytes = buf instanceof ArrayBuffer ? new Uint8Array(buf) : new Uint8Array(buf.buffer, buf.byteOffset, buf.byteLength);
  let bin = '';
  for (const b of bytes) bin += String.fromCharCode(b);
  return btoa(bin).replace(/\+/g, '-').replace(/\//g, '_').replace(/=+$/, '');
}

type PKC = typeof PublicKeyCredential & {
  parseCreationOptionsFromJSON?: (o: unknown) => PublicKeyCredentialCreationOptions;
  parseRequestOptionsFromJSON?: (o: unknown) => PublicKeyCredentialRequestOptions;
};

function creationOptions(o: Record<string, unknown>): PublicKeyCredentialCreationOptions {
  const P = PublicKeyCredential as PKC;
  if (P.parseCreationOptionsFromJSON) return P.parseCreationOptionsFromJSON(o);
  const user = o.user as Record<string, unknown>;
  const exclude = (o.excludeCredentials as { id: string; type: string; transports?: string[] }[] | undefined) ?? [];
  return {
    ...(o as object),
    challenge: fromB64url(o.challenge as string),
    user: { ...(user as object), id: fromB64url(user.id as string) },
    excludeCredentials: exclude.map((c) => ({ ...c, id: fromB64url(c.id) })),
  } as PublicKeyCredentialCreationOptions;
}

function requestOptions(o: Record<string, unknown>): PublicKeyCredentialRequestOptions {
  const P = PublicKeyCredential as PKC;
  if (P.parseRequestOptionsFromJSON) return P.parseRequestOptionsFromJSON(o);
  const allow = (o.allowCredentials as { id: string; type: string }[] | undefined) ?? [];
  return {
    ...(o as object),
    challenge: fromB64url(o.challenge as string),
    allowCredentials: allow.map((c) => ({ ...c, id: fromB64url(c.id) })),
  } as PublicKeyCredentialRequestOptions;
}

/** The credential as the spec's JSON: toJSON() where the browser has it. */
function credentialJSON(c: PublicKeyCredential): unknown {
  const withJSON = c as PublicKeyCredential & { toJSON?: () => unknown };
  if (typeof withJSON.toJSON === 'function') return withJSON.toJSON();
  const r = c.response as AuthenticatorAttestationResponse & AuthenticatorAssertionResponse;
  const response: Record<string, unknown> = { clientDataJSON: toB64url(r.clientDataJSON) };
  if ('attestationObject' in r && r.attestationObject) {
    response.attestationObject = toB64url(r.attestationObject);
    if (typeof r.getTransports === 'function') response.transports = r.getTransports();
  } else {
    response.authenticatorData = toB64url(r.authenticatorData);
    response.signature = toB64url(r.signature);
    if (r.userHandle) response.userHandle = toB64url(r.userHandle);
  }
  return {
    id: c.id,
    rawId: toB64url(c.rawId),
    type: c.type,
    authenticatorAttachment: c.authenticatorAttachment ?? undefined,
    clientExtensionResults: c.getClientExtensionResults(),
    response,
  };
}

/** Why a passkey cannot be used at this address, or null: WebAuthn binds a passkey to the host. */
export function wrongHost(rpId: string): string | null {
  if (location.hostname === rpId) return null;
  const there = `${location.protocol}//${rpId}${location.port ? ':' + location.port : ''}`;
  return `Passkeys work at ${there} (this page is open at ${location.host}): open the inbox there to use one.`;
}

/** What went wrong in the browser, in words; null when the person simply closed its dialog. */
function browserError(err: unknown, what: 'add' | 'sign-in'): string | null {
  const name = (err as Error)?.name;
  if (name === 'AbortError') return null;
  if (name === 'NotAllowedError') return what === 'add' ? 'No passkey was added (the request was cancelled or timed out).' : null;
  if (name === 'InvalidStateError') return 'This device already holds a passkey of yours for Loopback.';
  if (name === 'SecurityError') return 'This browser refused passkeys at this address. Open the inbox at its usual address (https, or http://localhost).';
  return (err as Error)?.message || String(err);
}

export class PasskeyError extends Error {}

/** Registers a passkey for the signed-in person, named `name`. */
export async function addPasskey(name: string): Promise<Passkey> {
  const c = await call<Ceremony>('POST', '/passkey-registrations', { name });
  const host = wrongHost(c.rpId);
  if (host) throw new PasskeyError(host);
  let cred: PublicKeyCredential | null;
  try {
    cred = (await navigator.credentials.create({ publicKey: creationOptions(c.options.publicKey) })) as PublicKeyCredential | null;
  } catch (err) {
    throw new PasskeyError(browserError(err, 'add') ?? 'No passkey was added.');
  }
  if (!cred) throw new PasskeyError('No passkey was added.');
  return call<Passkey>('POST', '/passkey-registrations/' + encodeURIComponent(c.id), credentialJSON(cred));
}

/**
 * Signs in with a passkey: the browser's passkey picker (`conditional`: offered in the token
 * field's autofill instead, where the browser supports it). Resolves to the new credential's
 * token, or null when the person closed the picker; throws PasskeyError with the reason otherwise.
 */
export async function passkeySignIn(opts: { conditional?: boolean; signal?: AbortSignal } = {}): Promise<string | null> {
  const c = await call<Ceremony>('POST', '/passkey-sign-ins', undefined, false);
  const host = wrongHost(c.rpId);
  if (host) {
    if (opts.conditional) return null;
    throw new PasskeyError(host);
  }
  let cred: PublicKeyCredential | null;
  try {
    cred = (await navigator.credentials.get({
      publicKey: requestOptions(c.options.publicKey),
      mediation: opts.conditional ? ('conditional' as CredentialMediationRequirement) : undefined,
      signal: opts.signal,
    })) as PublicKeyCredential | null;
  } catch (err) {
    const why = browserError(err, 'sign-in');
    if (why === null) return null;
    throw new PasskeyError(why);
  }
  if (!cred) return null;
  try {
    const out = await call<SignedIn>('POST', '/passkey-sign-ins/' + encodeURIComponent(c.id), credentialJSON(cred), false);
    return out.token;
  } catch (err) {
    if (err instanceof ApiError && err.code !== 'network') throw new PasskeyError(`Loopback did not accept this passkey: ${err.message}`);
    throw err;
  }
}

/** Whether the browser offers passkeys in a field's autofill (conditional mediation). */
export async function conditionalAvailable(): Promise<boolean> {
  if (!passkeysSupported()) return false;
  const P = PublicKeyCredential as PKC & { isConditionalMediationAvailable?: () => Promise<boolean> };
  try {
    return (await P.isConditionalMediationAvailable?.()) ?? false;
  } catch {
    return false;
  }
}
