import { systemClock } from '@oidc-orders/oauth-core';
import { afterEach, describe, expect, it } from 'vitest';
import { buildApp } from '../src/app.js';
import { testConfig } from './helpers/app.js';
import { createTestDatabase } from './helpers/database.js';
import { testSeed } from './helpers/seed.js';
import { storeSigningKeys } from './helpers/signing-keys.js';

/**
 * TRUST_PROXY means what it means in apps/orders (Fastify's `trustProxy`).
 * docker-compose.yml passes `1`: one proxy in front, so with two X-Forwarded-For hops the client
 * address is the nearer one, never the farthest (which the client itself may have forged).
 */
describe('TRUST_PROXY', () => {
  let close: (() => Promise<void>) | undefined;
  afterEach(async () => {
    await close?.();
    close = undefined;
  });

  async function clientAddress(trustProxy: string, forwardedFor: string): Promise<string> {
    const database = await createTestDatabase();
    const config = testConfig({ TRUST_PROXY: trustProxy });
    await storeSigningKeys(database.handle.db, config.keyEncryptionKey, systemClock);
    const app = await buildApp(config, {
      database: database.handle,
      seed: testSeed(),
      logger: false,
    });
    close = async () => {
      await app.close();
      await database.drop();
    };
    // A probe route on the app as configured: request.ip is what rate limits and audit use.
    app.get('/test-probe/ip', async (request) => ({ ip: request.ip }));
    const response = await app.inject({
      method: 'GET',
      url: '/test-probe/ip',
      remoteAddress: '10.0.0.2',
      headers: { 'x-forwarded-for': forwardedFor },
    });
    expect(response.statusCode).toBe(200);
    return (response.json() as { ip: string }).ip;
  }

  it.each([
    ['1 (the compose value): the nearer hop', '1', '203.0.113.9'],
    ['true: every hop', 'true', '198.51.100.66'],
    ['unset: the socket', '', '10.0.0.2'],
    ['a trusted proxy list', '10.0.0.0/8', '203.0.113.9'],
  ])('%s', async (_name, trustProxy, expected) => {
    expect(await clientAddress(trustProxy, '198.51.100.66, 203.0.113.9')).toBe(expected);
  });
});
