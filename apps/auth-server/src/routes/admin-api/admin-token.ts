import {
  type ActiveAccessToken,
  ADMIN_API_SCOPES,
  adminApiResourceId,
  asResourceChallenge,
  authorizeResourceAccess,
  findActiveAccessToken,
  isOAuthError,
} from '@oidc-orders/oauth-core';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { AdminActor } from '../../admin/admin-audit.js';
import { presentedAccessToken } from '../../http/presented-access-token.js';

/** The `realm` of the area's challenges (RFC 6750 §3). */
const REALM = 'admin-api';

/**
 * RFC 9110 §9.2.1: the safe methods read, so `admin.read` is enough; every other method changes
 * something and needs `admin.write`. A route added to the area gets the right scope by its method.
 */
export function requiredAdminScope(method: string): string {
  return method === 'GET' || method === 'HEAD' ? ADMIN_API_SCOPES.read : ADMIN_API_SCOPES.write;
}

declare module 'fastify' {
  interface FastifyRequest {
    /** The checked access token of an admin API request (set by the area's guard). */
    adminToken: ActiveAccessToken | null;
  }
}

/**
 * Who acts in a request that passed the area's guard: the token's subject, the admin (a user's
 * token) or the client itself (client credentials, RFC 6749 §4.4: `sub` is the client_id).
 */
export function adminActor(request: FastifyRequest): AdminActor {
  if (request.adminToken === null) throw new Error('admin API route outside the guarded area');
  return { actor: request.adminToken.sub, ip: request.ip };
}

/**
 * Checks the request's access token as the admin API's protected resource: one this server
 * issued for `<issuer>/admin/api` with the method's scope; a DPoP-bound one only with a proof of its
 * key for this request (RFC 9449 §7.1), the same checks UserInfo makes.
 */
export function createAdminTokenCheck(app: FastifyInstance) {
  const { stores, verifier, clock, config } = app.protocol;
  const context = { stores, verifier, clock, config };
  const resource = adminApiResourceId(config.issuer);

  async function proofKey(request: FastifyRequest, accessToken: string): Promise<string> {
    const active = await findActiveAccessToken(accessToken, context);
    const client = active === null ? null : await stores.clients.findClient(active.clientId);
    return app.dpop.verifyResourceRequest(request, {
      // RFC 9449 §4.3: `htu` is the request URI without query and fragment.
      path: request.url.split('?')[0] ?? request.url,
      accessToken,
      nonceRequired: client?.dpopNonceRequired === true,
    });
  }

  return async function checkAdminToken(request: FastifyRequest): Promise<ActiveAccessToken> {
    const presented = presentedAccessToken(request, { formParameter: false, realm: REALM });
    const scope = requiredAdminScope(request.method);
    if (presented.scheme === 'Bearer') {
      return authorizeResourceAccess(presented.token, context, { resource, scope, dpopJkt: null });
    }
    try {
      const dpopJkt = await proofKey(request, presented.token);
      return await authorizeResourceAccess(presented.token, context, { resource, scope, dpopJkt });
    } catch (error) {
      // RFC 9449 §7.1: errors of a DPoP request are answered with a DPoP challenge.
      throw isOAuthError(error) ? asResourceChallenge(error) : error;
    }
  };
}
