import { describe, expect, it } from 'vitest';
import { collectAuthorizationParams } from '../src/interaction/authorization-params.js';
import {
  authorizationRedirectUrl,
  authorizationResponseParams,
  formActionSourceFor,
} from '../src/interaction/authorization-response.js';
import { csrfTokenFor, isValidCsrfToken } from '../src/interaction/csrf.js';

describe('collectAuthorizationParams', () => {
  it('keeps single values, reports repeated names, lets resource repeat and drops empty values', () => {
    expect(
      collectAuthorizationParams({
        client_id: 'c',
        scope: ['openid', 'email'],
        state: '',
        resource: ['https://a', 'https://b'],
      }),
    ).toEqual({ params: { client_id: 'c' }, repeated: ['scope'], resources: ['https://a', 'https://b'] });
  });

  it('survives a missing body', () => {
    expect(collectAuthorizationParams(undefined)).toEqual({ params: {}, repeated: [], resources: [] });
  });
});

describe('CSRF tokens', () => {
  it('are bound to the browser key, the form and the interaction', () => {
    const token = csrfTokenFor('browser-a', 'login', 'i-1');
    expect(isValidCsrfToken(token, 'browser-a', 'login', 'i-1')).toBe(true);
    expect(isValidCsrfToken(token, 'browser-b', 'login', 'i-1')).toBe(false);
    expect(isValidCsrfToken(token, 'browser-a', 'consent', 'i-1')).toBe(false);
    expect(isValidCsrfToken(token, 'browser-a', 'login', 'i-2')).toBe(false);
    expect(isValidCsrfToken(undefined, 'browser-a', 'login', 'i-1')).toBe(false);
    expect(isValidCsrfToken('', 'browser-a', 'login', 'i-1')).toBe(false);
  });
});

describe('authorization response', () => {
  const target = {
    redirectUri: 'https://rp.example/cb?keep=1',
    responseMode: 'query' as const,
    state: 'st ate',
    issuer: 'https://op.example',
    client: { clientId: 'c' },
  };

  it('adds state and iss (RFC 9207) and keeps the registered query', () => {
    const params = authorizationResponseParams(target, { code: 'c', error_description: undefined });
    expect(params).toEqual({ code: 'c', state: 'st ate', iss: 'https://op.example' });
    const url = new URL(authorizationRedirectUrl(target, params));
    expect(url.searchParams.get('keep')).toBe('1');
    expect(url.searchParams.get('code')).toBe('c');
    expect(url.searchParams.get('state')).toBe('st ate');
    expect(url.searchParams.get('iss')).toBe('https://op.example');
  });

  it('omits state when the request had none', () => {
    expect(authorizationResponseParams({ ...target, state: null }, { code: 'c' })).toEqual({
      code: 'c',
      iss: 'https://op.example',
    });
  });

  it('derives the CSP form-action source from the redirect URI', () => {
    expect(formActionSourceFor('https://rp.example:8443/cb')).toBe('https://rp.example:8443');
    expect(formActionSourceFor('com.example.app:/oauth')).toBe('com.example.app:');
    expect(formActionSourceFor('not a url')).toBeNull();
  });
});
