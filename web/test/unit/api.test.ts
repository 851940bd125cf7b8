// The API client's routes: the contract's path with its parameters and query filled in, and the
// types the generated paths give each call (checked by `npm run typecheck`, which the build runs).

import { describe, expect, expectTypeOf, it } from 'vitest';
import { api, routeUrl } from '../../src/api';
import type { Ask, AskPage, EventTicket, PushKey, PushSubscriptionCreated, Whoami } from '../../src/types';

describe('routeUrl', () => {
  it('fills the path parameters, each URI-encoded', () => {
    expect(routeUrl('/asks/{id}/reply', { path: { id: 'a/b c?' } })).toBe('/asks/a%2Fb%20c%3F/reply');
    expect(routeUrl('/whoami')).toBe('/whoami');
  });
  it('puts the query after it in the order given, leaving out what is undefined', () => {
    expect(routeUrl('/asks', { query: { limit: 20, before: '2026-01-01T00:00:00Z' } })).toBe('/asks?limit=20&before=2026-01-01T00%3A00%3A00Z');
    expect(routeUrl('/asks', { query: { limit: 1, before: undefined } })).toBe('/asks?limit=1');
    expect(routeUrl('/asks', { query: {} })).toBe('/asks');
  });
  it('refuses a route whose parameter has no value', () => {
    expect(() => routeUrl('/asks/{id}', {})).toThrow(/no value for \{id\}/);
  });
});

describe('the calls, typed by the contract', () => {
  it('answers with the operation’s response', () => {
    expectTypeOf(api<'/whoami', 'GET'>).returns.resolves.toEqualTypeOf<Whoami>();
    expectTypeOf(api<'/asks', 'GET'>).returns.resolves.toEqualTypeOf<AskPage>();
    expectTypeOf(api<'/asks/{id}', 'GET'>).returns.resolves.toEqualTypeOf<Ask>();
    expectTypeOf(api<'/asks/{id}/reply', 'POST'>).returns.resolves.toEqualTypeOf<Ask>();
    expectTypeOf(api<'/events/tickets', 'POST'>).returns.resolves.toEqualTypeOf<EventTicket>();
    expectTypeOf(api<'/push/key', 'GET'>).returns.resolves.toEqualTypeOf<PushKey>();
    expectTypeOf(api<'/push/subscriptions', 'POST'>).returns.resolves.toEqualTypeOf<PushSubscriptionCreated>();
    expectTypeOf(api<'/push/subscriptions/{id}', 'DELETE'>).returns.resolves.toEqualTypeOf<undefined>();
  });
  it('refuses what the contract does not have', () => {
    const never = (): void => {
      // @ts-expect-error no such route
      void api('GET', '/asks/{id}/replies', { path: { id: 'a' } });
      // @ts-expect-error the route has no DELETE
      void api('DELETE', '/whoami');
      // @ts-expect-error the path parameter is required
      void api('GET', '/asks/{id}');
      // @ts-expect-error a reply needs its body
      void api('POST', '/asks/{id}/reply', { path: { id: 'a' } });
      // @ts-expect-error the body is the contract's Reply
      void api('POST', '/asks/{id}/reply', { path: { id: 'a' }, body: { kind: 'nonsense' } });
      // @ts-expect-error no such query parameter
      void api('GET', '/asks', { query: { limit: 1, after: 'x' } });
    };
    expect(typeof never).toBe('function');
  });
});
