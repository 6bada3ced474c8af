import { compactVerify, createLocalJWKSet, decodeJwt, decodeProtectedHeader } from 'jose';
import { describe, expect, it } from 'vitest';
import { defaultProtocolConfig } from '../src/config.js';
import {
  BACKCHANNEL_LOGOUT_EVENT,
  createLogoutToken,
  endSessionGrants,
  frontChannelLogoutUri,
} from '../src/logout.js';
import type { Grant } from '../src/model.js';
import { createMemoryStores, createTestClock, createTestKeys, createTestRandom } from '../src/testing.js';
import { ISSUER, makeClient } from './fixtures.js';

async function setup() {
  const clock = createTestClock();
  const keys = await createTestKeys(clock);
  const stores = createMemoryStores({
    clients: [
      makeClient({
        clientId: 'both',
        frontchannelLogoutUri: 'https://both.example.test/fcl?tenant=1',
        backchannelLogoutUri: 'https://both.example.test/bcl',
        idTokenSigningAlg: 'ES256',
      }),
      makeClient({
        clientId: 'offline',
        backchannelLogoutUri: 'https://offline.example.test/bcl',
        keepOfflineAccessOnLogout: true,
      }),
      makeClient({ clientId: 'silent' }),
    ],
  });
  const grant = (id: string, over: Partial<Grant>): Grant => ({
    id,
    clientId: 'both',
    sub: 'u-alice',
    scopes: ['openid', 'offline_access'],
    resources: [],
    sid: 'sid-1',
    authTime: clock.nowSeconds(),
    createdAt: clock.nowSeconds(),
    revokedAt: null,
    ...over,
  });
  for (const g of [
    grant('g-both-1', {}),
    grant('g-both-2', {}),
    grant('g-offline', { clientId: 'offline' }),
    grant('g-silent', { clientId: 'silent' }),
    grant('g-other-session', { sid: 'sid-2' }),
  ]) {
    await stores.grants.createGrant(g);
  }
  const context = {
    stores,
    signer: keys.signer,
    clock,
    random: createTestRandom('logout'),
    config: defaultProtocolConfig(ISSUER),
  };
  return { clock, keys, stores, context };
}

describe('endSessionGrants', () => {
  it('revokes the session’s grants except those of clients keeping offline access', async () => {
    const { stores, context, clock } = await setup();
    const result = await endSessionGrants({ sid: 'sid-1', sub: 'u-alice' }, context);
    expect(result.revokedGrantIds.sort()).toEqual(['g-both-1', 'g-both-2', 'g-silent']);
    for (const id of ['g-both-1', 'g-both-2', 'g-silent']) {
      expect((await stores.grants.findGrant(id))?.revokedAt).toBe(clock.nowSeconds());
    }
    expect((await stores.grants.findGrant('g-offline'))?.revokedAt).toBeNull();
    expect((await stores.grants.findGrant('g-other-session'))?.revokedAt).toBeNull();
  });

  it('names each front-channel client once, with iss and sid added to its URI', async () => {
    const { context } = await setup();
    const { frontChannel } = await endSessionGrants({ sid: 'sid-1', sub: 'u-alice' }, context);
    expect(frontChannel).toHaveLength(1);
    const uri = new URL(frontChannel[0]!.uri);
    expect(frontChannel[0]!.clientId).toBe('both');
    expect(`${uri.origin}${uri.pathname}`).toBe('https://both.example.test/fcl');
    expect(Object.fromEntries(uri.searchParams)).toEqual({ tenant: '1', iss: ISSUER, sid: 'sid-1' });
  });

  it('signs one logout token per back-channel client, as Back-Channel Logout §2.4 requires', async () => {
    const { context, keys, clock } = await setup();
    const { backChannel } = await endSessionGrants({ sid: 'sid-1', sub: 'u-alice' }, context);
    expect(backChannel.map((delivery) => [delivery.clientId, delivery.uri])).toEqual([
      ['both', 'https://both.example.test/bcl'],
      ['offline', 'https://offline.example.test/bcl'],
    ]);
    const jwks = createLocalJWKSet(keys.jwks);
    for (const delivery of backChannel) {
      await compactVerify(delivery.logoutToken, jwks);
      expect(decodeProtectedHeader(delivery.logoutToken).typ).toBe('logout+jwt');
      const claims = decodeJwt(delivery.logoutToken);
      expect(claims).toMatchObject({
        iss: ISSUER,
        aud: delivery.clientId,
        sub: 'u-alice',
        sid: 'sid-1',
        iat: clock.nowSeconds(),
        events: { [BACKCHANNEL_LOGOUT_EVENT]: {} },
      });
      expect(claims.jti).toEqual(expect.any(String));
      expect(claims).not.toHaveProperty('nonce');
    }
    expect(decodeProtectedHeader(backChannel[0]!.logoutToken).alg).toBe('ES256');
    expect(decodeJwt(backChannel[0]!.logoutToken).jti).not.toBe(decodeJwt(backChannel[1]!.logoutToken).jti);
  });

  it('does nothing for a session without grants', async () => {
    const { context } = await setup();
    expect(await endSessionGrants({ sid: 'sid-unknown', sub: 'u-alice' }, context)).toEqual({
      frontChannel: [],
      backChannel: [],
      revokedGrantIds: [],
    });
  });

  it('leaves grants revoked earlier alone', async () => {
    const { context, stores, clock } = await setup();
    await stores.grants.revokeGrant('g-silent', clock.nowSeconds() - 100);
    clock.advance(10);
    const result = await endSessionGrants({ sid: 'sid-1', sub: 'u-alice' }, context);
    expect(result.revokedGrantIds).not.toContain('g-silent');
    expect((await stores.grants.findGrant('g-silent'))?.revokedAt).toBe(clock.nowSeconds() - 110);
  });
});

describe('createLogoutToken and frontChannelLogoutUri', () => {
  it('expires the logout token two minutes after issue', async () => {
    const { context, clock } = await setup();
    const token = await createLogoutToken(
      { client: { clientId: 'both', idTokenSigningAlg: 'RS256' }, session: { sid: 's', sub: 'u' } },
      context,
    );
    expect(decodeJwt(token).exp).toBe(clock.nowSeconds() + 120);
  });

  it('encodes iss and sid', () => {
    expect(frontChannelLogoutUri('https://rp.example.test/fcl', 'https://op.example.test', 'a b')).toBe(
      'https://rp.example.test/fcl?iss=https%3A%2F%2Fop.example.test&sid=a+b',
    );
  });
});
