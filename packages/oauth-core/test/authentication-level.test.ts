import { describe, expect, it } from 'vitest';
import {
  ACR_VALUES,
  acrOf,
  amrOf,
  authTimeOf,
  type CompletedMethod,
  type EnrolledFactors,
  grantMeetsAcr,
  issuedAcrOf,
  type LevelDemands,
  nextLevelStep,
  requestedAcr,
  requiredAcr,
  withCompletedMethod,
} from '../src/authentication-level.js';
import { authorizationCodeGrant } from '../src/grants/authorization-code.js';
import { refreshTokenGrant } from '../src/grants/refresh-token.js';
import { makeResource } from './fixtures.js';
import { createEnv, expectOAuthError, jwtClaims, VERIFIER } from './harness.js';

const password: CompletedMethod = { method: 'password', at: 100 };
const otp: CompletedMethod = { method: 'otp', at: 130 };
const recovery: CompletedMethod = { method: 'recovery_code', at: 140 };
const devicePasskey: CompletedMethod = { method: 'passkey', at: 150, userVerified: true, synced: false };
const syncedPasskey: CompletedMethod = { method: 'passkey', at: 150, userVerified: true, synced: true };
const presenceOnlyPasskey: CompletedMethod = { method: 'passkey', at: 150, userVerified: false };

describe('amr (RFC 8176) and acr of completed methods', () => {
  it.each([
    ['password', [password], ['pwd'], ACR_VALUES.password],
    ['password + authenticator app', [password, otp], ['pwd', 'otp', 'mfa'], ACR_VALUES.mfa],
    ['password + recovery code', [password, recovery], ['pwd', 'otp', 'mfa'], ACR_VALUES.mfa],
    ['device-bound passkey with UV', [devicePasskey], ['hwk', 'user', 'mfa'], ACR_VALUES.phishingResistant],
    ['synced passkey with UV', [syncedPasskey], ['swk', 'user', 'mfa'], ACR_VALUES.phishingResistant],
    ['passkey without UV', [presenceOnlyPasskey], ['hwk'], ACR_VALUES.password],
    [
      'password + passkey as second factor',
      [password, presenceOnlyPasskey],
      ['pwd', 'hwk', 'mfa'],
      ACR_VALUES.phishingResistant,
    ],
  ] as const)('%s', (_name, methods, amr, acr) => {
    expect(amrOf(methods)).toEqual(amr);
    expect(acrOf(methods)).toBe(acr);
  });

  it('nothing completed: no acr, no auth_time', () => {
    expect(acrOf([])).toBeNull();
    expect(authTimeOf([])).toBeNull();
  });

  it('auth_time is the latest completed method (a step-up moves it)', () => {
    expect(authTimeOf([password, otp])).toBe(130);
  });

  it('a password sign-in starts the list over; a second factor is added to it', () => {
    expect(withCompletedMethod([password, otp], { method: 'password', at: 200 })).toEqual([
      { method: 'password', at: 200 },
    ]);
    expect(withCompletedMethod([password], otp)).toEqual([password, otp]);
    expect(withCompletedMethod([password, otp], { method: 'otp', at: 300 })).toEqual([
      password,
      { method: 'otp', at: 300 },
    ]);
  });
});

describe('the acr issued after a trusted upstream', () => {
  const UPSTREAM = 'urn:example:loa-2';
  const federated: CompletedMethod = {
    method: 'federated',
    at: 100,
    upstreamAmr: ['pwd'],
    upstreamAcr: UPSTREAM,
  };
  const asked = (acrValues: string[], required: string = ACR_VALUES.password) => ({
    acrValues,
    required: required as (typeof ACR_VALUES)[keyof typeof ACR_VALUES],
  });

  it.each([
    ['no demand: the upstream’s', [federated], asked([]), UPSTREAM],
    [
      'the upstream’s value requested: the upstream’s',
      [federated],
      asked([UPSTREAM, ACR_VALUES.mfa]),
      UPSTREAM,
    ],
    ['only unknown values requested: the upstream’s', [federated], asked(['urn:other']), UPSTREAM],
    ['one of ours requested: ours', [federated], asked([ACR_VALUES.password]), ACR_VALUES.password],
    ['more than one factor required: ours', [federated], asked([], ACR_VALUES.mfa), ACR_VALUES.password],
    ['our second factor added after it: ours', [federated, otp], asked([]), ACR_VALUES.mfa],
    ['no upstream acr recorded (untrusted): ours', [password], asked([]), ACR_VALUES.password],
  ] as const)('%s', (_name, methods, demand, acr) => {
    expect(issuedAcrOf(methods, demand)).toBe(acr);
  });

  it('a local proof during the federated sign-in adds its amr after fed', () => {
    expect(amrOf([{ method: 'federated', at: 100, upstreamAmr: [], localAmr: ['pwd'] }])).toEqual([
      'fed',
      'pwd',
    ]);
  });
});

describe('requested and required level', () => {
  const none: LevelDemands = {
    acrValues: [],
    clientRequiresMfa: false,
    userRequiresMfa: false,
    userHasSecondFactor: false,
    resourceRequiresMfa: false,
  };

  it('acr_values: the weakest known value answers the request; unknown values are ignored', () => {
    expect(requestedAcr([ACR_VALUES.phishingResistant, ACR_VALUES.mfa])).toBe(ACR_VALUES.mfa);
    expect(requestedAcr(['urn:unknown', ACR_VALUES.phishingResistant])).toBe(ACR_VALUES.phishingResistant);
    expect(requestedAcr(['urn:unknown'])).toBeNull();
  });

  it.each([
    ['nothing demanded', {}, ACR_VALUES.password],
    ['client require_mfa', { clientRequiresMfa: true }, ACR_VALUES.mfa],
    ['user mfa_required', { userRequiresMfa: true }, ACR_VALUES.mfa],
    ['user enrolled a factor', { userHasSecondFactor: true }, ACR_VALUES.mfa],
    ['resource require_mfa', { resourceRequiresMfa: true }, ACR_VALUES.mfa],
    ['acr_values mfa', { acrValues: [ACR_VALUES.mfa] }, ACR_VALUES.mfa],
    [
      'acr_values phishing-resistant',
      { acrValues: [ACR_VALUES.phishingResistant] },
      ACR_VALUES.phishingResistant,
    ],
    [
      'acr_values password under require_mfa',
      { acrValues: [ACR_VALUES.password], clientRequiresMfa: true },
      ACR_VALUES.mfa,
    ],
  ] as const)('%s', (_name, demands, expected) => {
    expect(requiredAcr({ ...none, ...demands })).toBe(expected);
  });
});

describe('next step towards the level', () => {
  const enrolled = (factors: Partial<EnrolledFactors>): EnrolledFactors => ({
    otp: false,
    passkey: false,
    recoveryCodes: false,
    ...factors,
  });

  it('a password session is satisfied at the password level', () => {
    expect(nextLevelStep([password], ACR_VALUES.password, enrolled({}))).toEqual({ kind: 'satisfied' });
  });

  it('step-up: a password session with an authenticator app asks for the second factor only', () => {
    expect(nextLevelStep([password], ACR_VALUES.mfa, enrolled({ otp: true }))).toEqual({
      kind: 'second_factor',
      passkeyOnly: false,
    });
  });

  it('no factor that reaches the level: enrolment first', () => {
    expect(nextLevelStep([password], ACR_VALUES.mfa, enrolled({}))).toEqual({
      kind: 'enrol',
      passkeyOnly: false,
    });
    expect(nextLevelStep([password, otp], ACR_VALUES.phishingResistant, enrolled({ otp: true }))).toEqual({
      kind: 'enrol',
      passkeyOnly: true,
    });
  });

  it('a session that met the level is satisfied', () => {
    expect(nextLevelStep([password, otp], ACR_VALUES.mfa, enrolled({ otp: true }))).toEqual({
      kind: 'satisfied',
    });
  });
});

describe('tokens keep the level', () => {
  it('grants without a recorded level count as password sign-ins', () => {
    expect(grantMeetsAcr(null, ACR_VALUES.password)).toBe(true);
    expect(grantMeetsAcr(null, ACR_VALUES.mfa)).toBe(false);
    expect(grantMeetsAcr('urn:forged', ACR_VALUES.mfa)).toBe(false);
    expect(grantMeetsAcr(ACR_VALUES.phishingResistant, ACR_VALUES.mfa)).toBe(true);
  });

  it('the ID token carries the grant amr and acr, and a refresh keeps them', async () => {
    const env = await createEnv();
    const { code } = await env.seedCode({ grant: { amr: ['pwd', 'otp', 'mfa'], acr: ACR_VALUES.mfa } });
    const request = await env.tokenRequest('web', {
      grant_type: 'authorization_code',
      code,
      redirect_uri: 'https://app.example.test/cb',
      code_verifier: VERIFIER,
    });
    const first = await authorizationCodeGrant.handle(request, env.context);
    expect(jwtClaims(first.id_token!)).toMatchObject({ amr: ['pwd', 'otp', 'mfa'], acr: ACR_VALUES.mfa });
    const refreshed = await refreshTokenGrant.handle(
      await env.tokenRequest('web', { grant_type: 'refresh_token', refresh_token: first.refresh_token }),
      env.context,
    );
    expect(jwtClaims(refreshed.id_token!)).toMatchObject({ amr: ['pwd', 'otp', 'mfa'], acr: ACR_VALUES.mfa });
  });

  it('a resource with require_mfa gets no token from a password-only grant', async () => {
    const env = await createEnv();
    env.stores.seed({ resources: [makeResource({ requireMfa: true })] });
    const { code } = await env.seedCode({ grant: { amr: ['pwd'], acr: ACR_VALUES.password } });
    const request = await env.tokenRequest('web', {
      grant_type: 'authorization_code',
      code,
      redirect_uri: 'https://app.example.test/cb',
      code_verifier: VERIFIER,
    });
    await expectOAuthError(authorizationCodeGrant.handle(request, env.context), 'invalid_grant');

    const { code: mfaCode } = await env.seedCode({
      grant: { amr: ['pwd', 'otp', 'mfa'], acr: ACR_VALUES.mfa },
    });
    const ok = await authorizationCodeGrant.handle(
      await env.tokenRequest('web', {
        grant_type: 'authorization_code',
        code: mfaCode,
        redirect_uri: 'https://app.example.test/cb',
        code_verifier: VERIFIER,
      }),
      env.context,
    );
    expect(jwtClaims(ok.access_token).aud).toBe('orders-api');
  });
});

describe('a federated sign-in (RFC 8176 `fed`)', () => {
  it('says fed and the upstream amr, and counts as one factor when the provider is not trusted for MFA', () => {
    const methods: CompletedMethod[] = [{ method: 'federated', at: 10, upstreamAmr: ['pwd', 'otp', 'mfa'] }];
    // The untrusted upstream's own `mfa` is not repeated: the level is one factor here.
    expect(amrOf(methods)).toEqual(['fed', 'pwd', 'otp']);
    expect(acrOf(methods)).toBe(ACR_VALUES.password);
  });

  it('reaches the multi-factor level when the upstream proved MFA at a trusted provider', () => {
    const methods: CompletedMethod[] = [
      { method: 'federated', at: 10, upstreamAmr: ['pwd', 'otp'], upstreamMfa: true },
    ];
    expect(amrOf(methods)).toEqual(['fed', 'pwd', 'otp', 'mfa']);
    expect(acrOf(methods)).toBe(ACR_VALUES.mfa);
  });
});
