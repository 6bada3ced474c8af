/**
 * `introspect`: RFC 7662 introspection of one active opaque access token by the resource it was
 * issued for (HTTP Basic with the resource's credentials). A fresh token is fetched before each run.
 */
import { basicAuthorization, postForm } from '../oauth-flow.js';
import { clientCredentialsBody } from './client-credentials.js';
import { type AuthTarget, describeFailure, type Workload } from './types.js';

async function issueOpaqueToken(target: AuthTarget): Promise<string> {
  const response = await postForm(
    target.tokenEndpoint,
    clientCredentialsBody(target.opaqueResource),
    target.ccClient,
  );
  if (response.status !== 200)
    throw new Error(`token request for introspection: ${describeFailure(response.status, response.body)}`);
  return (JSON.parse(response.body) as { access_token: string }).access_token;
}

export function introspectWorkload(target: AuthTarget): Workload {
  const endpoint = target.introspectionEndpoint;
  return {
    name: 'introspect',
    async preflight() {
      if (!endpoint)
        return { ok: false, unavailable: true, detail: 'discovery has no introspection_endpoint' };
      const token = await issueOpaqueToken(target);
      const response = await postForm(
        endpoint,
        { token, token_type_hint: 'access_token' },
        target.introspector,
      );
      if (response.status !== 200)
        return { ok: false, unavailable: false, detail: describeFailure(response.status, response.body) };
      const answer = JSON.parse(response.body) as { active?: boolean };
      if (answer.active !== true)
        return { ok: false, unavailable: false, detail: `token reported inactive: ${response.body}` };
      return { ok: true };
    },
    async plan() {
      const token = await issueOpaqueToken(target);
      return {
        options: {
          url: endpoint ?? '',
          method: 'POST',
          headers: {
            authorization: basicAuthorization(target.introspector),
            'content-type': 'application/x-www-form-urlencoded',
            accept: 'application/json',
          },
          body: new URLSearchParams({ token, token_type_hint: 'access_token' }).toString(),
          verifyBody: (responseBody) => String(responseBody).includes('"active":true'),
        },
      };
    },
  };
}
