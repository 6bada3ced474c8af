import { readFileSync } from 'node:fs';
import { addSecurityHeaders, withDesignTokens } from '@oidc-orders/service-kit';
import type { FastifyPluginAsync, FastifyReply } from 'fastify';
import fp from 'fastify-plugin';

interface StaticFile {
  type: string;
  body: Buffer;
}

const read = (name: string, type: string): StaticFile => ({
  type,
  body: readFileSync(new URL(`../../public/app/${name}`, import.meta.url)),
});

const withTokens = (file: StaticFile): StaticFile => ({ ...file, body: withDesignTokens(file.body) });

/**
 * The orders single-page app (`public/app/`): a page and its script and stylesheet, read once at
 * start (three small files, so no static-file plugin). The script talks to `/bff/*` only, with
 * the session cookie and `X-CSRF: 1`; it never holds a token.
 */
export const APP_FILES: Readonly<Record<string, StaticFile>> = {
  '/app': read('index.html', 'text/html; charset=utf-8'),
  '/app/': read('index.html', 'text/html; charset=utf-8'),
  '/app/app.js': read('app.js', 'text/javascript; charset=utf-8'),
  // The shared design tokens first (service-kit), then the app's own rules.
  '/app/app.css': withTokens(read('app.css', 'text/css; charset=utf-8')),
  '/app/favicon.svg': read('favicon.svg', 'image/svg+xml'),
  // Browsers ask for /favicon.ico whatever the page links; answer instead of a 404 per page.
  '/favicon.ico': read('favicon.svg', 'image/svg+xml'),
};

/**
 * Strict CSP: only this origin's script and style (no inline anything), `fetch` to this origin
 * only, never framed (clickjacking on "Place order"), no `<base>` or plugins.
 */
export const APP_CSP_DIRECTIVES: Record<string, string[]> = {
  'default-src': ["'self'"],
  'script-src': ["'self'"],
  'style-src': ["'self'"],
  'connect-src': ["'self'"],
  'img-src': ["'self'", 'data:'],
  'base-uri': ["'none'"],
  'object-src': ["'none'"],
  'form-action': ["'self'"],
  'frame-ancestors': ["'none'"],
};

/** Encapsulated, so helmet's headers apply to the app's files only, not to the JSON API. */
const registerAppRoutes: FastifyPluginAsync = async (app) => {
  // The sign-out form POSTs to /logout, which redirects on to the provider's end-session endpoint:
  // CSP form-action governs that redirect too, so the provider's origin is allowed.
  const issuer = app.config.oidc.issuer;
  const directives =
    issuer === undefined
      ? APP_CSP_DIRECTIVES
      : { ...APP_CSP_DIRECTIVES, 'form-action': ["'self'", new URL(issuer).origin] };
  addSecurityHeaders(app, {
    contentSecurityPolicy: { useDefaults: false, directives },
    frameguard: { action: 'deny' },
    referrerPolicy: { policy: 'no-referrer' },
    // RFC 6797 §7.2: "An HSTS Host MUST NOT include the STS header field in HTTP responses conveyed
    // over non-secure transport." Set below, only when the request came over HTTPS.
    strictTransportSecurity: false,
  });
  app.addHook('onSend', async (request, reply) => {
    if (request.protocol === 'https') {
      reply.header('strict-transport-security', 'max-age=31536000; includeSubDomains');
    }
  });

  const send = (reply: FastifyReply, file: StaticFile) =>
    // `no-cache`: revalidated on every load, so a deployment is picked up at once.
    reply.type(file.type).header('cache-control', 'no-cache').send(file.body);

  for (const [path, file] of Object.entries(APP_FILES)) {
    app.get(path, async (_request, reply) => send(reply, file));
  }
};

export const appRoutes = fp(registerAppRoutes, {
  name: 'app-routes',
  dependencies: ['config', 'error-handler'],
  encapsulate: true,
  fastify: '5.x',
});
