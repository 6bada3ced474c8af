import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { FastifyRequest } from 'fastify';
import fp from 'fastify-plugin';
import { OrdersApiClient } from '../bff/upstream.js';
import {
  MissingCsrfHeaderError,
  MissingEmailClaimError,
  NotSignedInError,
  SignInUnavailableError,
} from '../errors.js';
import { rolesOf } from '../oidc/claims.js';
import { deriveKey } from '../oidc/keys.js';
import { signOutCsrfToken } from '../oidc/sign-out-guard.js';
import { placeOrder } from '../place-order.js';
import type { SignInSession } from '../plugins/session.js';
import { bffPlaceOrderSchema, bffUserSchema } from '../schemas/bff.js';

export interface BffRoutesOptions {
  /** Test seam: awaited within the order deadline of `POST /bff/orders`, before its statement. */
  beforeOrderInsert?: (signal: AbortSignal) => Promise<void>;
}

/**
 * Backend-for-frontend: the browser script calls these with its session cookie and never sees a
 * token. The header `X-CSRF: 1` is required on every route: a cross-site page can make the browser
 * send the cookie, but a custom header forces a CORS preflight this app never grants, so only
 * same-origin scripts get through.
 */
const registerBffRoutes: FastifyPluginAsyncTypebox<BffRoutesOptions> = async (app, { beforeOrderInsert }) => {
  const { config } = app;
  const upstream = new OrdersApiClient(config.upstreamApiUrl, config.upstreamTimeoutMs);
  // A session exists only with SESSION_SECRET, so the key is there whenever a token is asked for.
  const signOutKey =
    config.sessionSecret === undefined ? undefined : deriveKey(config.sessionSecret, 'sign-out csrf');
  app.addHook('onClose', async () => upstream.close());

  app.addHook('onRequest', async (request) => {
    // Before anything else, even the body: a forged request learns nothing and changes nothing.
    if (request.headers['x-csrf'] !== '1') throw new MissingCsrfHeaderError();
    if (config.oidc.issuer === undefined) throw new SignInUnavailableError('not-configured');
  });

  async function requireSession(request: FastifyRequest): Promise<SignInSession> {
    const session = await app.sessions.load(request);
    // 401 JSON, not a redirect: the script decides to navigate to /login?returnUrl=….
    if (!session) throw new NotSignedInError();
    return session;
  }

  app.get('/bff/user', { schema: bffUserSchema }, async (request, reply) => {
    const session = await requireSession(request);
    reply.header('cache-control', 'no-store');
    const name = session.claims.name;
    return {
      sub: session.sub,
      name: typeof name === 'string' ? name : null,
      roles: rolesOf(session.claims, config.oidc.roleClaim),
      claims: session.claims,
      signOutToken: signOutCsrfToken(signOutKey!, session.id),
    };
  });

  app.get('/bff/orders', async (request, reply) => {
    const session = await requireSession(request);
    if (!config.oidc.saveTokens)
      throw new NotSignedInError('This application keeps no access token (OIDC_SAVE_TOKENS is off)');
    const accessToken = await app.sessions.accessToken(session);
    const response = await upstream.listOrders(accessToken, request.id);
    // The API's status and JSON body, as they are.
    return reply
      .code(response.statusCode)
      .header('content-type', 'application/json; charset=utf-8')
      .header('cache-control', 'no-store')
      .send(response.body);
  });

  /**
   * Places an order for the signed-in user's e-mail. It runs the same placement as `POST /orders`
   * in-process (same service, same database) rather than calling the API: that route takes the
   * back-office API key, which must never be used on a user's behalf.
   */
  app.post('/bff/orders', { schema: bffPlaceOrderSchema }, async (request, reply) => {
    const session = await requireSession(request);
    const email = session.claims.email;
    // The claim comes from the provider; it is still checked before it names a customer row.
    if (typeof email !== 'string' || email.length > 254 || !/^[^\s@]+@[^\s@]+$/.test(email)) {
      throw new MissingEmailClaimError();
    }
    const order = await placeOrder(
      app.orderDb,
      { email, quantity: request.body.quantity },
      { unitPriceCents: config.orderUnitPriceCents, txTimeoutMs: config.orderTxTimeoutMs, beforeOrderInsert },
    );
    return reply.code(201).header('cache-control', 'no-store').send(order);
  });
};

export const bffRoutes = fp(registerBffRoutes, {
  name: 'bff-routes',
  dependencies: ['config', 'db', 'session', 'error-handler'],
  encapsulate: true,
  fastify: '5.x',
});
