import { describe, expect, it } from 'vitest';
import { protectedResourceMetadata, protectedResourceMetadataUrl } from '../src/protected-resource.js';

describe('protectedResourceMetadataUrl (RFC 9728 §3.1)', () => {
  it.each([
    ['https://orders.example', 'https://orders.example/.well-known/oauth-protected-resource'],
    ['https://orders.example/', 'https://orders.example/.well-known/oauth-protected-resource'],
    ['http://127.0.0.1:3000/mcp', 'http://127.0.0.1:3000/.well-known/oauth-protected-resource/mcp'],
    ['https://orders.example/api/v1', 'https://orders.example/.well-known/oauth-protected-resource/api/v1'],
  ])('inserts the well-known path between host and path: %s', (resource, expected) => {
    expect(protectedResourceMetadataUrl(resource)).toBe(expected);
  });

  it.each([
    ['a bare name (not a URL)', 'orders-api'],
    ['a URN', 'urn:example:orders'],
    ['a URL with a query', 'https://orders.example/?tenant=1'],
    ['a URL with a fragment', 'https://orders.example/#x'],
  ])('publishes nothing for %s', (_label, resource) => {
    expect(protectedResourceMetadataUrl(resource)).toBeUndefined();
  });
});

describe('protectedResourceMetadata (RFC 9728 §2)', () => {
  it('names the resource, its issuers, scopes, and header-only tokens', () => {
    expect(
      protectedResourceMetadata({
        resource: 'https://orders.example',
        authorizationServers: ['https://id.example'],
        scopes: ['orders.read'],
        dpopSigningAlgs: ['ES256'],
      }),
    ).toEqual({
      resource: 'https://orders.example',
      authorization_servers: ['https://id.example'],
      scopes_supported: ['orders.read'],
      bearer_methods_supported: ['header'],
      dpop_signing_alg_values_supported: ['ES256'],
    });
  });
});
