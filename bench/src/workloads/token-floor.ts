/**
 * `token-floor`: the `cc-jwt` request sent to the bare Fastify token route (src/peers/bare-fastify.ts):
 * form parsing, one ES256 signature and the JSON answer, nothing else. Its CPU per request is the
 * floor of `cc-jwt` on this machine, measured in the same run rather than added up from parts.
 */
import { clientCredentialsBody } from './client-credentials.js';
import type { Workload } from './types.js';

export function tokenFloorWorkload(baseUrl: string): Workload {
  const url = `${baseUrl}/token-floor`;
  const body = new URLSearchParams(
    clientCredentialsBody({ id: 'orders-api', scope: 'orders.read' }),
  ).toString();
  const headers = { 'content-type': 'application/x-www-form-urlencoded', accept: 'application/json' };
  return {
    name: 'token-floor',
    async preflight() {
      const response = await fetch(url, {
        method: 'POST',
        headers,
        body,
        signal: AbortSignal.timeout(10_000),
      });
      const text = await response.text();
      return response.status === 200 && text.includes('"access_token"')
        ? { ok: true }
        : { ok: false, unavailable: false, detail: `HTTP ${response.status}: ${text.slice(0, 200)}` };
    },
    async plan() {
      return {
        options: {
          url,
          method: 'POST',
          headers,
          body,
          verifyBody: (responseBody) => String(responseBody).includes('"access_token"'),
        },
      };
    },
  };
}
