import { describe, expect, it } from 'vitest';
import { collectAuthorizationParams } from '../src/interaction/authorization-params.js';
import {
  authorizationRedirectUrl,
  authorizationResponseParams,
  formActionSourceFor,
} from '../src/interaction/authorization-response.js';
import { csrfTokenFor, isValidCsrfToken } from '../src/interaction/csrf.js';
import { needsAuthentication, needsConsent } from '../src/interaction/decide.js';
import type { SsoSession } from '../src/interaction/sso-session-repository.js';

const now = 1_700_000_000;
const session: SsoSession = {
  id: 'sid-1',
  sub: 'u-1',
  authTime: now - 100,
  methods: [{ method: 'password', at: now - 100 }],
  createdAt: now - 100,
  expiresAt: now + 1000,
};

describe('needsAuthentication', () => {
  const cases: Array<[string, Parameters<typeof needsAuthentication>, boolean]> = [
    ['no session', [{ prompt: [], maxAge: null }, null, null, now], true],
    ['live session', [{ prompt: [], maxAge: null }, session, null, now], false],
    ['prompt=login with a session', [{ prompt: ['login'], maxAge: null }, session, null, now], true],
    [
      'prompt=login after logging in inside this interaction',
      [{ prompt: ['login'], maxAge: null }, session, { loginSid: 'sid-1', approvedScopes: null }, now],
      false,
    ],
    [
      'prompt=login, a login of another session',
      [{ prompt: ['login'], maxAge: null }, session, { loginSid: 'sid-0', approvedScopes: null }, now],
      true,
    ],
    ['max_age=0', [{ prompt: [], maxAge: 0 }, session, null, now], true],
    [
      'max_age=0 after logging in inside this interaction',
      [{ prompt: [], maxAge: 0 }, session, { loginSid: 'sid-1', approvedScopes: null }, now + 5],
      false,
    ],
    ['max_age not yet elapsed', [{ prompt: [], maxAge: 101 }, session, null, now], false],
    ['max_age elapsed to the second', [{ prompt: [], maxAge: 100 }, session, null, now], true],
    ['max_age elapsed', [{ prompt: [], maxAge: 99 }, session, null, now], true],
    ['prompt=none with a session', [{ prompt: ['none'], maxAge: null }, session, null, now], false],
  ];
  it.each(cases)('%s', (_name, args, expected) => {
    expect(needsAuthentication(...args)).toBe(expected);
  });
});

describe('needsConsent', () => {
  const base = {
    prompt: [] as string[],
    skipConsent: false,
    grantedScopes: ['openid', 'email'],
    rememberedScopes: [] as string[],
  };
  const cases: Array<[string, Parameters<typeof needsConsent>, boolean]> = [
    ['nothing remembered', [base, null], true],
    ['skip_consent client', [{ ...base, skipConsent: true }, null], false],
    [
      'remembered consent covers the scopes',
      [{ ...base, rememberedScopes: ['email', 'openid', 'profile'] }, null],
      false,
    ],
    ['remembered consent misses a scope', [{ ...base, rememberedScopes: ['openid'] }, null], true],
    [
      'prompt=consent despite remembered consent',
      [{ ...base, prompt: ['consent'], rememberedScopes: ['openid', 'email'] }, null],
      true,
    ],
    [
      'prompt=consent, approved inside this interaction',
      [
        { ...base, prompt: ['consent'] },
        { loginSid: null, approvedScopes: ['openid', 'email'] },
      ],
      false,
    ],
  ];
  it.each(cases)('%s', (_name, args, expected) => {
    expect(needsConsent(...args)).toBe(expected);
  });
});

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
