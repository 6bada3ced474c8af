/**
 * `signin`: a whole sign-in as a person's browser makes it, with a fresh cookie jar (no single
 * sign-on): /authorize → the login page → the password → the consent page (`prompt=consent`, OIDC
 * Core §3.1.2.1, so it is asked every time) → the redirect with the code → the code exchange
 * (PKCE) → UserInfo with the access token (OIDC Core §5.3). One "2xx" is one sign-in that ended
 * with a UserInfo answer for the user. The harness drives it (`RunPlan.drive`), a fixed number of
 * browsers in a closed loop.
 *
 * The password hash is most of a sign-in's CPU on our side (scrypt, RFC 7914), while the peer's
 * login page compares the password as plain text: the run measures one scrypt with the server's
 * parameters in this process first, so the table can show the sign-in with the hash set apart.
 */
import { scrypt } from 'node:crypto';
import { DEFAULT_SCRYPT_COST } from '../../../packages/oauth-core/src/passwords.js';
import { authorizeThroughPages, type CodeFlowSettings, CookieJar, exchangeCode } from '../oauth-flow.js';
import type { PacedResult } from '../paced.js';
import { nearestRank } from '../soak/series.js';
import type { AuthTarget, Workload } from './types.js';

/** Browsers signing in at once: more only queue behind the hash (one derivation per core). */
const BROWSERS = 8;
const SIGN_IN_PARAMETERS = { prompt: 'consent' };
/**
 * OpenID scopes only: the access token is then for UserInfo on both servers (with a resource's
 * scope, oidc-provider issues it for that resource, and its UserInfo refuses it).
 */
const SIGN_IN_SCOPE = 'openid email';

/** One whole sign-in; throws with what went wrong. */
export async function signInOnce(flow: CodeFlowSettings, userinfoEndpoint: string): Promise<void> {
  const issued = await authorizeThroughPages(flow, new CookieJar(), SIGN_IN_PARAMETERS);
  const tokens = await exchangeCode(flow, issued);
  if (!tokens.id_token) throw new Error('no id_token in the token response');
  const response = await fetch(userinfoEndpoint, {
    headers: { authorization: `Bearer ${tokens.access_token}`, accept: 'application/json' },
    signal: AbortSignal.timeout(15_000),
  });
  const body = await response.text();
  if (response.status !== 200 || !body.includes('"sub"'))
    throw new Error(`UserInfo answered ${response.status}: ${body.slice(0, 200)}`);
}

/** `browsers` closed loops of whole sign-ins for `seconds`. */
async function driveSignIns(
  flow: CodeFlowSettings,
  userinfoEndpoint: string,
  browsers: number,
  seconds: number,
): Promise<PacedResult> {
  const latencies: number[] = [];
  let errors = 0;
  const start = performance.now();
  const end = start + seconds * 1000;
  const browser = async () => {
    while (performance.now() < end) {
      const began = performance.now();
      try {
        await signInOnce(flow, userinfoEndpoint);
        latencies.push(performance.now() - began);
      } catch {
        errors++;
      }
    }
  };
  await Promise.all(Array.from({ length: browsers }, browser));
  latencies.sort((a, b) => a - b);
  const ok = latencies.length;
  return {
    seconds: (performance.now() - start) / 1000,
    ok,
    statusCodes: { 200: ok },
    non2xx: 0,
    errors,
    mismatches: 0,
    p50: Math.round(nearestRank(latencies, 0.5)),
    p99: Math.round(nearestRank(latencies, 0.99)),
    max: Math.round(latencies.at(-1) ?? 0),
  };
}

/** CPU ms of one scrypt derivation with the server's default cost, in this process (median of `n`). */
export async function passwordHashCpuMs(n = 5): Promise<number> {
  const { N, r, p } = DEFAULT_SCRYPT_COST;
  const samples: number[] = [];
  for (let i = 0; i < n; i++) {
    const before = process.cpuUsage();
    await new Promise<void>((resolve, reject) =>
      scrypt('bench-password', 'bench-salt-16byt', 32, { N, r, p, maxmem: 256 * N * r }, (error) =>
        error ? reject(error) : resolve(),
      ),
    );
    const used = process.cpuUsage(before);
    samples.push((used.user + used.system) / 1000);
  }
  samples.sort((a, b) => a - b);
  return samples[Math.floor(samples.length / 2)] ?? 0;
}

/**
 * `signin`, or `signin-cheap-hash`: the same sign-in as a user whose password is stored at the
 * least scrypt cost, so the difference between the two is the hash (ours; the peer's login page
 * hashes nothing, so it signs in its one user in both).
 */
export function signInWorkload(target: AuthTarget, name: 'signin' | 'signin-cheap-hash'): Workload {
  const user = name === 'signin-cheap-hash' ? target.cheapHashUser : undefined;
  const flow = target.codeFlow
    ? { ...target.codeFlow, scope: SIGN_IN_SCOPE, ...(user ? { user } : {}) }
    : undefined;
  const userinfo = target.userinfoEndpoint;
  return {
    name,
    async preflight() {
      if (!flow || !userinfo)
        return { ok: false, unavailable: true, detail: 'no browser flow or UserInfo endpoint' };
      try {
        await signInOnce(flow, userinfo);
      } catch (error) {
        return {
          ok: false,
          unavailable: false,
          detail: error instanceof Error ? error.message : String(error),
        };
      }
      return { ok: true };
    },
    async plan() {
      if (!flow || !userinfo) throw new Error('no browser flow or UserInfo endpoint');
      const { N, r, p } = DEFAULT_SCRYPT_COST;
      const hashMs = await passwordHashCpuMs();
      return {
        options: { url: flow.authorizationEndpoint },
        drive: (seconds) => driveSignIns(flow, userinfo, BROWSERS, seconds),
        note: `${BROWSERS} browsers, fresh cookies each sign-in; one scrypt (N=${N}, r=${r}, p=${p}) costs ${hashMs.toFixed(1)} ms of CPU in the harness`,
      };
    },
  };
}
