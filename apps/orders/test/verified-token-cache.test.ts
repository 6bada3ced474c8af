import { describe, expect, it } from 'vitest';
import type { VerifiedAccessToken } from '../src/oidc/access-token.js';
import type { DiscoveredProvider } from '../src/oidc/provider.js';
import { VerifiedTokenCache } from '../src/oidc/verified-token-cache.js';

const NOW = 1_700_000_000_000;
const verified = (sub: string): VerifiedAccessToken => ({
  format: 'jwt',
  jkt: undefined,
  sub,
  email: `${sub}@example.com`,
  scopes: ['orders.read'],
  clientId: 'web',
});

/** A provider whose key-set version the test controls (`undefined`: keys stale or not loaded). */
function provider(initial: number | 'stale') {
  let version = initial === 'stale' ? undefined : initial;
  const value = { jwksVersion: () => version } as unknown as DiscoveredProvider;
  return {
    value,
    setVersion(next: number | undefined) {
      version = next;
    },
  };
}

describe('VerifiedTokenCache', () => {
  it('returns a verified token until its exp (exclusive), then forgets it', () => {
    const cache = new VerifiedTokenCache();
    const { value } = provider(1);
    cache.set('token-a', verified('a'), NOW / 1000 + 60, value, NOW);

    expect(cache.get('token-a', value, NOW)).toEqual(verified('a'));
    expect(cache.get('token-a', value, NOW + 59_999)).toEqual(verified('a'));
    expect(cache.get('token-a', value, NOW + 60_000)).toBeUndefined();
    expect(cache.size).toBe(0);
    expect(cache.get('token-b', value, NOW)).toBeUndefined();
  });

  it('drops entries once the keys were re-read (a withdrawn key stops being accepted)', () => {
    const cache = new VerifiedTokenCache();
    const keys = provider(1);
    cache.set('token-a', verified('a'), NOW / 1000 + 60, keys.value, NOW);
    keys.setVersion(2);
    expect(cache.get('token-a', keys.value, NOW)).toBeUndefined();
  });

  it('is not used while the keys are stale or unknown, nor for another provider', () => {
    const cache = new VerifiedTokenCache();
    const keys = provider(1);
    cache.set('token-a', verified('a'), NOW / 1000 + 60, keys.value, NOW);
    keys.setVersion(undefined);
    expect(cache.get('token-a', keys.value, NOW)).toBeUndefined();

    const stale = provider('stale');
    cache.set('token-b', verified('b'), NOW / 1000 + 60, stale.value, NOW);
    expect(cache.size).toBe(0);

    const first = provider(1);
    const rediscovered = provider(1);
    cache.set('token-c', verified('c'), NOW / 1000 + 60, first.value, NOW);
    expect(cache.get('token-c', rediscovered.value, NOW)).toBeUndefined();
  });

  it('keeps at most maxEntries, dropping the least recently used', () => {
    const cache = new VerifiedTokenCache(2);
    const { value } = provider(1);
    const exp = NOW / 1000 + 60;
    cache.set('token-a', verified('a'), exp, value, NOW);
    cache.set('token-b', verified('b'), exp, value, NOW);
    expect(cache.get('token-a', value, NOW)).toBeDefined(); // a is now the most recent
    cache.set('token-c', verified('c'), exp, value, NOW);

    expect(cache.size).toBe(2);
    expect(cache.get('token-b', value, NOW)).toBeUndefined();
    expect(cache.get('token-a', value, NOW)?.sub).toBe('a');
    expect(cache.get('token-c', value, NOW)?.sub).toBe('c');
  });

  it('sweeps out expired entries as new ones arrive, so its size follows the live tokens', () => {
    // One new token a second (a client refreshing), each living 300 s, for 50 minutes: without the
    // sweep the cache would hold all 3,000 until the bound; with it, the 300 alive plus at most the
    // inserts since the last sweep (a quarter of the size).
    const cache = new VerifiedTokenCache();
    const { value } = provider(1);
    const ttlSeconds = 300;
    let largest = 0;
    for (let second = 0; second < 3000; second += 1) {
      const nowMs = NOW + second * 1000;
      cache.set(`token-${second}`, verified(`${second}`), nowMs / 1000 + ttlSeconds, value, nowMs);
      largest = Math.max(largest, cache.size);
    }
    const endMs = NOW + 2999 * 1000;

    expect(largest).toBeLessThanOrEqual(ttlSeconds + ttlSeconds / 3 + 1);
    expect(cache.size).toBeGreaterThanOrEqual(ttlSeconds);
    expect(cache.size).toBeLessThanOrEqual(ttlSeconds + ttlSeconds / 3 + 1);
    // Every token still alive is still served; none past its exp is, swept or not yet.
    for (let second = 3000 - ttlSeconds; second < 3000; second += 1) {
      expect(cache.get(`token-${second}`, value, endMs)?.sub).toBe(`${second}`);
    }
    for (let second = 2999 - ttlSeconds - 100; second <= 2999 - ttlSeconds; second += 1) {
      expect(cache.get(`token-${second}`, value, endMs)).toBeUndefined();
    }
  });

  it('sweeps only expired entries and keeps the least-recently-used bound', () => {
    const cache = new VerifiedTokenCache(150);
    const { value } = provider(1);
    for (let i = 0; i < 100; i += 1) cache.set(`short-${i}`, verified(`s${i}`), NOW / 1000 + 60, value, NOW);
    const later = NOW + 61_000;
    for (let i = 0; i < 100; i += 1)
      cache.set(`long-${i}`, verified(`l${i}`), later / 1000 + 600, value, later);

    // The 100 short-lived ones went in the sweep, not by evicting live entries at the bound.
    expect(cache.size).toBe(100);
    for (let i = 0; i < 100; i += 1) expect(cache.get(`long-${i}`, value, later)?.sub).toBe(`l${i}`);
    for (let i = 0; i < 200; i += 1)
      cache.set(`more-${i}`, verified(`m${i}`), later / 1000 + 600, value, later);
    expect(cache.size).toBe(150);
  });

  it('hands out a frozen object, so one request cannot change what the next one sees', () => {
    const cache = new VerifiedTokenCache();
    const { value } = provider(1);
    cache.set('token-a', verified('a'), NOW / 1000 + 60, value, NOW);
    expect(Object.isFrozen(cache.get('token-a', value, NOW))).toBe(true);
  });
});
