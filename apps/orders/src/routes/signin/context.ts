import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { FastifyRequest } from 'fastify';
import * as client from 'openid-client';
import type { DiscoveredProvider } from '../../oidc/provider.js';

/** The encapsulated sign-in instance each flow file adds its routes to. */
export type SignInApp = Parameters<FastifyPluginAsyncTypebox>[0];

/**
 * Keys derived from SESSION_SECRET. Only read by routes, which the area's onRequest hook refuses
 * (SignInUnavailableError) while SESSION_SECRET is unset; hence the non-null assertions there.
 */
export interface SignInKeys {
  /** Encrypts `state` (return URL, PKCE verifier, nonce, correlation hash) between redirect and callback. */
  stateKey: Uint8Array | undefined;
  /** Signs the CSRF token of the cross-site sign-out confirmation. */
  signOutKey: Uint8Array | undefined;
}

/** One cookie per sign-in attempt, so two tabs signing in at once do not overwrite each other's. */
export const CORRELATION_COOKIE_PREFIX = '__Host-orders-correlation-';

/** A form body as URLSearchParams; a repeated field (an array from formbody) makes it invalid. */
export function formFields(body: unknown): URLSearchParams | undefined {
  if (body === null || typeof body !== 'object') return undefined;
  const fields = new URLSearchParams();
  for (const [name, value] of Object.entries(body as Record<string, unknown>)) {
    if (typeof value !== 'string') return undefined;
    fields.append(name, value);
  }
  return fields;
}

/** An error as one log-safe line: its code (when a string) and message. */
export function describe(error: unknown): string {
  if (!(error instanceof Error)) return String(error);
  const code = (error as { code?: unknown }).code;
  return typeof code === 'string' ? `${code}: ${error.message}` : error.message;
}

/** RFC 7009 revocation whose failure is only logged: the user's sign-in or sign-out goes on. */
export async function revokeQuietly(
  request: FastifyRequest,
  provider: DiscoveredProvider,
  refreshToken: string,
): Promise<void> {
  try {
    await client.tokenRevocation(provider.client, refreshToken, { token_type_hint: 'refresh_token' });
  } catch (error) {
    request.log.warn({ reason: describe(error) }, 'refresh token revocation failed');
  }
}
