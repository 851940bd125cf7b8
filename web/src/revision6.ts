// Routes of contract revision 6 that the page uses before revision 6 is frozen: the generated
// paths (contract.gen.ts) come from the newest frozen revision (spec/revisions/<N>), so these are
// written here in the shape openapi-typescript gives them, from spec/main.tsp's `r6` sections.
// Once revision 6 is frozen and `npm run types` is run, contract.gen.ts has them too (the same
// shapes: the intersection in api.ts stays sound) and these entries can go.

import type { components, paths as frozen } from './contract.gen';

type AskJson = components['schemas']['QuestionAsk'] | components['schemas']['ReviewAsk'] | components['schemas']['BriefingAsk'] | components['schemas']['ApprovalAsk'];
type ProblemJson = { content: { 'application/json': components['schemas']['Problem'] } };

interface Revision6 {
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
