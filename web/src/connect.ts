// Connecting agents (contract revision 5). An agent's client that was given the MCP URL alone sends the person's browser to Loopback; the consent page (/connect/<id>)
// shows who asks and a code the starting browser shows too, and the person approves or refuses.

import { api } from './api';
import type { ConnectedAgent, ConnectRequest } from './types';

export type { ConnectedAgent, ConnectRequest };

export function readConnectRequest(id: string): Promise<ConnectRequest> {
  return api('GET', '/connect/requests/{id}', { path: { id } });
}

export function decideConnectRequest(id: string, decision: 'approve' | 'refuse'): Promise<ConnectRequest> {
  return api('POST', '/connect/requests/{id}/decision', { path: { id }, body: { decision } });
}

export async function listAgents(): Promise<ConnectedAgent[]> {
  return (await api('GET', '/agents')).items;
}

export async function revokeAgent(id: string): Promise<void> {
  await api('DELETE', '/agents/{id}', { path: { id } });
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
