import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { pathToFileURL } from 'node:url';
import { withDesignTokens } from '@oidc-orders/service-kit';
import type { FastifyPluginAsync, FastifyReply } from 'fastify';

/**
 * The sign-in pages' static files: the one stylesheet and the form_post submitter (external,
 * because the CSP forbids inline script). Read once at start-up; tiny, so no static-file plugin.
 */
/**
 * @simplewebauthn/browser's own browser bundle (UMD, global `SimpleWebAuthnBrowser`), served as it
 * is published; its package `exports` name only the module entry, so the file is found from there.
 */
const simpleWebAuthnBrowserBundle = new URL(
  '../dist/bundle/index.umd.min.js',
  pathToFileURL(createRequire(import.meta.url).resolve('@simplewebauthn/browser')),
);

const assets: Record<string, { type: string; body: Buffer }> = {
  'styles.css': {
    type: 'text/css; charset=utf-8',
    // The shared design tokens first (service-kit), then the sign-in pages' own rules.
    body: withDesignTokens(readFileSync(new URL('../pages/styles.css', import.meta.url))),
  },
  // Not named form-post.js on disk: `./form-post.js` import specifiers would resolve to it
  // instead of form-post.ts.
  'form-post.js': {
    type: 'text/javascript; charset=utf-8',
    body: readFileSync(new URL('../pages/form-post-submit.js', import.meta.url)),
  },
  'favicon.svg': {
    type: 'image/svg+xml',
    body: readFileSync(new URL('../pages/favicon.svg', import.meta.url)),
  },
  // Continues to the post-logout redirect once the front-channel logout iframes have loaded.
  'signed-out.js': {
    type: 'text/javascript; charset=utf-8',
    body: readFileSync(new URL('../pages/signed-out-continue.js', import.meta.url)),
  },
  // The recovery codes page's "Copy" button (src/pages/recovery.ts).
  'recovery-codes.js': {
    type: 'text/javascript; charset=utf-8',
    body: readFileSync(new URL('../pages/recovery-codes-copy.js', import.meta.url)),
  },
  // The passkey pages (src/pages/passkey.ts): the WebAuthn library, then the ceremony runner.
  'simplewebauthn-browser.js': {
    type: 'text/javascript; charset=utf-8',
    body: readFileSync(simpleWebAuthnBrowserBundle),
  },
  'passkey.js': {
    type: 'text/javascript; charset=utf-8',
    body: readFileSync(new URL('../pages/passkey-ceremony.js', import.meta.url)),
  },
};

function sendAsset(reply: FastifyReply, asset: { type: string; body: Buffer }) {
  return reply
    .type(asset.type)
    .header('cache-control', 'public, max-age=3600')
    .header('x-content-type-options', 'nosniff')
    .send(asset.body);
}

export const assetRoutes: FastifyPluginAsync = async (app) => {
  app.get<{ Params: { name: string } }>('/assets/:name', async (request, reply) => {
    const asset = Object.hasOwn(assets, request.params.name) ? assets[request.params.name] : undefined;
    if (asset === undefined) return reply.code(404).type('text/plain; charset=utf-8').send('Not found');
    return sendAsset(reply, asset);
  });
  // Browsers ask for /favicon.ico whatever the page says; answer rather than log a 404 per page.
  app.get('/favicon.ico', async (_request, reply) => sendAsset(reply, assets['favicon.svg']!));
};
