/** The public SPA's settings, read once from the environment by server.ts. */
export interface SpaConfig {
  port: number;
  host: string;
  /** The authorization server (`iss`); its discovery document is read server-side and handed to the page. */
  issuer: string;
  clientId: string;
  /** Space-separated scopes the page asks for. */
  scope: string;
  /** The orders API the page calls with its bearer token (`GET {apiUrl}`). */
  apiUrl: string;
  /**
   * SPA_BASE_URL: where the SPA is registered (its redirect URI is `{baseUrl}/callback`). When set,
   * a page opened on another host name is redirected there first (`pnpm dev` sets it).
   */
  baseUrl: string | undefined;
}

export class SpaConfigError extends Error {
  constructor(variable: string, expectation: string) {
    super(`${variable} ${expectation}`);
    this.name = 'SpaConfigError';
  }
}

// `email`: the orders API finds the caller's orders by the e-mail in the access token, which the auth
// server copies only when the `email` scope was granted (OIDC Core §5.4).
export const DEFAULT_SCOPE = 'openid profile email orders.read offline_access';

function httpUrl(variable: string, value: string): string {
  if (!URL.canParse(value) || !/^https?:$/.test(new URL(value).protocol)) {
    throw new SpaConfigError(variable, 'must be an absolute http(s) URL');
  }
  return value;
}

export function parseSpaConfig(raw: Record<string, string | undefined>): SpaConfig {
  const env = Object.fromEntries(
    Object.entries(raw).filter(([, value]) => value !== undefined && value !== ''),
  );
  const port = Number(env.PORT ?? '5173');
  if (!Number.isInteger(port) || port < 0 || port > 65_535) {
    throw new SpaConfigError('PORT', 'must be an integer from 0 to 65535');
  }
  const issuer = httpUrl('SPA_ISSUER', env.SPA_ISSUER ?? 'http://localhost:4000');
  if (issuer.endsWith('/')) throw new SpaConfigError('SPA_ISSUER', 'must not end with /');
  return {
    port,
    host: env.HOST ?? '0.0.0.0',
    issuer,
    clientId: env.SPA_CLIENT_ID ?? 'orders-spa',
    scope: env.SPA_SCOPE ?? DEFAULT_SCOPE,
    apiUrl: httpUrl('SPA_API_URL', env.SPA_API_URL ?? 'http://localhost:3000/orders'),
    baseUrl:
      env.SPA_BASE_URL === undefined ? undefined : new URL(httpUrl('SPA_BASE_URL', env.SPA_BASE_URL)).origin,
  };
}
