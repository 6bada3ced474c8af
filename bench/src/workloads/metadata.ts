/** `discovery` and `jwks`: the two cacheable GETs every relying party and resource server makes. */
import { type AuthTarget, describeFailure, type Workload } from './types.js';

function getWorkload(name: 'discovery' | 'jwks', url: string, mustContain: string): Workload {
  return {
    name,
    async preflight() {
      const response = await fetch(url, { signal: AbortSignal.timeout(10_000) });
      const body = await response.text();
      if (response.status !== 200)
        return { ok: false, unavailable: false, detail: describeFailure(response.status, body) };
      if (!body.includes(mustContain))
        return { ok: false, unavailable: false, detail: `no ${mustContain} in ${body.slice(0, 200)}` };
      return { ok: true };
    },
    async plan() {
      return { options: { url, method: 'GET', headers: { accept: 'application/json' } } };
    },
  };
}

export function discoveryWorkload(target: AuthTarget): Workload {
  return getWorkload('discovery', target.discoveryUrl, '"token_endpoint"');
}

export function jwksWorkload(target: AuthTarget): Workload {
  return getWorkload('jwks', target.jwksUri, '"keys"');
}
