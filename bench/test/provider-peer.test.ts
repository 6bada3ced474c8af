import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { redisServerMissing } from '../src/store/redis-server.js';
import { type StartContext, type System, startOidcProvider } from '../src/targets.js';

const missing = redisServerMissing();
if (missing && process.env.CI !== 'true') console.warn(`oidc-provider on Redis tests skipped: ${missing}`);
const suite = missing && process.env.CI !== 'true' ? describe.skip : describe;

const FLOW_WORKLOADS = ['cc-jwt', 'introspect', 'refresh', 'code'];

for (const store of ['memory', 'redis'] as const) {
  (store === 'redis' ? suite : describe)(`the oidc-provider peer, ${store}`, () => {
    let logDir: string;
    let system: System;
    beforeAll(async () => {
      logDir = await mkdtemp(join(tmpdir(), 'bench-peer-test-'));
      const context: StartContext = { logDir, admin: undefined, stamp: 'test' };
      system = await startOidcProvider(context, store);
    }, 60_000);
    afterAll(async () => {
      for (const server of system?.servers ?? []) await server.stop();
      await system?.cleanup?.();
      await rm(logDir, { recursive: true, force: true });
    });

    it('passes the preflight of the token, introspection, refresh and code workloads', async () => {
      for (const workload of system.workloads.filter((candidate) =>
        FLOW_WORKLOADS.includes(candidate.name),
      )) {
        expect({ workload: workload.name, result: await workload.preflight() }).toEqual({
          workload: workload.name,
          result: { ok: true },
        });
      }
      expect(system.workloads.map((workload) => workload.name)).toEqual(
        expect.arrayContaining(FLOW_WORKLOADS),
      );
    }, 60_000);

    it(
      store === 'redis' ? 'names its redis-server as the store to sample' : 'has no store process',
      async () => {
        if (store === 'memory') {
          expect(system.stores).toBeUndefined();
          return;
        }
        const [redis] = system.stores ?? [];
        expect(redis?.group).toBe('redis');
        // redis-server retitles itself `redis-server 127.0.0.1:<port>`: its own port, not the machine's 6379.
        const title = await readFile(`/proc/${redis?.pid}/cmdline`, 'utf8');
        const port = Number(/127\.0\.0\.1:(\d+)/.exec(title)?.[1]);
        expect(port).toBeGreaterThan(0);
        expect(port).not.toBe(6379);
        const client = new Redis(port, '127.0.0.1');
        try {
          // The preflights' codes, refresh tokens, sessions and grants live in that redis-server.
          for (const model of ['AuthorizationCode', 'RefreshToken', 'Session', 'Grant'])
            expect((await client.keys(`${model}:*`)).length, model).toBeGreaterThan(0);
        } finally {
          client.disconnect();
        }
      },
    );
  });
}
