import { systemRandom } from '@oidc-orders/oauth-core';
import { sql } from 'drizzle-orm';
import Fastify from 'fastify';
import fp from 'fastify-plugin';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { interactions, ssoSessions, webauthnChallenges } from '../src/db/schema.js';
import { createInteractionRepository } from '../src/interaction/interaction-repository.js';
import { createSsoSessionRepository } from '../src/interaction/sso-session-repository.js';
import { createWebAuthnChallengeStore } from '../src/mfa/webauthn-challenges.js';
import { EXPIRING_ROWS, expirySweeperPlugin, sweepExpiredRows } from '../src/plugins/expiry-sweeper.js';
import { createTestDatabase, type TestDatabase } from './helpers/database.js';

// PGlite by default, a fresh PostgreSQL database when TEST_DATABASE_URL is set.
let testDatabase: TestDatabase;
let db: TestDatabase['handle']['db'];

beforeAll(async () => {
  testDatabase = await createTestDatabase();
  db = testDatabase.handle.db;
});
afterAll(async () => {
  await testDatabase?.drop();
});

const now = 1_700_000_000;

/** One row per table that expired at `expiresAt`, named by `id`. */
async function insertRows(id: string, expiresAt: number) {
  await createInteractionRepository(db).create({
    id,
    browserHash: 'browser',
    request: { params: {}, resources: [] },
    loginSid: null,
    approvedScopes: null,
    createdAt: expiresAt - 600,
    expiresAt,
  });
  await createSsoSessionRepository(db).create(
    {
      id,
      sub: 'u-1',
      authTime: expiresAt - 600,
      methods: [{ method: 'password', at: expiresAt - 600 }],
      createdAt: expiresAt - 600,
      expiresAt,
      userAgent: null,
      ip: null,
      lastUsedAt: null,
    },
    `key-${id}`,
  );
  const clock = { nowSeconds: () => expiresAt - 300 };
  await createWebAuthnChallengeStore({
    db,
    clock,
    random: systemRandom,
    keyEncryptionKey: new Uint8Array(32),
  }).issue(
    { browserKey: 'browser', purpose: 'register', boundTo: id },
    { challenge: `challenge-${id}`, sub: null, userHandle: null },
  );
}

const counts = async () => ({
  interactions: (await db.select({ n: sql<number>`count(*)::int` }).from(interactions))[0]?.n,
  sso_sessions: (await db.select({ n: sql<number>`count(*)::int` }).from(ssoSessions))[0]?.n,
  webauthn_challenges: (await db.select({ n: sql<number>`count(*)::int` }).from(webauthnChallenges))[0]?.n,
});

describe('expiry sweeper', () => {
  it('deletes the rows that expired at or before now from every table, and no live row', async () => {
    await insertRows('expired', now - 1);
    await insertRows('expires-now', now);
    await insertRows('live', now + 1);
    expect(await counts()).toEqual({ interactions: 3, sso_sessions: 3, webauthn_challenges: 3 });

    expect(await sweepExpiredRows(db, now)).toEqual([]);
    expect(await counts()).toEqual({ interactions: 1, sso_sessions: 1, webauthn_challenges: 1 });
    expect(await createInteractionRepository(db).findActiveWithSession('live', null, now)).not.toBeNull();
    expect(await createSsoSessionRepository(db).findActive('key-live', now)).not.toBeNull();
    expect(EXPIRING_ROWS.map((rows) => rows.table).sort()).toEqual(Object.keys(await counts()).sort());
  });

  it('runs on its timer in the app, off the request path', async () => {
    await insertRows('swept-by-timer', now - 10);
    const app = Fastify();
    await app.register(
      fp(
        async (instance) => {
          instance.decorate('database', testDatabase.handle);
        },
        { name: 'db' },
      ),
    );
    await app.register(expirySweeperPlugin, { clock: { nowSeconds: () => now }, intervalMs: 20 });
    await app.ready();
    try {
      await expect
        .poll(
          async () => createInteractionRepository(db).findActiveWithSession('swept-by-timer', null, now - 20),
          {
            timeout: 5_000,
          },
        )
        .toBeNull();
      expect(await createSsoSessionRepository(db).findActive('key-swept-by-timer', now - 20)).toBeNull();
    } finally {
      await app.close();
    }
  });
});
