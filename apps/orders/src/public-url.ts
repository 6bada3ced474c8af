import type { FastifyRequest } from 'fastify';
import type { AppConfig } from './config.js';

/**
 * Where the browser (or an API client) reaches this app. Without TRUST_PROXY, always BASE_URL (a
 * client-supplied `X-Forwarded-*` or `Host` must not steer redirects or DPoP's `htu`). With it, the
 * scheme and host the gateway forwards (https behind a TLS-terminating proxy), keeping BASE_URL's
 * path prefix.
 */
export function publicBaseUrl(
  config: Pick<AppConfig, 'baseUrl' | 'trustProxy'>,
  request: FastifyRequest,
): string {
  if (config.trustProxy === false) return config.baseUrl;
  const prefix = new URL(config.baseUrl).pathname.replace(/\/+$/, '');
  return `${request.protocol}://${request.host}${prefix}`;
}

/** The public URL of this request without its query (RFC 9449 §4.3 step 9 compares `htu` so). */
export function publicRequestUrl(
  config: Pick<AppConfig, 'baseUrl' | 'trustProxy'>,
  request: FastifyRequest,
): string {
  const path = request.url.split('?', 1)[0]!;
  return `${publicBaseUrl(config, request)}${path}`;
}
