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

  it('hands out a frozen object, so one request cannot change what the next one sees', () => {
    const cache = new VerifiedTokenCache();
    const { value } = provider(1);
    cache.set('token-a', verified('a'), NOW / 1000 + 60, value, NOW);
    expect(Object.isFrozen(cache.get('token-a', value, NOW))).toBe(true);
  });
});
