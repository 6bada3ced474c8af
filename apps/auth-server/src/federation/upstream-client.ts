import { createPrivateKey } from 'node:crypto';
import { importPKCS8 } from 'jose';
import * as oidc from 'openid-client';
import type { UpstreamProvider } from './registry.js';

/**
 * openid-client v6 configurations, one per provider, discovered once (OIDC Discovery §4) and kept.
 * openid-client fetches the provider's JWKS lazily and again when an ID token names a `kid` it has
 * not seen (its remote JWKS set, as jose's `createRemoteJWKSet`), so a key rotation at the
 * provider is followed without a restart. A failed discovery is not cached: the next sign-in
 * tries again.
 */

/** Seconds for discovery and the token endpoint: a slow provider ends on a page within this. */
export const UPSTREAM_TIMEOUT_SECONDS = 10;

export interface UpstreamClients {
  configurationOf(provider: UpstreamProvider): Promise<oidc.Configuration>;
}

const isLoopbackHttp = (issuer: string) => new URL(issuer).protocol === 'http:';

/** The JWS algorithm of a PKCS#8 key: RS256 for RSA, ES256/384/512 by curve, EdDSA for Ed25519. */
function signingAlgorithmOf(pem: string): string {
  const key = createPrivateKey(pem);
  if (key.asymmetricKeyType === 'rsa') return 'RS256';
  if (key.asymmetricKeyType === 'ed25519') return 'EdDSA';
  const curve = key.asymmetricKeyDetails?.namedCurve;
  return curve === 'secp384r1' ? 'ES384' : curve === 'secp521r1' ? 'ES512' : 'ES256';
}

async function clientAuthentication(provider: UpstreamProvider): Promise<oidc.ClientAuth> {
  switch (provider.authMethod) {
    case 'client_secret_post':
      return oidc.ClientSecretPost(provider.clientSecret);
    case 'private_key_jwt': {
      const pem = provider.privateKey?.pem ?? '';
      const key = await importPKCS8(pem, signingAlgorithmOf(pem));
      // RFC 7523 §2.2 client assertion, `kid` in the header when configured.
      return oidc.PrivateKeyJwt({
        key,
        ...(provider.privateKey?.kid ? { kid: provider.privateKey.kid } : {}),
      });
    }
    default:
      return oidc.ClientSecretBasic(provider.clientSecret);
  }
}

async function discover(provider: UpstreamProvider, timeoutSeconds: number): Promise<oidc.Configuration> {
  const configuration = await oidc.discovery(
    new URL(provider.issuer),
    provider.clientId,
    undefined,
    await clientAuthentication(provider),
    {
      timeout: timeoutSeconds,
      // http is allowed only for loopback issuers (federation/provider-rules.ts).
      ...(isLoopbackHttp(provider.issuer) ? { execute: [oidc.allowInsecureRequests] } : {}),
    },
  );
  configuration.timeout = timeoutSeconds;
  return configuration;
}

export function createUpstreamClients(timeoutSeconds = UPSTREAM_TIMEOUT_SECONDS): UpstreamClients {
  const cache = new Map<string, Promise<oidc.Configuration>>();
  return {
    configurationOf(provider) {
      const key = `${provider.id} ${provider.issuer}`;
      let pending = cache.get(key);
      if (pending === undefined) {
        pending = discover(provider, timeoutSeconds);
        cache.set(key, pending);
        pending.catch(() => cache.delete(key));
      }
      return pending;
    },
  };
}
