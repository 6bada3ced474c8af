import { describe, expect, it } from 'vitest';
import { ADMIN_API_SCOPES, adminApiResource, adminApiResourceId } from '../src/admin-api.js';
import { isOAuthError } from '../src/errors.js';
import { authorizeResourceAccess } from '../src/resource-access.js';
import { hashToken } from '../src/tokens/opaque.js';
import type { AccessTokenValidationContext } from '../src/tokens/validate-access-token.js';

/**
 * A protected resource of the server checking its own opaque tokens: binding, audience and scope,
 * each refused with the RFC 6750 / RFC 9449 code a client can act on.
 */

const ISSUER = 'https://issuer.example';
const ADMIN = adminApiResourceId(ISSUER);
const NOW = 1_800_000_000;

interface Row {
  audience: string[];
  scopes: string[];
  dpopJkt: string | null;
}

function contextWith(rows: Record<string, Row>): AccessTokenValidationContext {
  const byHash = new Map(Object.entries(rows).map(([token, row]) => [hashToken(token), row]));
  return {
    stores: {
      accessTokens: {
        findAccessToken: async (hash: string) => {
          const row = byHash.get(hash);
          return row === undefined
            ? null
            : {
                tokenHash: hash,
                grantId: null,
                clientId: 'ops',
                sub: 'ops',
                ...row,
                issuedAt: NOW - 10,
                expiresAt: NOW + 290,
                revokedAt: null,
                claims: {},
              };
        },
      },
      clients: { findClient: async () => ({ clientId: 'ops' }) },
      users: { findUserBySub: async () => null },
      grants: { findGrant: async () => null },
    } as unknown as AccessTokenValidationContext['stores'],
    verifier: { verify: async () => ({}) } as unknown as AccessTokenValidationContext['verifier'],
    clock: { nowSeconds: () => NOW },
    config: { issuer: ISSUER } as AccessTokenValidationContext['config'],
  };
}

const context = contextWith({
  reader: { audience: [ADMIN], scopes: ['admin.read'], dpopJkt: null },
  orders: { audience: ['https://api.example/orders'], scopes: ['admin.read'], dpopJkt: null },
  bound: { audience: [ADMIN], scopes: ['admin.read'], dpopJkt: 'jkt-1' },
});

async function refusal(token: string, scope: string, dpopJkt: string | null) {
  try {
    await authorizeResourceAccess(token, context, { resource: ADMIN, scope, dpopJkt });
    return 'accepted';
  } catch (error) {
    return isOAuthError(error) ? `${error.status} ${error.code}` : 'not an OAuthError';
  }
}

describe('authorizeResourceAccess', () => {
  it.each([
    ['a token for the resource with the scope', 'reader', ADMIN_API_SCOPES.read, null, 'accepted'],
    ['a token without the scope', 'reader', ADMIN_API_SCOPES.write, null, '403 insufficient_scope'],
    ['a token for another audience', 'orders', ADMIN_API_SCOPES.read, null, '401 invalid_token'],
    ['an unknown token', 'nope', ADMIN_API_SCOPES.read, null, '401 invalid_token'],
    ['a bound token with a proof of its key', 'bound', ADMIN_API_SCOPES.read, 'jkt-1', 'accepted'],
    ['a bound token as a bearer token', 'bound', ADMIN_API_SCOPES.read, null, '401 invalid_token'],
    ['a bound token with another key', 'bound', ADMIN_API_SCOPES.read, 'jkt-2', '401 invalid_token'],
    ['a bearer token with a proof', 'reader', ADMIN_API_SCOPES.read, 'jkt-1', '401 invalid_token'],
  ])('%s', async (_name, token, scope, dpopJkt, expected) => {
    expect(await refusal(token, scope, dpopJkt)).toBe(expected);
  });

  it('names the missing scope in the challenge', async () => {
    const error = await authorizeResourceAccess('reader', context, {
      resource: ADMIN,
      scope: ADMIN_API_SCOPES.write,
      dpopJkt: null,
    }).catch((caught: unknown) => caught);
    expect(isOAuthError(error) && error.headers['WWW-Authenticate']).toContain('scope="admin.write"');
  });

  it('describes the admin resource with opaque tokens and both scopes', () => {
    expect(adminApiResource(ISSUER)).toMatchObject({
      id: `${ISSUER}/admin/api`,
      scopes: ['admin.read', 'admin.write'],
      accessTokenFormat: 'opaque',
    });
  });
});
