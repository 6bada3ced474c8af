/**
 * `cc-jwt` and `cc-opaque`: RFC 6749 §4.4 client credentials with HTTP Basic client
 * authentication, one token per request. The resource is named both by scope and by the RFC 8707
 * `resource` parameter, which our server and oidc-provider both accept.
 */
import { basicAuthorization, postForm } from '../oauth-flow.js';
import { type AuthTarget, describeFailure, type Workload } from './types.js';

export function clientCredentialsBody(resource: { id: string; scope: string }): Record<string, string> {
  return { grant_type: 'client_credentials', scope: resource.scope, resource: resource.id };
}

function isJwt(token: string): boolean {
  return /^[\w-]+\.[\w-]+\.[\w-]+$/.test(token);
}

export function clientCredentialsWorkload(target: AuthTarget, format: 'jwt' | 'opaque'): Workload {
  const resource = format === 'jwt' ? target.jwtResource : target.opaqueResource;
  const body = new URLSearchParams(clientCredentialsBody(resource)).toString();
  return {
    name: format === 'jwt' ? 'cc-jwt' : 'cc-opaque',
    async preflight() {
      const response = await postForm(target.tokenEndpoint, clientCredentialsBody(resource), target.ccClient);
      if (response.status !== 200)
        return { ok: false, unavailable: false, detail: describeFailure(response.status, response.body) };
      const token = (JSON.parse(response.body) as { access_token?: string }).access_token ?? '';
      if (format === 'jwt') {
        if (!isJwt(token)) return { ok: false, unavailable: false, detail: 'access_token is not a JWT' };
        const header = JSON.parse(Buffer.from(token.split('.')[0] ?? '', 'base64url').toString()) as {
          alg?: string;
        };
        if (header.alg !== 'ES256')
          return { ok: false, unavailable: false, detail: `JWT signed ${header.alg}, not ES256` };
      } else if (token === '' || isJwt(token)) {
        return { ok: false, unavailable: false, detail: 'expected an opaque access_token' };
      }
      return { ok: true };
    },
    async plan() {
      return {
        options: {
          url: target.tokenEndpoint,
          method: 'POST',
          headers: {
            authorization: basicAuthorization(target.ccClient),
            'content-type': 'application/x-www-form-urlencoded',
            accept: 'application/json',
          },
          body,
          verifyBody: (responseBody) => String(responseBody).includes('"access_token"'),
        },
      };
    },
  };
}
