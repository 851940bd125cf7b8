// Single sign-on: whether the owner set up an OpenID Connect provider (GET /api/v1/sso, which
// needs no credential: the signed-out page asks). The sign-in runs on the server's own pages
// (/auth/oidc/start → the provider → /auth/oidc/callback), which end on `/#token=…` with a new
// credential for this browser: auth.ts takes it from the fragment as it takes the printed link's.

import { REVISION } from './types';

/**
 * The contract's SsoStatus (revision 6; declared here until revision 6 is frozen and
 * contract.gen.ts is generated from it).
 */
export interface SsoStatus {
  enabled: boolean;
  provider?: string;
  startUrl?: string;
}

/** What the sign-in button needs: the provider's name and where the sign-in starts. */
export interface SsoOffer {
  provider: string;
  startUrl: string;
}

/** The offer of single sign-on, or null when there is none (or the server cannot say). */
export async function ssoStatus(): Promise<SsoOffer | null> {
  try {
    const res = await fetch('/api/v1/sso', {
      headers: { 'Loopback-Revision': String(REVISION) },
      cache: 'no-store',
      credentials: 'omit',
    });
    if (!res.ok) return null;
    return offerOf((await res.json()) as SsoStatus);
  } catch {
    return null;
  }
}

/** The button's offer from the server's status: only a path of this origin is followed. */
export function offerOf(s: SsoStatus): SsoOffer | null {
  if (!s.enabled || !s.provider || !s.startUrl) return null;
  if (!s.startUrl.startsWith('/') || s.startUrl.startsWith('//')) return null;
  return { provider: s.provider, startUrl: s.startUrl };
}
