/**
 * `code`: the authorization-code exchange with PKCE (RFC 6749 §4.1.3, RFC 7636 §4.5). Codes are
 * pre-issued through the real login path before each run (/authorize → login form → redirect with
 * a code, plain HTTP with cookies) and each connection spends them in order from the shared pool.
 * The run is sized in requests (`amount`), from the warm-up's throughput, so it never runs dry.
 */
import type autocannon from 'autocannon';
import { exchangeCode, tokenRequestHeaders } from '../oauth-flow.js';
import type { AuthTarget, Workload } from './types.js';
import { issueCodePool } from './user-flows.js';

const MAX_POOL = 40_000;
/** The target: 500 exchanges/s with p99 < 25 ms. */
const PACED_RATE = 500;

function exchangeBody(
  flow: { redirectUri: string },
  issued: { code: string; verifier: string } | undefined,
): string {
  return new URLSearchParams({
    grant_type: 'authorization_code',
    code: issued?.code ?? 'code-pool-exhausted',
    redirect_uri: flow.redirectUri,
    code_verifier: issued?.verifier ?? 'code-pool-exhausted-code-pool-exhausted-000000',
  }).toString();
}

export function codeWorkload(target: AuthTarget): Workload {
  const flow = target.codeFlow;
  const maxPool = Math.min(MAX_POOL, target.codePoolLimit ?? MAX_POOL);
  return {
    name: 'code',
    paced: {
      rate: PACED_RATE,
      async plan({ seconds, connections }) {
        if (!flow) throw new Error('no browser flow for this target');
        const pool = await issueCodePool(
          flow,
          Math.min(maxPool, Math.round(PACED_RATE * seconds) + connections),
        );
        const codes = pool.codes;
        return {
          url: flow.tokenEndpoint,
          headers: tokenRequestHeaders(flow.client),
          next() {
            const issued = codes.shift();
            if (issued === undefined) return undefined;
            return { body: exchangeBody(flow, issued), done() {} };
          },
          verifyBody: (body) => body.includes('"access_token"'),
          note: `${pool.codes.length} codes pre-issued at ${Math.round(pool.issueRate)}/s`,
        };
      },
    },
    async preflight() {
      if (!flow) return { ok: false, unavailable: true, detail: 'no browser flow for this target' };
      const pool = await issueCodePool(flow, 1);
      const first = pool.codes[0];
      if (!first) return { ok: false, unavailable: false, detail: 'no code issued' };
      try {
        const tokens = await exchangeCode(flow, first);
        // OIDC Core §3.1.3.3: an `openid` request's token response carries an ID Token; both
        // servers must sign one, or the comparison would leave out a signature on one side.
        if (!tokens.id_token) return { ok: false, unavailable: false, detail: 'no id_token in the response' };
      } catch (error) {
        return {
          ok: false,
          unavailable: false,
          detail: error instanceof Error ? error.message : String(error),
        };
      }
      return { ok: true };
    },
    async plan({ phase, seconds, connections, expectedRps }) {
      if (!flow) throw new Error('no browser flow for this target');
      const wanted =
        phase === 'warmup' || expectedRps === undefined
          ? Math.max(connections * 4, Math.round(seconds * 200))
          : // A margin over the last rate: a cold warm-up underestimates, and a short run is worse than a long one.
            Math.round(expectedRps * seconds * 1.3);
      const count = Math.min(maxPool, Math.max(connections * 2, wanted));
      const pool = await issueCodePool(flow, count);
      const codes = pool.codes;
      const amount = Math.max(connections, codes.length);
      const headers = tokenRequestHeaders(flow.client);

      const setupClient = (client: autocannon.Client) => {
        client.setRequests([
          {
            method: 'POST',
            headers,
            setupRequest: (request) => {
              request.body = exchangeBody(flow, codes.shift());
              return request;
            },
          },
        ]);
      };
      return {
        options: {
          url: flow.tokenEndpoint,
          method: 'POST',
          setupClient,
          verifyBody: (body) => String(body).includes('"access_token"'),
        },
        amount,
        note: `${pool.codes.length} codes pre-issued at ${Math.round(pool.issueRate)}/s${pool.truncated ? ' (issuing stopped at the code-lifetime budget)' : ''}${count === target.codePoolLimit ? " (the most the server's store holds at once)" : ''}`,
      };
    },
  };
}
