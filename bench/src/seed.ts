/**
 * The seed file the harness gives the auth server (CONTRACT.md "Seed file"), with fresh random
 * secrets for every run, and the matching settings the workloads and the orders service use.
 */
import { randomBytes } from 'node:crypto';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { hashPassword, type ScryptCost } from '../../packages/oauth-core/src/passwords.js';
import type { Credentials } from './oauth-flow.js';

/** The least scrypt cost a stored hash may name (N a power of two ≥ 2). */
const CHEAP_SCRYPT_COST: ScryptCost = { N: 2, r: 1, p: 1 };

export interface BenchIdentities {
  ccClient: Credentials;
  webClient: Credentials;
  /** The JWT resource (ES256 default): `aud` of client-credentials and user access tokens. */
  jwtResource: { id: string; secret: string; scope: string };
  /** The opaque resource; its id and secret authenticate it at the introspection endpoint. */
  opaqueResource: { id: string; secret: string; scope: string };
  user: { sub: string; username: string; password: string; email: string };
  /**
   * A second user with the same password, stored as scrypt at the least cost the server accepts
   * (N=2, r=1, p=1: microseconds): a sign-in as this user is a sign-in with the hash's cost set apart.
   */
  cheapHashUser: { sub: string; username: string };
  webScope: string;
  apiKey: string;
  sessionSecret: string;
  keyEncryptionKey: string;
}

const secret = (bytes = 24) => randomBytes(bytes).toString('base64url');

export function newIdentities(): BenchIdentities {
  return {
    ccClient: { id: 'bench-cc', secret: secret() },
    webClient: { id: 'bench-web', secret: secret() },
    jwtResource: { id: 'orders-api', secret: secret(), scope: 'orders.read' },
    opaqueResource: { id: 'orders-opaque', secret: secret(), scope: 'opaque.read' },
    user: { sub: 'u-bench', username: 'bench-user', password: secret(12), email: 'bench-user@example.com' },
    cheapHashUser: { sub: 'u-bench-cheap-hash', username: 'bench-cheap-hash' },
    // `email`: the orders API finds a user's orders by the token's email claim, which the server
    // copies into an access token only when the grant holds the scope covering it (OIDC Core §5.4).
    webScope: 'openid email offline_access orders.read',
    apiKey: secret(),
    sessionSecret: secret(32),
    keyEncryptionKey: randomBytes(32).toString('base64url'),
  };
}

/** Access tokens outlive the longest workload so a token fetched before a run stays valid. */
export const BENCH_ACCESS_TOKEN_TTL = 3600;

export interface SeedOptions {
  /** The web client's ID Token algorithm; unset keeps the server's default (RS256 per OIDC). */
  idTokenAlg?: 'RS256' | 'ES256';
  /** Lifetime of both resources' access tokens, seconds; `BENCH_ACCESS_TOKEN_TTL` when unset. */
  accessTokenTtl?: number;
}

export async function writeSeedFile(
  dir: string,
  ids: BenchIdentities,
  redirectUri: string,
  options: SeedOptions = {},
): Promise<string> {
  const seed = {
    clients: [
      {
        client_id: ids.ccClient.id,
        client_secret: ids.ccClient.secret,
        grant_types: ['client_credentials'],
        scope: `${ids.jwtResource.scope} ${ids.opaqueResource.scope}`,
      },
      {
        client_id: ids.webClient.id,
        client_secret: ids.webClient.secret,
        redirect_uris: [redirectUri],
        grant_types: ['authorization_code', 'refresh_token'],
        scope: ids.webScope,
        skip_consent: true,
        ...(options.idTokenAlg ? { id_token_signed_response_alg: options.idTokenAlg } : {}),
      },
    ],
    resources: [
      {
        id: ids.jwtResource.id,
        scopes: ['orders.read', 'orders.write'],
        access_token_format: 'jwt',
        access_token_ttl: options.accessTokenTtl ?? BENCH_ACCESS_TOKEN_TTL,
        secret: ids.jwtResource.secret,
        claims: ['email'],
      },
      {
        id: ids.opaqueResource.id,
        scopes: [ids.opaqueResource.scope],
        access_token_format: 'opaque',
        access_token_ttl: options.accessTokenTtl ?? BENCH_ACCESS_TOKEN_TTL,
        secret: ids.opaqueResource.secret,
      },
    ],
    users: [
      {
        sub: ids.user.sub,
        username: ids.user.username,
        password: ids.user.password,
        name: 'Bench User',
        email: ids.user.email,
        email_verified: true,
      },
      {
        sub: ids.cheapHashUser.sub,
        username: ids.cheapHashUser.username,
        password_hash: await hashPassword(ids.user.password, { cost: CHEAP_SCRYPT_COST }),
        name: 'Bench User (cheap hash)',
        email: 'bench-cheap-hash@example.com',
        email_verified: true,
      },
    ],
  };
  const file = join(dir, 'seed.json');
  await writeFile(file, JSON.stringify(seed, null, 2), { mode: 0o600 });
  return file;
}
