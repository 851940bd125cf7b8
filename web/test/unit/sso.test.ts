import { describe, expect, it } from 'vitest';
import { offerOf } from '../../src/sso';

describe('the single sign-on offer', () => {
  it('offers the provider when the server says so', () => {
    expect(offerOf({ enabled: true, provider: 'Okta', startUrl: '/auth/oidc/start' })).toEqual({ provider: 'Okta', startUrl: '/auth/oidc/start' });
  });
  it('offers nothing when it is off or incomplete', () => {
    expect(offerOf({ enabled: false })).toBeNull();
    expect(offerOf({ enabled: true, provider: 'Okta' })).toBeNull();
  });
  it('follows only a path of this origin', () => {
    expect(offerOf({ enabled: true, provider: 'x', startUrl: 'https://evil.example/' })).toBeNull();
    expect(offerOf({ enabled: true, provider: 'x', startUrl: '//evil.example/' })).toBeNull();
  });
});
