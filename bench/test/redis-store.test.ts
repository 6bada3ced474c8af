import { existsSync } from 'node:fs';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readCpuMs } from '../src/proc.js';
import { cpuPerResponse } from '../src/runner.js';
import { RedisAdapter } from '../src/store/redis-adapter.js';
import { type RedisServerProcess, redisServerMissing, startRedisServer } from '../src/store/redis-server.js';

const missing = redisServerMissing();
if (missing && process.env.CI !== 'true') console.warn(`redis-store tests skipped: ${missing}`);
// Mandatory in CI (.ci/run installs redis-server); left out elsewhere with the line above.
const suite = missing && process.env.CI !== 'true' ? describe.skip : describe;

const isRunning = (pid: number) => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

suite('the throw-away redis-server', () => {
  it('runs on its own port and folder, answers, and is gone with its folder after stop', async () => {
    const server = await startRedisServer();
    const client = new Redis(server.url, { lazyConnect: true });
    try {
      expect(server.port).not.toBe(6379);
      expect(existsSync(server.dir)).toBe(true);
      await client.connect();
      expect(await client.ping()).toBe('PONG');
      expect(await client.config('GET', 'dir')).toEqual(['dir', server.dir]);
    } finally {
      client.disconnect();
      await server.stop();
    }
    expect(isRunning(server.pid)).toBe(false);
    expect(existsSync(server.dir)).toBe(false);
  });
});

suite('RedisAdapter against a real redis-server', () => {
  let server: RedisServerProcess;
  let redis: Redis;
  beforeAll(async () => {
    server = await startRedisServer();
    redis = new Redis(server.url);
  });
  afterAll(async () => {
    await redis?.quit();
    await server?.stop();
  });

  it('finds what it upserted, and nothing for an unknown id', async () => {
    const codes = new RedisAdapter(redis, 'AuthorizationCode');
    await codes.upsert('c1', { accountId: 'alice', grantId: 'g0', kind: 'AuthorizationCode' }, 60);
    expect(await codes.find('c1')).toEqual({ accountId: 'alice', grantId: 'g0', kind: 'AuthorizationCode' });
    expect(await codes.find('nope')).toBeUndefined();
    expect(await redis.ttl('AuthorizationCode:c1')).toBeGreaterThan(55);
  });

  it('marks a consumed record, and an upsert replaces the record whole', async () => {
    const tokens = new RedisAdapter(redis, 'RefreshToken');
    await tokens.upsert('r1', { grantId: 'g1' }, 60);
    await tokens.consume('r1');
    const consumed = await tokens.find('r1');
    expect(consumed?.consumed).toBeGreaterThan(Date.now() / 1000 - 5);
    await tokens.upsert('r1', { grantId: 'g1' }, 60);
    expect((await tokens.find('r1'))?.consumed).toBeUndefined();
  });

  it('forgets a record, and its uid and user-code indexes, once expiresIn has passed', async () => {
    const sessions = new RedisAdapter(redis, 'Session');
    const devices = new RedisAdapter(redis, 'DeviceCode');
    await sessions.upsert('s1', { uid: 'u1', accountId: 'alice' }, 1);
    await devices.upsert('d1', { userCode: 'ABCD-EFGH', grantId: 'g2' }, 1);
    expect(await sessions.findByUid('u1')).toMatchObject({ accountId: 'alice' });
    expect(await devices.findByUserCode('ABCD-EFGH')).toMatchObject({ grantId: 'g2' });
    await new Promise((resolve) => setTimeout(resolve, 2_100));
    expect(await sessions.find('s1')).toBeUndefined();
    expect(await sessions.findByUid('u1')).toBeUndefined();
    expect(await devices.findByUserCode('ABCD-EFGH')).toBeUndefined();
    expect(await redis.exists('sessionUid:u1', 'userCode:ABCD-EFGH')).toBe(0);
  });

  it('revokes every token of one grant and leaves the other grants alone', async () => {
    const codes = new RedisAdapter(redis, 'AuthorizationCode');
    const refresh = new RedisAdapter(redis, 'RefreshToken');
    const access = new RedisAdapter(redis, 'AccessToken');
    await codes.upsert('c-a', { grantId: 'grant-a' }, 60);
    await refresh.upsert('r-a', { grantId: 'grant-a' }, 600);
    await access.upsert('a-a', { grantId: 'grant-a' }, 60);
    await refresh.upsert('r-b', { grantId: 'grant-b' }, 600);
    // The grant's list outlives its shortest member: it lasts as long as the refresh token.
    expect(await redis.ttl('grant:grant-a')).toBeGreaterThan(590);
    await refresh.revokeByGrantId('grant-a');
    expect(await codes.find('c-a')).toBeUndefined();
    expect(await refresh.find('r-a')).toBeUndefined();
    expect(await access.find('a-a')).toBeUndefined();
    expect(await redis.exists('grant:grant-a')).toBe(0);
    expect(await refresh.find('r-b')).toEqual({ grantId: 'grant-b' });
  });

  it('destroys one record', async () => {
    const interactions = new RedisAdapter(redis, 'Interaction');
    await interactions.upsert('i1', { uid: 'x' }, 60);
    await interactions.destroy('i1');
    expect(await interactions.find('i1')).toBeUndefined();
  });

  it("counts the redis-server's CPU per response as the store's, beside the server's", async () => {
    const before = new Map([
      ['oidc-provider-redis', 1_000],
      [`redis:${server.pid}`, (await readCpuMs(server.pid)) ?? Number.NaN],
    ]);
    const pipeline = redis.pipeline();
    for (let i = 0; i < 20_000; i++) pipeline.hset(`load:${i % 100}`, 'payload', 'x'.repeat(200));
    await pipeline.exec();
    const after = new Map([
      ['oidc-provider-redis', 1_500],
      [`redis:${server.pid}`, (await readCpuMs(server.pid)) ?? Number.NaN],
    ]);
    const spent = (after.get(`redis:${server.pid}`) ?? 0) - (before.get(`redis:${server.pid}`) ?? 0);
    expect(spent).toBeGreaterThan(0);
    const perResponse = cpuPerResponse(before, after, 100);
    expect(perResponse['oidc-provider-redis']).toBe(5);
    expect(perResponse.redis).toBeCloseTo(spent / 100, 3);
  });
});

describe('cpuPerResponse', () => {
  it('sums the deltas of every process of a group, a process that appeared counting from zero', () => {
    const before = new Map([
      ['auth-server-postgres', 100],
      ['postgres:11', 40],
      ['postgres:12', 10],
    ]);
    const after = new Map([
      ['auth-server-postgres', 300],
      ['postgres:11', 90],
      ['postgres:12', 30],
      ['postgres:13', 30],
    ]);
    expect(cpuPerResponse(before, after, 100)).toEqual({ 'auth-server-postgres': 2, postgres: 1 });
  });
});
