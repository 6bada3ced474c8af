import { beforeEach, describe, expect, it } from 'vitest';
import {
  authorizeDevice,
  type DeviceAuthorizationResponse,
  type DeviceAuthorizationSettings,
} from '../src/device-authorization.js';
import {
  approveDeviceAuthorization,
  denyDeviceAuthorization,
  findDeviceAuthorization,
  findDeviceAuthorizationByUserCode,
} from '../src/device-verification.js';
import { deviceCodeGrant } from '../src/grants/device-code.js';
import { createGrantRegistry, handleTokenRequest } from '../src/grants/index.js';
import { refreshTokenGrant } from '../src/grants/refresh-token.js';
import type { TokenRequest } from '../src/grants/types.js';
import { type Client, GRANT_TYPES } from '../src/model.js';
import type { TokenStores } from '../src/storage/index.js';
import { hashToken } from '../src/tokens/opaque.js';
import { normalizeUserCode } from '../src/user-code.js';
import { makeClient, makeUser } from './fixtures.js';
import { createEnv, type Env, expectOAuthError, jwtClaims, oauthError } from './harness.js';

const DEVICE = GRANT_TYPES.deviceCode;
const SETTINGS: DeviceAuthorizationSettings = {
  verificationUri: 'https://auth.example.test/device',
  deviceCodeTtl: 600,
  pollInterval: 5,
};

/** A public CLI client (device + refresh) and a confidential TV app (device only). */
const cliClient = (overrides: Partial<Client> = {}): Client =>
  makeClient({
    clientId: 'cli',
    clientName: 'Orders CLI',
    secretHash: null,
    redirectUris: [],
    grantTypes: [DEVICE, 'refresh_token'],
    scopes: ['openid', 'profile', 'email', 'offline_access', 'orders.read'],
    ...overrides,
  });
const tvClient = (): Client =>
  makeClient({
    clientId: 'tv',
    clientName: 'TV',
    redirectUris: [],
    grantTypes: [DEVICE],
    scopes: ['openid'],
  });

const SCOPE = 'openid profile email offline_access orders.read';

describe('device authorization grant (RFC 8628)', () => {
  let env: Env;
  beforeEach(async () => {
    env = await createEnv();
    env.stores.seed({
      clients: [cliClient(), tvClient()],
      users: [makeUser({ sub: 'u-carol', username: 'carol', allowedScopes: ['openid', 'offline_access'] })],
    });
  });

  const context = () => ({ ...env.context, settings: SETTINGS });

  async function startDevice(
    clientId = 'cli',
    params: Record<string, string> = { scope: SCOPE },
    resources: string[] = [],
  ): Promise<DeviceAuthorizationResponse> {
    return authorizeDevice({ params, resources, client: await env.client(clientId) }, context());
  }

  async function pendingOf(response: DeviceAuthorizationResponse) {
    const lookup = await findDeviceAuthorizationByUserCode(response.user_code, env.context);
    if (lookup.status !== 'pending') throw new Error(`expected a pending code, got ${lookup.status}`);
    return lookup;
  }

  async function approve(
    response: DeviceAuthorizationResponse,
    subject: { sub?: string; scopes?: string[] } = {},
  ) {
    return approveDeviceAuthorization(
      await pendingOf(response),
      { sub: subject.sub ?? 'u-alice', scopes: subject.scopes, sid: 'sid-tv', authTime: env.T0 - 20 },
      env.context,
    );
  }

  const poll = async (
    response: DeviceAuthorizationResponse,
    clientId = 'cli',
    extra: Partial<TokenRequest> = {},
  ) =>
    deviceCodeGrant.handle(
      await env.tokenRequest(clientId, { grant_type: DEVICE, device_code: response.device_code }, extra),
      env.context,
    );

  const stored = (response: DeviceAuthorizationResponse) =>
    env.stores.deviceCodes.findDeviceCode(hashToken(response.device_code));

  describe('device authorization request', () => {
    it('returns device_code, user_code, both verification URIs, expires_in and interval', async () => {
      const response = await startDevice();
      expect(Object.keys(response).sort()).toEqual([
        'device_code',
        'expires_in',
        'interval',
        'user_code',
        'verification_uri',
        'verification_uri_complete',
      ]);
      expect(response.device_code).toMatch(/^[A-Za-z0-9_-]{43}$/);
      expect(response.user_code).toMatch(/^[BCDFGHJKLMNPQRSTVWXZ]{4}-[BCDFGHJKLMNPQRSTVWXZ]{4}$/);
      expect(response.verification_uri).toBe('https://auth.example.test/device');
      const complete = new URL(response.verification_uri_complete);
      expect(`${complete.origin}${complete.pathname}`).toBe('https://auth.example.test/device');
      expect(complete.searchParams.get('user_code')).toBe(response.user_code);
      expect(response).toMatchObject({ expires_in: 600, interval: 5 });
    });

    it('stores only hashes of the device code and the user code', async () => {
      const response = await startDevice();
      const record = await stored(response);
      expect(record).toMatchObject({
        deviceCodeHash: hashToken(response.device_code),
        userCodeHash: hashToken(normalizeUserCode(response.user_code)!),
        clientId: 'cli',
        scopes: ['openid', 'profile', 'email', 'offline_access', 'orders.read'],
        resources: [],
        createdAt: env.T0,
        expiresAt: env.T0 + 600,
        interval: 5,
        status: 'pending',
        grantId: null,
      });
      const serialized = JSON.stringify(record);
      expect(serialized).not.toContain(response.device_code);
      expect(serialized).not.toContain(normalizeUserCode(response.user_code)!);
    });

    it('takes expires_in and interval from the settings', async () => {
      const response = await authorizeDevice(
        { params: { scope: 'openid' }, resources: [], client: await env.client('cli') },
        { ...env.context, settings: { ...SETTINGS, deviceCodeTtl: 30, pollInterval: 2 } },
      );
      expect(response).toMatchObject({ expires_in: 30, interval: 2 });
      expect(await stored(response)).toMatchObject({ expiresAt: env.T0 + 30, interval: 2 });
    });

    it('binds known RFC 8707 resources (deduplicated) to the code', async () => {
      const response = await startDevice('cli', { scope: 'openid orders.read' }, [
        'orders-api',
        'orders-api',
      ]);
      expect((await stored(response))?.resources).toEqual(['orders-api']);
    });

    it.each([
      ['a client without the device grant', 'web', { scope: 'openid' }, [], 'unauthorized_client'],
      ['no scope', 'cli', {}, [], 'invalid_scope'],
      ['a blank scope', 'cli', { scope: '  ' }, [], 'invalid_scope'],
      ['a scope the client may not have', 'cli', { scope: 'openid orders.write' }, [], 'invalid_scope'],
      ['a malformed scope', 'cli', { scope: 'openid "x"' }, [], 'invalid_scope'],
      ['an unknown resource', 'cli', { scope: 'openid' }, ['https://nowhere.example'], 'invalid_target'],
    ] as const)('refuses %s', async (_case, clientId, params, resources, error) => {
      await expectOAuthError(startDevice(clientId, { ...params }, [...resources]), error);
    });

    it('draws another user code when the first collides with a stored one', async () => {
      const create = env.stores.deviceCodes.createDeviceCode.bind(env.stores.deviceCodes);
      let calls = 0;
      env.stores.deviceCodes.createDeviceCode = async (code) => (++calls === 1 ? false : create(code));
      const response = await startDevice();
      expect(calls).toBe(2);
      expect((await pendingOf(response)).deviceCode.deviceCodeHash).toBe(hashToken(response.device_code));
    });

    it('gives up with server_error when every user code it draws is taken', async () => {
      env.stores.deviceCodes.createDeviceCode = async () => false;
      await expectOAuthError(startDevice(), 'server_error', 500);
    });

    it('deletes codes that expired more than an hour ago when issuing a new one', async () => {
      const old = await startDevice();
      env.clock.advance(600 + 3600);
      const recent = await startDevice();
      env.clock.advance(1);
      await startDevice();
      expect(await stored(old)).toBeNull();
      expect(await stored(recent)).not.toBeNull();
    });
  });

  describe('polling answers', () => {
    it('answers authorization_pending while the user has not decided', async () => {
      const response = await startDevice();
      env.clock.advance(5);
      await expectOAuthError(poll(response), 'authorization_pending');
      env.clock.advance(5);
      await expectOAuthError(poll(response), 'authorization_pending');
      expect((await stored(response))?.lastPolledAt).toBe(env.T0 + 10);
    });

    it('a poll exactly one interval after the previous one is not too fast', async () => {
      const response = await startDevice();
      await expectOAuthError(poll(response), 'authorization_pending');
      env.clock.advance(5);
      await expectOAuthError(poll(response), 'authorization_pending');
    });

    it('slow_down when polled sooner than the interval; the interval then grows by 5 s each time', async () => {
      const response = await startDevice();
      await expectOAuthError(poll(response), 'authorization_pending');
      env.clock.advance(4);
      const first = await expectOAuthError(poll(response), 'slow_down');
      expect(first.description).toContain('10 seconds');
      expect((await stored(response))?.interval).toBe(10);

      // 9 s < 10 s: too fast again, so 15 s now.
      env.clock.advance(9);
      await expectOAuthError(poll(response), 'slow_down');
      expect((await stored(response))?.interval).toBe(15);

      // Waiting the grown interval is fine, and the interval stays where it grew to.
      env.clock.advance(15);
      await expectOAuthError(poll(response), 'authorization_pending');
      env.clock.advance(15);
      await expectOAuthError(poll(response), 'authorization_pending');
      expect((await stored(response))?.interval).toBe(15);
    });

    it('access_denied after the user denies, on every later poll', async () => {
      const response = await startDevice();
      const pending = await pendingOf(response);
      expect(await denyDeviceAuthorization(pending.deviceCode.deviceCodeHash, 'u-alice', env.context)).toBe(
        true,
      );
      await expectOAuthError(poll(response), 'access_denied');
      env.clock.advance(5);
      await expectOAuthError(poll(response), 'access_denied');
      expect(await stored(response)).toMatchObject({ status: 'denied', sub: 'u-alice', grantId: null });
    });

    it('expired_token once expires_in has passed, whether pending or approved', async () => {
      const pending = await startDevice();
      const approved = await startDevice();
      await approve(approved);
      env.clock.advance(600);
      await expectOAuthError(poll(pending), 'expired_token');
      await expectOAuthError(poll(approved), 'expired_token');
      expect((await stored(approved))?.status).toBe('approved');
    });

    it('issues access, refresh and ID tokens once approved, tied to the grant created at approval', async () => {
      const response = await startDevice();
      env.clock.advance(5);
      await expectOAuthError(poll(response), 'authorization_pending');
      const approval = await approve(response);
      expect(approval).not.toBeNull();
      env.clock.advance(5);

      const tokens = await poll(response);

      expect(tokens).toMatchObject({
        token_type: 'Bearer',
        scope: 'openid profile email offline_access orders.read',
      });
      expect(tokens.refresh_token).toBeTruthy();
      const grant = await env.stores.grants.findGrant(approval!.grantId);
      expect(grant).toMatchObject({
        clientId: 'cli',
        sub: 'u-alice',
        scopes: ['openid', 'profile', 'email', 'offline_access', 'orders.read'],
        sid: 'sid-tv',
        authTime: env.T0 - 20,
      });
      expect(jwtClaims(tokens.access_token)).toMatchObject({
        sub: 'u-alice',
        aud: 'orders-api',
        client_id: 'cli',
        gid: approval!.grantId,
        email: 'alice@example.com',
      });
      const idToken = jwtClaims(tokens.id_token!);
      expect(idToken).toMatchObject({ sub: 'u-alice', aud: 'cli', sid: 'sid-tv', auth_time: env.T0 - 20 });
      expect(idToken.nonce).toBeUndefined();
      const refresh = await env.stores.refreshTokens.findRefreshToken(hashToken(tokens.refresh_token!));
      expect(refresh).toMatchObject({ grantId: approval!.grantId, clientId: 'cli', parentHash: null });
      expect(await stored(response)).toMatchObject({ status: 'redeemed', redeemedAt: env.T0 + 10 });
    });

    it('mints as the code grant does: a DPoP proof binds the token and a public client refresh token', async () => {
      const response = await startDevice();
      await approve(response);
      env.clock.advance(5);
      const jkt = 'NzbLsXh8uDCcd-6MNwXF4W_7noWXFZAfHkxZsRGC9Xs';

      const tokens = await poll(response, 'cli', { dpopJkt: jkt });

      expect(tokens.token_type).toBe('DPoP');
      expect(jwtClaims(tokens.access_token).cnf).toEqual({ jkt });
      expect(
        (await env.stores.refreshTokens.findRefreshToken(hashToken(tokens.refresh_token!)))?.dpopJkt,
      ).toBe(jkt);
    });

    it('signs every token before its transaction opens, as the code and refresh grants do', async () => {
      const response = await startDevice();
      await approve(response);
      env.clock.advance(5);
      let inTransaction = false;
      const signedInside: string[] = [];
      const stores = {
        ...env.stores,
        transaction: async <T>(work: (tx: TokenStores) => Promise<T>) => {
          inTransaction = true;
          try {
            return await env.stores.transaction(work);
          } finally {
            inTransaction = false;
          }
        },
      };
      const signer = {
        sign: async (...args: Parameters<typeof env.context.signer.sign>) => {
          if (inTransaction) signedInside.push(String(args[1].typ));
          return env.context.signer.sign(...args);
        },
      };
      const tokens = await deviceCodeGrant.handle(
        await env.tokenRequest('cli', { grant_type: DEVICE, device_code: response.device_code }),
        { ...env.context, stores, signer },
      );
      expect(tokens.id_token).toEqual(expect.any(String));
      expect(signedInside).toEqual([]);
      // The records signed outside were written inside: the tokens are live.
      expect(
        await env.stores.refreshTokens.findRefreshToken(hashToken(tokens.refresh_token!)),
      ).not.toBeNull();
    });

    it('the refresh token of a device grant rotates like any other', async () => {
      const response = await startDevice();
      await approve(response);
      const tokens = await poll(response);
      const refreshed = await refreshTokenGrant.handle(
        await env.tokenRequest('cli', { grant_type: 'refresh_token', refresh_token: tokens.refresh_token }),
        env.context,
      );
      expect(refreshed.refresh_token).toBeTruthy();
      expect(refreshed.refresh_token).not.toBe(tokens.refresh_token);
    });

    it('no refresh token without offline_access (OIDC Core §11)', async () => {
      const response = await startDevice('cli', { scope: 'openid orders.read' });
      await approve(response);
      const tokens = await poll(response);
      expect(tokens.refresh_token).toBeUndefined();
      expect(tokens.id_token).toBeTruthy();
    });

    it('a confidential device client gets tokens too', async () => {
      const response = await startDevice('tv', { scope: 'openid' });
      await approve(response);
      const tokens = await poll(response, 'tv');
      expect(tokens.id_token).toBeTruthy();
      expect(tokens.refresh_token).toBeUndefined();
    });

    it('invalid_grant for a device_code already redeemed, and the grant is revoked', async () => {
      const response = await startDevice();
      const approval = await approve(response);
      const tokens = await poll(response);
      env.clock.advance(5);
      expect(env.revokedGrants).toEqual([]);

      await expectOAuthError(poll(response), 'invalid_grant');

      expect((await env.stores.grants.findGrant(approval!.grantId))?.revokedAt).toBe(env.T0 + 5);
      const refresh = await env.stores.refreshTokens.findRefreshToken(hashToken(tokens.refresh_token!));
      expect(refresh?.revokedAt).toBe(env.T0 + 5);
      // Reported like a reused authorization code, for the server's audit.
      expect(env.revokedGrants).toEqual([
        {
          reason: 'device_code_reused',
          grantType: DEVICE,
          grantId: approval!.grantId,
          clientId: 'cli',
          sub: 'u-alice',
        },
      ]);
    });

    it('10 racing polls after approval: exactly one gets tokens, the rest invalid_grant, nothing revoked', async () => {
      const response = await startDevice();
      const approval = await approve(response);
      const results = await Promise.allSettled(Array.from({ length: 10 }, () => poll(response)));
      const winners = results.filter((result) => result.status === 'fulfilled');
      expect(winners).toHaveLength(1);
      for (const result of results) {
        if (result.status === 'rejected') expect(result.reason).toMatchObject({ code: 'invalid_grant' });
      }
      expect((await env.stores.grants.findGrant(approval!.grantId))?.revokedAt).toBeNull();
      expect(env.revokedGrants).toEqual([]);
    });

    it.each([
      ['device_code missing', {}, 'invalid_request'],
      ['device_code empty', { device_code: '' }, 'invalid_request'],
      ['an unknown device_code', { device_code: 'x'.repeat(43) }, 'invalid_grant'],
    ] as const)('%s → %s', async (_case, params, error) => {
      const request = await env.tokenRequest('cli', { grant_type: DEVICE, ...params });
      await expectOAuthError(deviceCodeGrant.handle(request, env.context), error);
    });

    it('invalid_grant for a device_code issued to another client, even once approved', async () => {
      const response = await startDevice('tv', { scope: 'openid' });
      await expectOAuthError(poll(response, 'cli'), 'invalid_grant');
      await approve(response);
      await expectOAuthError(poll(response, 'cli'), 'invalid_grant');
      expect((await stored(response))?.status).toBe('approved');
    });

    it('invalid_grant when the grant was revoked after approval (e.g. logout)', async () => {
      const response = await startDevice();
      const approval = await approve(response);
      await env.stores.grants.revokeGrant(approval!.grantId, env.T0);
      await expectOAuthError(poll(response), 'invalid_grant');
    });

    it('the token endpoint registry dispatches the device grant; unauthorized_client without it', async () => {
      const registry = createGrantRegistry();
      const response = await startDevice();
      await approve(response);
      const tokens = await handleTokenRequest(
        await env.tokenRequest('cli', { grant_type: DEVICE, device_code: response.device_code }),
        env.context,
        registry,
      );
      expect(tokens.access_token).toBeTruthy();
      const web = await env.tokenRequest('web', { grant_type: DEVICE, device_code: response.device_code });
      await expectOAuthError(handleTokenRequest(web, env.context, registry), 'unauthorized_client');
    });
  });

  describe('verification (the user side)', () => {
    it('finds a pending code however the user types it', async () => {
      const response = await startDevice();
      const typed = [
        response.user_code,
        response.user_code.toLowerCase(),
        response.user_code.replace('-', ''),
        ` ${response.user_code.toLowerCase().replace('-', ' ')} `,
      ];
      for (const input of typed) {
        const lookup = await findDeviceAuthorizationByUserCode(input, env.context);
        expect(lookup).toMatchObject({
          status: 'pending',
          client: { clientId: 'cli', clientName: 'Orders CLI' },
        });
      }
    });

    it('classifies malformed, unknown, expired and used codes', async () => {
      const find = (typed: string) => findDeviceAuthorizationByUserCode(typed, env.context);
      expect(await find('AEIOU')).toEqual({ status: 'invalid' });
      expect(await find('BBBB-BBBB')).toEqual({ status: 'invalid' });
      const used = await startDevice();
      await approve(used);
      expect(await find(used.user_code)).toEqual({ status: 'used' });
      const denied = await startDevice();
      await denyDeviceAuthorization((await pendingOf(denied)).deviceCode.deviceCodeHash, null, env.context);
      expect(await find(denied.user_code)).toEqual({ status: 'used' });
      const expired = await startDevice();
      env.clock.advance(600);
      expect(await find(expired.user_code)).toEqual({ status: 'expired' });
      expect(await findDeviceAuthorization(hashToken(expired.device_code), env.context)).toEqual({
        status: 'expired',
      });
    });

    it('a code whose client lost the device grant can no longer be approved', async () => {
      const response = await startDevice();
      env.stores.seed({ clients: [cliClient({ grantTypes: ['refresh_token'] })] });
      expect(await findDeviceAuthorizationByUserCode(response.user_code, env.context)).toEqual({
        status: 'invalid',
      });
    });

    it('approval narrows to what the user may have and what consent kept', async () => {
      const restricted = await startDevice();
      const forCarol = await approve(restricted, { sub: 'u-carol' });
      expect(forCarol?.scopes).toEqual(['openid', 'offline_access']);

      const narrowed = await startDevice();
      const consented = await approve(narrowed, { scopes: ['openid', 'orders.read', 'orders.write'] });
      expect(consented?.scopes).toEqual(['openid', 'orders.read']);
      expect((await env.stores.grants.findGrant(consented!.grantId))?.scopes).toEqual([
        'openid',
        'orders.read',
      ]);
    });

    it('approval refuses (access_denied) when nothing can be granted, and leaves the code pending', async () => {
      const response = await startDevice('cli', { scope: 'orders.read' });
      const error = await oauthError(approve(response, { sub: 'u-carol' }));
      expect(error.code).toBe('access_denied');
      expect((await stored(response))?.status).toBe('pending');
    });

    it('of two concurrent approvals (two tabs) exactly one wins; the code records its grant', async () => {
      const response = await startDevice();
      const pending = await pendingOf(response);
      const subject = { sub: 'u-alice', sid: null, authTime: env.T0 };
      const [first, second] = await Promise.all([
        approveDeviceAuthorization(pending, subject, env.context),
        approveDeviceAuthorization(pending, subject, env.context),
      ]);
      const winners = [first, second].filter((result) => result !== null);
      expect(winners).toHaveLength(1);
      expect((await stored(response))?.grantId).toBe(winners[0]!.grantId);
    });

    it('approval after expiry gets null; deny after approval is false', async () => {
      const late = await startDevice();
      const pending = await pendingOf(late);
      env.clock.advance(600);
      expect(
        await approveDeviceAuthorization(
          pending,
          { sub: 'u-alice', sid: null, authTime: env.T0 },
          env.context,
        ),
      ).toBeNull();

      const approved = await startDevice();
      await approve(approved);
      expect(await denyDeviceAuthorization(hashToken(approved.device_code), 'u-alice', env.context)).toBe(
        false,
      );
    });
  });
});
