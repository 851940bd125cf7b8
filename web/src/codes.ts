// The codes an error from the API can carry, typed. The contract types a Problem's `code` as a plain
// string, so the list of the codes the server sends is the server's (shared/ask/errors.go and the
// transport's own): test/unit/codes.test.ts fails when a code is sent that is not here, or one here
// is no longer sent.

/** Every code the server sends in a Problem (and in JSON-RPC errors' data, which the inbox never reads). */
export const SERVER_CODES = [
  'ask.not_found',
  'ask.closed',
  'ask.awaiting_agent',
  'ask.awaiting_human',
  'ask.conflict',
  'ask.full',
  'ask.open_limit',
  'reply.invalid',
  'input.invalid',
  'answer.invalid',
  'rule.invalid',
  'rule.limit',
  'settings.invalid',
  'action.invalid',
  'action.expired',
  'action.used',
  'action.revoked',
  'auth.unauthorized',
  'auth.forbidden',
  'origin.forbidden',
  'reload',
  'request.invalid',
  'request.too_large',
  'upload.not_found',
  'upload.gone',
  'upload.too_large',
  'upload.invalid',
  'route.not_found',
  'session.not_found',
  'method.not_allowed',
  'request.media_type',
  'request.rate_limited',
  'internal',
  'consent.not_found',
  'consent.decided',
  'consent.expired',
  'passkey.not_found',
  'passkey.invalid',
  'passkey.expired',
  'mark.invalid',
  'signin.code_invalid',
  'signin.code_expired',
  'signin.code_used',
  'signin.code_revoked',
] as const;

export type ServerCode = (typeof SERVER_CODES)[number];

/**
 * The codes the page gives an error itself: the server could not be reached (`network`), or it
 * answered with something that is not a Problem (`http.<status>`).
 */
export type ClientCode = 'network' | `http.${number}`;

export type ErrorCode = ServerCode | ClientCode;
