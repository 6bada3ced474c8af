import { describe, expect, it } from 'vitest';
import {
  type AuthenticatedSession,
  needsAuthentication,
  needsConsent,
} from '../src/interaction-decisions.js';

const now = 1_700_000_000;
const session: AuthenticatedSession = {
  id: 'sid-1',
  authTime: now - 100,
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
