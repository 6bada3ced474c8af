/** `http-ceiling`: a GET of a bare Fastify route, the most any of our routes could answer. */
import type { Workload } from './types.js';

export function httpCeilingWorkload(baseUrl: string): Workload {
  const url = `${baseUrl}/hello`;
  return {
    name: 'http-ceiling',
    async preflight() {
      const response = await fetch(url, { signal: AbortSignal.timeout(10_000) });
      await response.arrayBuffer();
      return response.status === 200
        ? { ok: true }
        : { ok: false, unavailable: false, detail: `HTTP ${response.status}` };
    },
    async plan() {
      return { options: { url, method: 'GET' } };
    },
  };
}
