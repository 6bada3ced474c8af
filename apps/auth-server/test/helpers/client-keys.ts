import { generateKeyPairSync, randomUUID } from 'node:crypto';
import { CLIENT_ASSERTION_TYPE } from '@oidc-orders/oauth-core';
import { type CryptoKey, exportJWK, generateKeyPair, type JWK, SignJWT } from 'jose';
import type { SeedClient } from '../../src/schemas/seed.js';
import { TEST_ISSUER } from './app.js';

/** A client's key pair: the private key signs, the public JWK goes into the seed's `jwks`. */
export interface ClientKey {
  alg: string;
  kid: string;
  privateKey: CryptoKey;
  publicJwk: JWK;
}

/**
 * An RSA key as a node:crypto KeyObject, which signs with RS256 and PS256 alike (a WebCrypto key
 * is bound to one of them): to show that the algorithm, not the key, is what a profile refuses.
 */
export function rsaClientKey(kid = `k-${randomUUID()}`) {
  const { privateKey, publicKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
  const publicJwk: JWK = { ...publicKey.export({ format: 'jwk' }), kid, use: 'sig' };
  return {
    kid,
    publicJwk,
    withAlg: (alg: 'RS256' | 'PS256') => ({
      alg,
      kid,
      publicJwk,
      privateKey: privateKey as unknown as CryptoKey,
    }),
  };
}

export async function clientKey(alg = 'ES256', kid = `k-${randomUUID()}`): Promise<ClientKey> {
  const { privateKey, publicKey } = await generateKeyPair(alg, { extractable: true });
  return { alg, kid, privateKey, publicJwk: { ...(await exportJWK(publicKey)), kid, alg, use: 'sig' } };
}

export interface AssertionOptions {
  aud?: string | string[];
  iss?: string;
  sub?: string;
  /** Seconds from now; `null` leaves `exp` out. */
  expiresIn?: number | null;
  jti?: string;
  /** Seconds since the epoch used as "now" (for apps on an injected clock). */
  now?: number;
}

/** RFC 7523 §3 client assertion for `clientId`, signed with `key`. */
export function signClientAssertion(clientId: string, key: ClientKey, options: AssertionOptions = {}) {
  const now = options.now ?? Math.floor(Date.now() / 1000);
  const claims: Record<string, unknown> = {
    iss: options.iss ?? clientId,
    sub: options.sub ?? clientId,
    aud: options.aud ?? TEST_ISSUER,
    jti: options.jti ?? randomUUID(),
    iat: now,
  };
  const expiresIn = options.expiresIn === undefined ? 60 : options.expiresIn;
  if (expiresIn !== null) claims.exp = now + expiresIn;
  return new SignJWT(claims).setProtectedHeader({ alg: key.alg, kid: key.kid }).sign(key.privateKey);
}

/** The form parameters of `private_key_jwt` authentication. */
export async function assertionParams(clientId: string, key: ClientKey, options: AssertionOptions = {}) {
  return {
    client_id: clientId,
    client_assertion_type: CLIENT_ASSERTION_TYPE,
    client_assertion: await signClientAssertion(clientId, key, options),
  };
}

/** A `private_key_jwt` client registered with `key` (plus whatever `extra` says). */
export function keyClient(clientId: string, key: ClientKey, extra: Partial<SeedClient> = {}): SeedClient {
  return {
    client_id: clientId,
    token_endpoint_auth_method: 'private_key_jwt',
    jwks: { keys: [key.publicJwk] },
    grant_types: ['client_credentials'],
    scope: 'orders.read',
    ...extra,
  };
}

/** RFC 9101 request object: the authorization parameters as claims, signed by the client. */
export function signRequestObject(
  clientId: string,
  key: ClientKey,
  params: Record<string, string | string[]>,
  /** `jti` / `nbf`: `null` leaves the claim out; `nbf` defaults to now. */
  options: { aud?: string; expiresIn?: number; jti?: string | null; nbf?: number | null; now?: number } = {},
) {
  const now = options.now ?? Math.floor(Date.now() / 1000);
  const jti = options.jti === undefined ? randomUUID() : options.jti;
  const nbf = options.nbf === undefined ? now : options.nbf;
  return new SignJWT({
    ...params,
    client_id: clientId,
    iss: clientId,
    aud: options.aud ?? TEST_ISSUER,
    ...(jti === null ? {} : { jti }),
    iat: now,
    ...(nbf === null ? {} : { nbf }),
    exp: now + (options.expiresIn ?? 120),
  })
    .setProtectedHeader({ alg: key.alg, kid: key.kid, typ: 'oauth-authz-req+jwt' })
    .sign(key.privateKey);
}
