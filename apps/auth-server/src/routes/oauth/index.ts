import type { FastifyInstance, FastifyPluginAsync, onRequestHookHandler, RouteOptions } from 'fastify';
import {
  OAUTH_FORM_BODY_LIMIT_BYTES,
  requireFormBody,
  requireFormBodyWhenPresent,
} from '../../http/oauth-form.js';
import { NO_STORE_HEADERS } from '../../plugins/error-handler.js';
import { deviceAuthorizationRoutes } from './device-authorization.js';
import { introspectionRoutes } from './introspect.js';
import { pushedAuthorizationRequestRoutes } from './par.js';
import { type RegistrationRoutesOptions, registrationRoutes } from './registration.js';
import { revocationRoutes } from './revoke.js';
import { tokenRoutes } from './token.js';
import { userInfoRoutes } from './userinfo.js';

/**
 * How a POST (or PUT) route of the area takes its body: a form always (RFC 6749 §3.2), only when
 * one is sent, or JSON (RFC 7591 §3.1 registration requests).
 */
export type OAuthFormBody = 'required' | 'when-present' | 'json';

declare module 'fastify' {
  interface FastifyContextConfig {
    /** Set on every route of src/routes/oauth/ by the area (test/endpoints.test.ts walks it). */
    area?: 'oauth';
    /** A POST route of the oauth area whose body is optional (POST /userinfo with a header token). */
    formBody?: OAuthFormBody;
  }
}

/**
 * RFC 6749 §5.1 / §5.2, RFC 7662 §4, RFC 8628 §3.2: these answers carry credentials or describe
 * them, and must never be cached. A callback hook that does no I/O (the token endpoint is the hot path).
 */
const noStore: onRequestHookHandler = (_request, reply, done) => {
  reply.headers(NO_STORE_HEADERS);
  done();
};

/**
 * What every route of the area gets, so no route file repeats it: errors as RFC 6749 §5.2 JSON
 * (unless the route asks for the RFC 6750 bearer challenge), and on POST the 16 KiB body limit and
 * the form-body check, after the route's own `onRequest` (CORS first, so refusals carry it too).
 */
export function asOAuthRoute(route: RouteOptions): void {
  route.config = { ...route.config, area: 'oauth', errorStyle: route.config?.errorStyle ?? 'oauth' };
  const methods = ([] as string[]).concat(route.method);
  if (!methods.includes('POST')) return;
  route.bodyLimit ??= OAUTH_FORM_BODY_LIMIT_BYTES;
  if (route.config.formBody === 'json') return;
  const formCheck = route.config.formBody === 'when-present' ? requireFormBodyWhenPresent : requireFormBody;
  route.onRequest = [...([] as onRequestHookHandler[]).concat(route.onRequest ?? []), formCheck];
}

/** The area's hooks, on the encapsulated context `app` (and on every route registered in it after). */
export function guardOAuthArea(app: FastifyInstance): void {
  app.addHook('onRoute', asOAuthRoute);
  app.addHook('onRequest', noStore);
}

/**
 * The back-channel OAuth endpoints (token, introspection, revocation, PAR, device authorization,
 * userinfo): the rows of src/endpoints.ts whose area is `oauth`. One encapsulated plugin, so its
 * hooks reach these routes alone.
 */
export const oauthRoutes: FastifyPluginAsync<{
  registration?: RegistrationRoutesOptions | undefined;
}> = async (app, options) => {
  guardOAuthArea(app);
  await app.register(tokenRoutes);
  await app.register(introspectionRoutes);
  await app.register(revocationRoutes);
  await app.register(userInfoRoutes);
  await app.register(pushedAuthorizationRequestRoutes);
  await app.register(deviceAuthorizationRoutes);
  // Only with the seed's `client_registration` (src/endpoints.ts `enabledBy`).
  if (options.registration) await app.register(registrationRoutes, options.registration);
};
