import { performance } from 'node:perf_hooks';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { basicAuthorization, FORM, form, startTestApp, type TestApp } from './helpers/app.js';
import { createPostgresTestDatabase, postgresForThisFile, type TestDatabase } from './helpers/database.js';
import { REPORTS_API, TEST_SECRETS } from './helpers/seed.js';

/**
 * Revocation behind a load balancer, with introspection's reads coalesced (the lookups of one
 * event-loop turn share one statement, storage/drizzle/coalescer.ts): two instances on one
 * PostgreSQL database, many introspections in flight on both while one of them revokes. RFC 7009
 * §2: the token is invalid from the revocation's response on, so every introspection that starts
 * after it, on either instance, must answer inactive; the other tokens of the same batches stay
 * active.
 */

const runs = await postgresForThisFile('introspection-revocation-instances.test.ts');

const reportsApi = basicAuthorization(REPORTS_API, TEST_SECRETS.reportsApi);
const service = basicAuthorization('service', TEST_SECRETS.service);

interface Reading {
  token: string;
  startedAt: number;
  active: boolean;
}

async function serviceToken(app: TestApp): Promise<string> {
  const response = await app.inject({
    method: 'POST',
    url: '/token',
    headers: { ...FORM, authorization: service },
    payload: form({ grant_type: 'client_credentials', scope: 'reports.read' }),
  });
  return response.json().access_token;
}

async function introspect(app: TestApp, token: string): Promise<Reading> {
  const startedAt = performance.now();
  const response = await app.inject({
    method: 'POST',
    url: '/introspect',
    headers: { ...FORM, authorization: reportsApi },
    payload: form({ token }),
  });
  expect(response.statusCode).toBe(200);
  return { token, startedAt, active: response.json().active };
}

/** `workers` loops per app, each introspecting the tokens in turn until `stop()` resolves. */
function keepIntrospecting(apps: readonly TestApp[], tokens: readonly string[], workers: number) {
  const readings: Reading[] = [];
  let running = true;
  const loops = apps.flatMap((app) =>
    Array.from({ length: workers }, async (_, worker) => {
      for (let n = worker; running; n++) readings.push(await introspect(app, tokens[n % tokens.length]!));
    }),
  );
  return {
    readings,
    async stop() {
      running = false;
      await Promise.all(loops);
    },
  };
}

async function until(condition: () => boolean) {
  while (!condition()) await new Promise((done) => setTimeout(done, 5));
}

describe.runIf(runs)(
  'revocation seen at once by two instances with coalesced introspection (PostgreSQL)',
  () => {
    let database: TestDatabase;
    const instances: Array<Awaited<ReturnType<typeof startTestApp>>> = [];
    const apps = () => instances.map((instance) => instance.app);

    beforeAll(async () => {
      database = await createPostgresTestDatabase();
      for (let n = 0; n < 2; n++) {
        const own = n === 0 ? database : { ...database, handle: await database.openAnother() };
        instances.push(await startTestApp({ database: own }));
      }
    });
    afterAll(async () => {
      for (const instance of instances) await instance.close();
      await database?.drop();
    });

    for (const revokingInstance of [0, 1]) {
      it(`no introspection started after instance ${revokingInstance}'s revocation answered reports the token active`, async () => {
        const [a, b] = apps() as [TestApp, TestApp];
        const target = await serviceToken(a);
        const others = await Promise.all(Array.from({ length: 7 }, (_, n) => serviceToken(n % 2 ? a : b)));
        const load = keepIntrospecting([a, b], [target, ...others], 16);
        let revokedAt = Number.POSITIVE_INFINITY;
        try {
          // Revoke in the middle of the load: once both instances have answered for the token.
          await until(() => load.readings.filter((reading) => reading.token === target).length >= 40);
          const revocation = await apps()[revokingInstance]!.inject({
            method: 'POST',
            url: '/revoke',
            headers: { ...FORM, authorization: service },
            payload: form({ token: target }),
          });
          expect(revocation.statusCode).toBe(200);
          revokedAt = performance.now();
          const countAfter = () => load.readings.filter((reading) => reading.startedAt > revokedAt).length;
          await until(() => countAfter() >= 400);
        } finally {
          await load.stop();
        }

        const targetReadings = load.readings.filter((reading) => reading.token === target);
        const later = targetReadings.filter((reading) => reading.startedAt > revokedAt);
        expect(
          targetReadings.filter((reading) => reading.startedAt < revokedAt && reading.active).length,
        ).toBeGreaterThan(0);
        expect(later.length).toBeGreaterThan(20);
        expect(later.filter((reading) => reading.active)).toEqual([]);
        // The tokens that shared the batches were not revoked with it.
        const otherReadings = load.readings.filter((reading) => reading.token !== target);
        expect(otherReadings.filter((reading) => !reading.active)).toEqual([]);
      });
    }
  },
);
