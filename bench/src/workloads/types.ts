import type autocannon from 'autocannon';
import type { CodeFlowSettings, Credentials } from '../oauth-flow.js';
import type { PacedPlan, PacedResult } from '../paced.js';

export const WORKLOAD_NAMES = [
  'cc-jwt',
  'cc-opaque',
  'introspect',
  'refresh',
  'code',
  'signin',
  'signin-cheap-hash',
  'discovery',
  'jwks',
  'orders-create',
  'orders-list',
] as const;
export type WorkloadName = (typeof WORKLOAD_NAMES)[number];
/** Workloads plus the HTTP ceiling, which only the bare Fastify peer runs. */
/** Workloads of the table, plus the ceilings run on bare Fastify (`token-floor` only with `cc-jwt`). */
export type BenchName = WorkloadName | 'http-ceiling' | 'token-floor';

/** The outcome of one request made by hand before any load. */
export type Preflight =
  | { ok: true }
  /** `unavailable`: the endpoint does not exist yet (404/401); the run reports it and carries on. */
  | { ok: false; unavailable: boolean; detail: string };

export interface RunRequest {
  phase: 'warmup' | 'measure';
  seconds: number;
  connections: number;
  /** 2xx/s seen in the warm-up, for workloads that pre-issue material sized to the run. */
  expectedRps?: number;
}

export interface RunPlan {
  /** autocannon options, url included; the runner sets connections, duration and timeouts. */
  options: autocannon.Options;
  /** A fixed number of requests instead of a duration: runs that spend pre-issued material. */
  amount?: number;
  /**
   * Drives the run itself instead of autocannon, for a workload of several requests per operation
   * (a whole sign-in): one "2xx" is one operation that ended as it should.
   */
  drive?: (seconds: number) => Promise<PacedResult>;
  note?: string;
}

export interface Workload {
  readonly name: BenchName;
  /**
   * One more run after the saturating ones, open loop at `rate` requests/s (src/paced.ts): the
   * latency at the rate a target names. A closed loop of 32 connections measures queueing as much
   * as service time (Little's law: mean latency = connections ÷ throughput), so "p99 at 1,000/s"
   * needs a run that offers 1,000/s rather than as many as the machine can take.
   */
  readonly paced?: {
    rate: number;
    plan(request: { seconds: number; connections: number }): Promise<PacedPlan>;
  };
  preflight(): Promise<Preflight>;
  /** Called before the warm-up and before each measured run (fresh codes, chains, tokens). */
  plan(request: RunRequest): Promise<RunPlan>;
}

/** An authorization server under test (ours, or the oidc-provider peer), endpoints from discovery. */
export interface AuthTarget {
  issuer: string;
  discoveryUrl: string;
  tokenEndpoint: string;
  introspectionEndpoint: string | undefined;
  jwksUri: string;
  ccClient: Credentials;
  /** Who introspects opaque tokens: our opaque resource, or the peer's resource-server client. */
  introspector: Credentials;
  jwtResource: { id: string; scope: string };
  opaqueResource: { id: string; scope: string };
  /** The browser flow that mints codes and refresh tokens (ours, and oidc-provider's login pages). */
  codeFlow?: CodeFlowSettings;
  /** A user whose password is stored at the least scrypt cost (ours only; the peer hashes nothing). */
  cheapHashUser?: { username: string; password: string };
  /** OIDC Core §5.3: the UserInfo endpoint, from discovery. */
  userinfoEndpoint?: string;
  /** Most codes the server can hold at once (oidc-provider's in-memory LRU); no limit when absent. */
  codePoolLimit?: number;
}

export interface Discovery {
  issuer: string;
  token_endpoint: string;
  authorization_endpoint: string;
  jwks_uri: string;
  introspection_endpoint?: string;
  userinfo_endpoint?: string;
}

export async function loadDiscovery(issuer: string): Promise<{ url: string; document: Discovery }> {
  const url = `${issuer.replace(/\/$/, '')}/.well-known/openid-configuration`;
  const response = await fetch(url, { signal: AbortSignal.timeout(10_000) });
  if (response.status !== 200) throw new Error(`discovery answered ${response.status}`);
  return { url, document: (await response.json()) as Discovery };
}

export function describeFailure(status: number, body: string): string {
  return `HTTP ${status}: ${body.slice(0, 300).replace(/\s+/g, ' ')}`;
}
