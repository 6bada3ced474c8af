import { describe, expect, it } from 'vitest';
import { OAuthError } from '../src/errors.js';
import {
  accessTokenScopes,
  formatScope,
  grantableScopes,
  parseScope,
  resolveAudiences,
  selectAccessTokenTarget,
} from '../src/scopes.js';
import { billingResource, makeClient, makeResource, makeUser } from './fixtures.js';

const orders = makeResource();
const billing = billingResource();
const resources = [orders, billing];

function errorCode(fn: () => unknown): string | undefined {
  try {
    fn();
  } catch (error) {
    if (error instanceof OAuthError) return error.code;
    throw error;
  }
  return undefined;
}

describe('parseScope / formatScope', () => {
  it.each([
    [undefined, []],
    ['', []],
    ['openid', ['openid']],
    ['openid  profile', ['openid', 'profile']],
    ['openid profile openid', ['openid', 'profile']],
    ['a:b urn:x/y', ['a:b', 'urn:x/y']],
  ])('%j → %j', (input, expected) => {
    expect(parseScope(input)).toEqual(expected);
  });

  it.each(['open"id', 'a\\b', 'tab\there'])(
    'rejects the forbidden character in %j with invalid_scope',
    (input) => {
      expect(errorCode(() => parseScope(input))).toBe('invalid_scope');
    },
  );

  it('joins with single spaces', () => {
    expect(formatScope(['openid', 'orders.read'])).toBe('openid orders.read');
  });
});

describe('grantableScopes', () => {
  const client = makeClient({ scopes: ['openid', 'profile', 'orders.read'] });
  it.each([
    ['requested ∩ client', ['openid', 'email', 'orders.read'], null, ['openid', 'orders.read']],
    ['keeps the requested order', ['orders.read', 'openid'], null, ['orders.read', 'openid']],
    [
      '∩ the user when restricted',
      ['openid', 'profile', 'orders.read'],
      ['openid', 'orders.read'],
      ['openid', 'orders.read'],
    ],
    ['user without restriction', ['openid', 'profile'], undefined, ['openid', 'profile']],
  ])('%s', (_name, requested, userScopes, expected) => {
    const user = userScopes === null ? null : makeUser({ allowedScopes: userScopes ?? null });
    expect(grantableScopes(requested, client, user)).toEqual(expected);
  });
});

describe('resolveAudiences', () => {
  it('maps scopes to their resources, sorted by id', () => {
    expect(
      resolveAudiences(['openid', 'orders.read', 'billing.read'], [], resources).map((r) => r.id),
    ).toEqual(['billing-api', 'orders-api']);
  });

  it('returns nothing for OIDC scopes only', () => {
    expect(resolveAudiences(['openid', 'profile'], [], resources)).toEqual([]);
  });

  it('returns the named resources', () => {
    expect(resolveAudiences(['openid'], ['orders-api', 'orders-api'], resources)).toEqual([orders]);
  });

  it('rejects an unknown resource with invalid_target', () => {
    expect(errorCode(() => resolveAudiences([], ['https://unknown.example'], resources))).toBe(
      'invalid_target',
    );
  });

  it('matches resource ids exactly', () => {
    expect(errorCode(() => resolveAudiences([], ['Orders-API'], resources))).toBe('invalid_target');
  });
});

describe('selectAccessTokenTarget', () => {
  const base = { requestedResources: [], boundResources: [], resources };

  it('targets the resource owning the granted scopes; token scope = OIDC scopes + its scopes', () => {
    const target = selectAccessTokenTarget({
      ...base,
      scopes: ['openid', 'offline_access', 'email', 'orders.read'],
    });
    expect(target.resource?.id).toBe('orders-api');
    expect(target.scopes).toEqual(['openid', 'email', 'orders.read']);
  });

  it('picks the resource whose id sorts first when several own granted scopes', () => {
    const target = selectAccessTokenTarget({ ...base, scopes: ['orders.read', 'billing.read'] });
    expect(target.resource?.id).toBe('billing-api');
    expect(target.scopes).toEqual(['billing.read']);
  });

  it('honours a named resource', () => {
    const target = selectAccessTokenTarget({
      ...base,
      scopes: ['openid', 'orders.read', 'billing.read'],
      requestedResources: ['orders-api'],
    });
    expect(target.resource?.id).toBe('orders-api');
    expect(target.scopes).toEqual(['openid', 'orders.read']);
  });

  it('has no resource for OIDC scopes only', () => {
    const target = selectAccessTokenTarget({ ...base, scopes: ['openid', 'profile'] });
    expect(target).toEqual({ resource: null, scopes: ['openid', 'profile'] });
  });

  it('uses the resources bound at authorization time', () => {
    const target = selectAccessTokenTarget({
      ...base,
      scopes: ['orders.read', 'billing.read'],
      boundResources: ['orders-api'],
    });
    expect(target.resource?.id).toBe('orders-api');
  });

  it.each([
    ['an unknown resource', { requestedResources: ['nope'] }],
    ['two resources', { requestedResources: ['orders-api', 'billing-api'] }],
    [
      'a resource outside the bound ones',
      { requestedResources: ['billing-api'], boundResources: ['orders-api'] },
    ],
  ])('rejects %s with invalid_target', (_name, overrides) => {
    expect(errorCode(() => selectAccessTokenTarget({ ...base, scopes: ['orders.read'], ...overrides }))).toBe(
      'invalid_target',
    );
  });

  // RFC 8707 §2: a named resource must be bound to the grant or own a granted
  // scope; an access token for an API never carries an empty scope.
  it.each([
    ['code grant: openid only, another API named', ['openid'], ['orders-api'], [], 'invalid_target'],
    ["one API's scope, another API named", ['billing.read'], ['orders-api'], [], 'invalid_target'],
    ['OIDC scopes only, an API named', ['openid', 'profile', 'email'], ['billing-api'], [], 'invalid_target'],
    ['the API owns a granted scope', ['openid', 'orders.read'], ['orders-api'], [], undefined],
    [
      'bound at authorization (consented), no API scope',
      ['openid'],
      ['orders-api'],
      ['orders-api'],
      undefined,
    ],
    ['bound, API scope granted', ['orders.read'], ['orders-api'], ['orders-api', 'billing-api'], undefined],
    [
      'bound API without any granted scope: empty scope',
      ['offline_access'],
      [],
      ['orders-api'],
      'invalid_target',
    ],
  ])('%s → %s', (_name, scopes, requestedResources, boundResources, expected) => {
    expect(
      errorCode(() => selectAccessTokenTarget({ resources, scopes, requestedResources, boundResources })),
    ).toBe(expected);
  });

  it('never returns an API target with an empty scope', () => {
    for (const scopes of [[], ['openid'], ['offline_access'], ['orders.read'], ['billing.read', 'email']]) {
      for (const named of [[], ['orders-api'], ['billing-api']]) {
        let target: ReturnType<typeof selectAccessTokenTarget> | null = null;
        try {
          target = selectAccessTokenTarget({ ...base, scopes, requestedResources: named });
        } catch (error) {
          expect((error as OAuthError).code).toBe('invalid_target');
        }
        if (target?.resource) {
          expect(target.scopes.length).toBeGreaterThan(0);
          expect(target.resource.scopes.some((scope) => scopes.includes(scope))).toBe(true);
        }
      }
    }
  });

  it('accessTokenScopes without a resource keeps OIDC scopes only', () => {
    expect(accessTokenScopes(['openid', 'offline_access', 'orders.read'], null)).toEqual(['openid']);
  });
});
