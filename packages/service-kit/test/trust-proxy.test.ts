import { describe, expect, it } from 'vitest';
import { parseTrustProxy, toFastifyTrustProxy } from '../src/index.js';

describe('parseTrustProxy (TRUST_PROXY, one vocabulary for both apps)', () => {
  it.each([
    [undefined, false],
    ['', false],
    ['false', false],
    ['0', false],
    ['true', true],
    ['1', 1],
    ['2', 2],
    ['10.0.0.1, 10.0.0.0/8', ['10.0.0.1', '10.0.0.0/8']],
    ['::1', ['::1']],
    ['loopback,uniquelocal', ['loopback', 'uniquelocal']],
  ])('%j → %j', (value, expected) => {
    expect(parseTrustProxy(value)).toEqual(expected);
  });

  it.each(['yes', 'proxy.example', '10.0.0.1;drop'])('%j is invalid', (value) => {
    expect(parseTrustProxy(value)).toBeUndefined();
  });

  it('a hop count trusts the n nearest hops (proxy-addr numbers hops from 0)', () => {
    const trust = toFastifyTrustProxy(1);
    expect(typeof trust).toBe('function');
    if (typeof trust !== 'function') return;
    expect(trust('10.0.0.1', 0)).toBe(true);
    expect(trust('10.0.0.1', 1)).toBe(false);
  });
});
