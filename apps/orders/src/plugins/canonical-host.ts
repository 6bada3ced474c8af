import type { FastifyReply, FastifyRequest } from 'fastify';
import fp from 'fastify-plugin';
import { sendPage } from '../pages/page.js';

/**
 * Pages and sign-in only work on the host name of BASE_URL: the correlation and session cookies
 * are set for it, and the authorization server knows only its redirect URI. Opening
 * http://127.0.0.1:3000/app instead of http://localhost:3000/app would fail sign-in with a
 * misleading "correlation failed". So, before anything else, a browser on another host name is
 * sent to BASE_URL in development, and refused with a page naming the right address in production.
 *
 * Not applied behind a trusted proxy (the gateway decides the public host), to health checks
 * (probes use the instance address) or to the JSON API and back-channel logout (servers calling
 * servers, with no cookies at stake).
 */
const EXEMPT_PATHS = /^\/(health\/|orders(\/|$|\?)|users(\/|$|\?)|backchannel-logout|favicon\.ico)/;

export const canonicalHostPlugin = fp(
  async (app) => {
    const { config } = app;
    if (
      config.trustProxy !== false ||
      (config.nodeEnv !== 'development' && config.nodeEnv !== 'production')
    ) {
      return;
    }
    const base = new URL(config.baseUrl);
    app.addHook('onRequest', async (request, reply) => {
      // Host names, not ports: cookies are shared across the ports of one host name (RFC 6265 §8.5).
      if (request.hostname === base.hostname || EXEMPT_PATHS.test(request.url)) return;
      return config.isDevelopment ? redirectToBase(request, reply, base) : refuse(reply, base);
    });
  },
  { name: 'canonical-host', dependencies: ['config', 'error-handler'], fastify: '5.x' },
);

function redirectToBase(request: FastifyRequest, reply: FastifyReply, base: URL) {
  // 307 keeps the method and body, so a form post reaches the same route on the right host.
  return reply.header('cache-control', 'no-store').redirect(`${base.origin}${request.url}`, 307);
}

function refuse(reply: FastifyReply, base: URL) {
  // RFC 9110 §15.5.20 421 Misdirected Request: this server does not answer for that host name.
  return sendPage(reply, 421, {
    title: 'Wrong address',
    message: `This app is served at ${base.origin}. Open it there; signing in does not work on other addresses.`,
    actions: [{ href: `${base.origin}/app`, label: `Go to ${base.host}` }],
  });
}
