// Search and the example ask (contract revision 6, spec/main.tsp's `r6: search` section), typed
// here until revision 6 is frozen: contract.gen.ts comes from the newest frozen revision. Once it
// is, these become api('GET', '/search', …) and api('POST', '/examples') calls.

import { call, routeUrl } from './api';
import type { Ask, AskKind, AskStatus } from './types';

export type SearchState = 'open' | 'yours' | 'agents' | 'closed';

/** A piece of a highlight: text to show as text, and whether the query matched it. */
export interface SearchFragment {
  text: string;
  match?: boolean;
}

/** An ask as search finds it (AskSummary). */
export interface AskSummary {
  id: string;
  kind: AskKind;
  status: AskStatus;
  project?: string;
  title: string;
  createdAt: string;
  updatedAt: string;
  closedAt?: string;
  highlight: SearchFragment[];
}

export interface SearchPage {
  items: AskSummary[];
  next?: string;
}

export interface SearchQuery {
  q?: string;
  project?: string;
  kind?: AskKind;
  state?: SearchState;
  cursor?: string;
  limit?: number;
}

/** GET /api/v1/search. */
export async function searchAsks(query: SearchQuery): Promise<SearchPage> {
  const res = await call('GET', routeUrl('/search', { query: { ...query } }));
  return (await res.json()) as SearchPage;
}

/** POST /api/v1/examples: 201 with the example ask. */
export async function sendExample(): Promise<Ask> {
  const res = await call('POST', '/examples');
  return (await res.json()) as Ask;
}
