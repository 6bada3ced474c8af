import { describe, expect, it } from 'vitest';
import {
  clientFromMetadataDocument,
  type MetadataDocumentPolicy,
  metadataDocumentUrl,
} from '../src/client-id-metadata-document.js';
import { isOAuthError } from '../src/errors.js';
import { isRegisteredRedirectUri } from '../src/redirect-uri.js';

/** Client ID Metadata Documents: which client ids name a document, and what the document must say. */

const POLICY: MetadataDocumentPolicy = {
  allowedOrigins: ['https://*.agents.example', 'https://tool.example', 'http://127.0.0.1:8123'],
  scopes: ['openid', 'orders.read'],
};
const LIFETIMES = { refreshTokenAbsoluteTtl: 2_592_000, refreshTokenSlidingTtl: 1_209_600 };
const CLIENT_ID = 'https://app.agents.example/client.json';
const DOCUMENT = {
  client_id: CLIENT_ID,
  client_name: 'Agent',
  redirect_uris: ['http://127.0.0.1:5555/callback'],
  grant_types: ['authorization_code'],
  scope: 'openid orders.read',
};

describe('metadataDocumentUrl', () => {
  it.each([
    ['a subdomain of a wildcard origin', CLIENT_ID],
    ['an exact origin', 'https://tool.example/oauth/client'],
    ['a listed loopback http origin', 'http://127.0.0.1:8123/client.json'],
  ])('accepts %s', (_label, clientId) => {
    expect(metadataDocumentUrl(clientId, POLICY)?.href).toBe(clientId);
  });

  it.each([
    ['a plain client id', 'web'],
    ['an origin not listed', 'https://evil.example/client.json'],
    ['the wildcard base itself', 'https://agents.example/client.json'],
    ['http on a listed https host', 'http://tool.example/client'],
    ['http loopback on another port', 'http://127.0.0.1:9999/client.json'],
    ['no path', 'https://tool.example/'],
    ['a fragment', 'https://tool.example/client#x'],
    ['credentials', 'https://user:pw@tool.example/client'],
    ['a dot segment', 'https://tool.example/a/../client'],
  ])('refuses %s', (_label, clientId) => {
    expect(metadataDocumentUrl(clientId, POLICY)).toBeUndefined();
  });
});

function refusal(document: unknown): string | undefined {
  try {
    clientFromMetadataDocument(CLIENT_ID, document, POLICY, LIFETIMES);
    return undefined;
  } catch (error) {
    return isOAuthError(error) ? `${error.code}: ${error.detail}` : String(error);
  }
}

describe('clientFromMetadataDocument', () => {
  it('makes a public client that always asks consent and matches redirect URIs exactly', () => {
    const client = clientFromMetadataDocument(CLIENT_ID, DOCUMENT, POLICY, LIFETIMES);

    expect(client).toMatchObject({
      clientId: CLIENT_ID,
      clientName: 'Agent',
      secretHash: null,
      skipConsent: false,
    });
    expect(client.fromMetadataDocument).toBe(true);
    expect(isRegisteredRedirectUri(client, 'http://127.0.0.1:5555/callback')).toBe(true);
    // RFC 8252 §7.3's loopback port allowance does not apply to a document's URIs.
    expect(isRegisteredRedirectUri(client, 'http://127.0.0.1:6666/callback')).toBe(false);
  });

  it.each([
    [
      'a client_id other than its URL',
      { ...DOCUMENT, client_id: 'https://app.agents.example/other.json' },
      /differs from its URL/,
    ],
    [
      'client_credentials',
      { ...DOCUMENT, grant_types: ['authorization_code', 'client_credentials'] },
      /client_credentials/,
    ],
    [
      'a confidential auth method',
      { ...DOCUMENT, token_endpoint_auth_method: 'client_secret_basic' },
      /public clients/,
    ],
    ['a client secret', { ...DOCUMENT, client_secret: 's' }, /secret/],
    ['a scope beyond the policy', { ...DOCUMENT, scope: 'openid admin.write' }, /admin.write/],
    ['no JSON object', 'x', /JSON object/],
  ])('refuses %s', (_label, document, reason) => {
    expect(refusal(document)).toMatch(reason);
  });
});
