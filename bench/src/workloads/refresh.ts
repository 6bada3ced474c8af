/**
 * `refresh`: refresh-token rotation. Every connection walks its own chain: its per-client hooks
 * (autocannon `setupClient` → `setupRequest`/`onResponse`) send the refresh token the previous
 * response returned. Fresh chains are minted through the login path before each run, because a
 * run that ends mid-request leaves the server one rotation ahead of us (and reuse revokes).
 */
import type autocannon from 'autocannon';
import { postForm, tokenRequestHeaders } from '../oauth-flow.js';
import { type AuthTarget, describeFailure, type Workload } from './types.js';
import { issueUserTokens } from './user-flows.js';

const REFRESH_TOKEN_IN_BODY = /"refresh_token"\s*:\s*"([^"]+)"/;

export function refreshWorkload(target: AuthTarget): Workload {
  const flow = target.codeFlow;
  const refreshBody = (token: string) =>
    new URLSearchParams({ grant_type: 'refresh_token', refresh_token: token }).toString();

  return {
    name: 'refresh',
    paced: {
      // The target: 1,000 rotations/s with p99 < 25 ms.
      rate: 1000,
      async plan({ connections }) {
        if (!flow) throw new Error('no browser flow for this target');
        // Chains not in flight; a request takes one and gives back its successor.
        const idle = (await issueUserTokens(flow, connections))
          .map((token) => token.refresh_token)
          .filter((token): token is string => Boolean(token));
        return {
          url: flow.tokenEndpoint,
          headers: tokenRequestHeaders(flow.client),
          next() {
            const token = idle.pop();
            if (token === undefined) return undefined;
            return {
              body: refreshBody(token),
              done(status, body) {
                const successor = status === 200 ? REFRESH_TOKEN_IN_BODY.exec(body)?.[1] : undefined;
                if (successor) idle.push(successor);
              },
            };
          },
          note: `${idle.length} chains minted through /authorize`,
        };
      },
    },
    async preflight() {
      if (!flow) return { ok: false, unavailable: true, detail: 'no browser flow for this target' };
      const [first] = await issueUserTokens(flow, 1);
      if (!first?.refresh_token)
        return { ok: false, unavailable: false, detail: 'the code exchange returned no refresh_token' };
      const rotated = await postForm(
        flow.tokenEndpoint,
        { grant_type: 'refresh_token', refresh_token: first.refresh_token },
        flow.client,
      );
      if (rotated.status !== 200)
        return { ok: false, unavailable: false, detail: describeFailure(rotated.status, rotated.body) };
      const next = REFRESH_TOKEN_IN_BODY.exec(rotated.body)?.[1];
      if (!next || next === first.refresh_token)
        return { ok: false, unavailable: false, detail: 'refresh token was not rotated' };
      return { ok: true };
    },
    async plan({ connections }) {
      if (!flow) throw new Error('no browser flow for this target');
      // One chain per connection plus spares for connections whose chain breaks (timeouts).
      const spares = Math.max(4, Math.ceil(connections / 4));
      const tokens = await issueUserTokens(flow, connections + spares);
      const chains = tokens
        .map((token) => token.refresh_token)
        .filter((token): token is string => Boolean(token));
      const headers = tokenRequestHeaders(flow.client);

      const setupClient = (client: autocannon.Client) => {
        let current = chains.shift();
        client.setRequests([
          {
            method: 'POST',
            headers,
            setupRequest: (request) => {
              current ??= chains.shift();
              request.body = refreshBody(current ?? 'chain-pool-exhausted');
              return request;
            },
            onResponse: (status, body) => {
              // A broken chain (reuse detection after a timeout) moves to a spare; its failure counts.
              current = status === 200 ? REFRESH_TOKEN_IN_BODY.exec(body)?.[1] : undefined;
            },
          },
        ]);
      };
      return {
        options: { url: flow.tokenEndpoint, method: 'POST', setupClient },
        note: `${connections} chains + ${spares} spares minted through /authorize`,
      };
    },
  };
}
