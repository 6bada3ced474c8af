import { describe, expect, it } from 'vitest';
import { isRegisteredRedirectUri } from '../src/redirect-uri.js';
import { makeClient } from './fixtures.js';

/** RFC 9700 §4.1.3 exact matching, with the RFC 8252 §7.3 loopback port exception. */

const REGISTERED = [
  'http://127.0.0.1/callback',
  'http://[::1]/cb?app=git',
  'http://127.0.0.1:8400',
  'http://localhost/callback',
  'https://app.example.test/cb',
];
const publicClient = makeClient({ clientId: 'native', secretHash: null, redirectUris: REGISTERED });
const confidentialClient = makeClient({ redirectUris: REGISTERED });

describe('isRegisteredRedirectUri', () => {
  it.each([
    ['every registered URI exactly', 'http://127.0.0.1/callback'],
    ['an IPv4 loopback URI with a port the app picked', 'http://127.0.0.1:54321/callback'],
    ['an IPv6 loopback URI with a port, query kept', 'http://[::1]:61000/cb?app=git'],
    ['a port-only registration with another port', 'http://127.0.0.1:1'],
    ['the highest port', 'http://127.0.0.1:65535/callback'],
    ['a registered port left out', 'http://127.0.0.1'],
  ])('accepts %s for a public client', (_name, requested) => {
    expect(isRegisteredRedirectUri(publicClient, requested)).toBe(true);
  });

  it.each([
    ['localhost with another port (RFC 8252 §8.3)', 'http://localhost:54321/callback'],
    ['another path', 'http://127.0.0.1:54321/other'],
    ['a longer path', 'http://127.0.0.1:54321/callback/more'],
    ['a trailing slash', 'http://127.0.0.1:54321/callback/'],
    ['another query', 'http://[::1]:61000/cb?app=evil'],
    ['a dropped query', 'http://[::1]:61000/cb'],
    ['https instead of http', 'https://127.0.0.1:54321/callback'],
    ['another loopback address', 'http://127.0.0.2:54321/callback'],
    ['IPv6 for an IPv4 registration', 'http://[::1]:54321/callback'],
    ['userinfo before another host', 'http://127.0.0.1:80@evil.example/callback'],
    ['a host that only starts like the loopback', 'http://127.0.0.1.evil.example:80/callback'],
    ['port 0', 'http://127.0.0.1:0/callback'],
    ['a port above 65535', 'http://127.0.0.1:65536/callback'],
    ['an empty port', 'http://127.0.0.1:/callback'],
    ['a fragment', 'http://127.0.0.1:54321/callback#x'],
    ['another port for a non-loopback host', 'https://app.example.test:8443/cb'],
  ])('refuses %s', (_name, requested) => {
    expect(isRegisteredRedirectUri(publicClient, requested)).toBe(false);
  });

  it('gives a confidential client exact matching only, loopback included', () => {
    expect(isRegisteredRedirectUri(confidentialClient, 'http://127.0.0.1/callback')).toBe(true);
    expect(isRegisteredRedirectUri(confidentialClient, 'http://127.0.0.1:54321/callback')).toBe(false);
    expect(isRegisteredRedirectUri(confidentialClient, 'http://[::1]:61000/cb?app=git')).toBe(false);
  });
});
