// Connecting agents (contract revision 5, not frozen yet, so untyped by contract.gen.ts: these
// shapes follow spec/main.tsp's ConnectRequest and ConnectedAgent). An agent's client that was
// given the MCP URL alone sends the person's browser to Loopback; the consent page (/connect/<id>)
// shows who asks and a code the starting browser shows too, and the person approves or refuses.

import { apiUnfrozen } from './api';
import type { Actor } from './types';

export interface ConnectRequest {
  id: string;
  client: { id: string; name: string; verifiedHost?: string };
  redirectHost: string;
  scope: string;
  resource: string;
  matchCode: string;
  status: 'pending' | 'approved' | 'refused';
  expiresAt: string;
  credentialId?: string;
}

export interface ConnectedAgent {
  id: string;
  name: string;
  person: Actor;
  client?: string;
  clientHost?: string;
  createdAt: string;
  lastUsedAt?: string;
}

export function readConnectRequest(id: string): Promise<ConnectRequest> {
  return apiUnfrozen('GET', '/connect/requests/' + encodeURIComponent(id));
}

export function decideConnectRequest(id: string, decision: 'approve' | 'refuse'): Promise<ConnectRequest> {
  return apiUnfrozen('POST', '/connect/requests/' + encodeURIComponent(id) + '/decision', { decision });
}

export async function listAgents(): Promise<ConnectedAgent[]> {
  return (await apiUnfrozen<{ items: ConnectedAgent[] }>('GET', '/agents')).items;
}

export function revokeAgent(id: string): Promise<void> {
  return apiUnfrozen('DELETE', '/agents/' + encodeURIComponent(id));
}

/**
 * Whether this tab is the browser that started the sign-in: the server's waiting page marks the
 * tab (sessionStorage) before it sends it here. Only that browser can take the code to the client.
 */
export function startedHere(id: string): boolean {
  try {
    return sessionStorage.getItem('lb-consent-' + id) !== null;
  } catch {
    return false;
  }
}

/** Where the starting browser goes once the person decided: the server sends it on to the client. */
export function continueUrl(id: string): string {
  return '/oauth/continue?request=' + encodeURIComponent(id);
}

/** What the scope lets the agent do, in words. */
export function scopeWords(scope: string): string {
  return scope === 'mcp'
    ? 'Ask you questions, reviews, briefings and approvals through Loopback’s MCP tools. It can never answer or approve anything itself.'
    : scope;
}
