// Routes of contract revision 6 that the page uses before revision 6 is frozen: the generated
// paths (contract.gen.ts) come from the newest frozen revision (spec/revisions/<N>), so these are
// written here in the shape openapi-typescript gives them, from spec/main.tsp's `r6` sections.
// Once revision 6 is frozen and `npm run types` is run, contract.gen.ts has them too (the same
// shapes: the intersection in api.ts stays sound) and these entries can go.

import type { components, paths as frozen } from './contract.gen';

type AskJson = components['schemas']['QuestionAsk'] | components['schemas']['ReviewAsk'] | components['schemas']['BriefingAsk'] | components['schemas']['ApprovalAsk'];
type AskMarkJson = { askId: string; readAt?: string; snooze?: { at: string; until?: string; untilAgentMoves?: boolean } };
type ProblemJson = { content: { 'application/json': components['schemas']['Problem'] } };

interface Revision6 {
  /** The person's marks on the open asks (Marks.list). */
  '/marks': {
    parameters: { query?: never; header?: never; path?: never; cookie?: never };
    get: {
      parameters: { query?: never; header?: never; path?: never; cookie?: never };
      requestBody?: never;
      responses: { 200: { content: { 'application/json': { items: AskMarkJson[] } } }; 401: ProblemJson };
    };
    put?: never;
    post?: never;
    delete?: never;
    options?: never;
    head?: never;
    patch?: never;
    trace?: never;
  };
  /** Change the person's mark on an ask (AskMarks.mark). */
  '/asks/{id}/mark': {
    parameters: { query?: never; header?: never; path?: never; cookie?: never };
    get?: never;
    put: {
      parameters: { query?: never; header?: never; path: { id: string }; cookie?: never };
      requestBody: { content: { 'application/json': { read?: boolean; snooze?: { until?: string; untilAgentMoves?: boolean } | null } } };
      responses: { 200: { content: { 'application/json': AskMarkJson } }; 401: ProblemJson; 404: ProblemJson; 409: ProblemJson; 422: ProblemJson };
    };
    post?: never;
    delete?: never;
    options?: never;
    head?: never;
    patch?: never;
    trace?: never;
  };
  /** A person dismisses any open ask, whoever's move it is (AskClosing.dismiss). */
  '/asks/{id}/dismiss': {
    parameters: { query?: never; header?: never; path?: never; cookie?: never };
    get?: never;
    put?: never;
    post: {
      parameters: { query?: never; header?: never; path: { id: string }; cookie?: never };
      requestBody?: never;
      responses: { 200: { content: { 'application/json': AskJson } }; 401: ProblemJson; 404: ProblemJson; 409: ProblemJson };
    };
    delete?: never;
    options?: never;
    head?: never;
    patch?: never;
    trace?: never;
  };
}

export type paths = frozen & Revision6;
