import { readFileSync } from 'node:fs';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { withDesignTokens } from '@oidc-orders/service-kit';
import type { SpaConfig } from './config.js';

interface StaticFile {
  type: string;
  body: Buffer;
}

const publicFile = (name: string, type: string): StaticFile => ({
  type,
  body: readFileSync(new URL(`../public/${name}`, import.meta.url)),
});

/** oidc-client-ts's browser build (an IIFE defining `window.oidc`), straight from node_modules. */
function oidcClientBundle(): StaticFile {
  const require = createRequire(import.meta.url);
  const packageJson = require.resolve('oidc-client-ts/package.json');
  return {
    type: 'text/javascript; charset=utf-8',
    body: readFileSync(join(dirname(packageJson), 'dist', 'browser', 'oidc-client-ts.min.js')),
  };
}

/** Fetches the provider's discovery document; replaced in tests. */
export type FetchMetadata = (issuer: string) => Promise<Record<string, unknown>>;

export const fetchDiscovery: FetchMetadata = async (issuer) => {
  const response = await fetch(`${issuer}/.well-known/openid-configuration`, {
    signal: AbortSignal.timeout(5000),
  });
  if (!response.ok) throw new Error(`discovery answered ${response.status}`);
  const metadata = (await response.json()) as Record<string, unknown>;
  // OpenID Connect Discovery §4.3: the document must name the issuer it was fetched from.
  if (metadata.issuer !== issuer) throw new Error('discovery names another issuer');
  return metadata;
};

/**
 * The page's CSP: its own script and style only (no inline anything), `fetch` to this origin, the
 * authorization server (token, revocation) and the orders API, never framed.
 */
export function contentSecurityPolicy(config: SpaConfig): string {
  const connect = [...new Set(["'self'", new URL(config.issuer).origin, new URL(config.apiUrl).origin])];
  return [
    "default-src 'self'",
    "script-src 'self'",
    "style-src 'self'",
    `connect-src ${connect.join(' ')}`,
    "img-src 'self' data:",
    "base-uri 'none'",
    "object-src 'none'",
    "form-action 'self'",
    "frame-ancestors 'none'",
  ].join('; ');
}

function onBaseHost(request: IncomingMessage, baseUrl: string): boolean {
  const host = request.headers.host;
  return (
    host !== undefined &&
    URL.canParse(`http://${host}`) &&
    new URL(`http://${host}`).hostname === new URL(baseUrl).hostname
  );
}

/**
 * The request handler of the public-client SPA: static files, `/config.json` (client settings and
 * the provider's metadata, because the authorization server does not offer discovery to other
 * origins over CORS), and a liveness probe. `/callback` is the page itself: the script finishes the
 * sign-in there.
 */
export function createSpaHandler(config: SpaConfig, fetchMetadata: FetchMetadata = fetchDiscovery) {
  const index = publicFile('index.html', 'text/html; charset=utf-8');
  const files: Record<string, StaticFile> = {
    '/': index,
    '/callback': index,
    '/app.js': publicFile('app.js', 'text/javascript; charset=utf-8'),
    // The shared design tokens first (service-kit), then this app's own rules.
    '/app.css': { type: 'text/css; charset=utf-8', body: withDesignTokens(publicFile('app.css', '').body) },
    '/favicon.svg': publicFile('favicon.svg', 'image/svg+xml'),
    // Browsers ask for /favicon.ico whatever the page links.
    '/favicon.ico': publicFile('favicon.svg', 'image/svg+xml'),
    '/vendor/oidc-client-ts.min.js': oidcClientBundle(),
  };
  const notFound = publicFile('not-found.html', 'text/html; charset=utf-8');
  const csp = contentSecurityPolicy(config);
  // Read once it succeeds; until then every /config.json tries again (the provider may start later).
  let metadata: Record<string, unknown> | undefined;

  const send = (response: ServerResponse, status: number, type: string, body: string | Buffer) => {
    response.writeHead(status, {
      'content-type': type,
      'content-length': Buffer.byteLength(body),
      'content-security-policy': csp,
      'x-content-type-options': 'nosniff',
      'x-frame-options': 'DENY',
      'referrer-policy': 'no-referrer',
      'cache-control': 'no-cache',
    });
    response.end(body);
  };

  return async (request: IncomingMessage, response: ServerResponse): Promise<void> => {
    const path = new URL(request.url ?? '/', 'http://spa.invalid').pathname;
    if (request.method !== 'GET' && request.method !== 'HEAD') {
      send(response, 405, 'text/plain; charset=utf-8', 'Method not allowed');
      return;
    }
    if (path === '/health') {
      send(response, 200, 'text/plain; charset=utf-8', 'ok');
      return;
    }
    if (config.baseUrl !== undefined && !onBaseHost(request, config.baseUrl)) {
      // The provider knows only {baseUrl}/callback, and the page keeps its sign-in state per
      // origin: on another host name sign-in would fail with "redirect_uri is not registered".
      response.writeHead(302, {
        location: `${config.baseUrl}${request.url ?? '/'}`,
        'cache-control': 'no-store',
      });
      response.end();
      return;
    }
    if (path === '/config.json') {
      try {
        metadata ??= await fetchMetadata(config.issuer);
      } catch {
        send(
          response,
          503,
          'application/json',
          JSON.stringify({ message: 'The authorization server cannot be reached' }),
        );
        return;
      }
      const body = {
        authority: config.issuer,
        client_id: config.clientId,
        scope: config.scope,
        api_url: config.apiUrl,
        metadata,
      };
      send(response, 200, 'application/json', JSON.stringify(body));
      return;
    }
    const file = Object.hasOwn(files, path) ? files[path] : undefined;
    if (file === undefined) {
      // A page in the same look as the app, with a way back to it.
      send(response, 404, notFound.type, notFound.body);
      return;
    }
    send(response, 200, file.type, file.body);
  };
}
