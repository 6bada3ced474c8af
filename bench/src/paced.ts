/**
 * An open-loop load at a fixed rate: request i is due at `start + i / rate`, whether or not earlier
 * ones have been answered, and its latency is measured from that due time. This is what "p99 at
 * 1,000 requests/s" means. autocannon's `overallRate` cannot say it: each connection fires its
 * per-second quota back to back at the start of every second and then idles, so the server sees a
 * saturating burst every second, and the closed loop of the saturating runs measures queueing
 * (mean latency = connections ÷ throughput) more than service time.
 *
 * Requests go out on at most `connections` keep-alive sockets. A request whose due time has passed
 * but that cannot be sent yet (every socket or every refresh chain busy) waits, and the wait counts
 * in its latency, so an overloaded server shows as such (no coordinated omission).
 */
import { Agent, request as httpRequest } from 'node:http';
import { nearestRank } from './soak/series.js';

export interface PacedRequest {
  body: string;
  /** Called with the answer, before the next request is taken (a refresh chain moves on here). */
  done(status: number, body: string): void;
}

export interface PacedPlan {
  url: string;
  headers: Record<string, string>;
  /** The next request to send, or `undefined` while none can be made (every refresh chain in flight). */
  next(): PacedRequest | undefined;
  /** Whether a 2xx body is the expected one; others count as mismatches. */
  verifyBody?: (body: string) => boolean;
  note?: string;
}

export interface PacedResult {
  seconds: number;
  ok: number;
  statusCodes: Record<string, number>;
  non2xx: number;
  errors: number;
  mismatches: number;
  /** Of 2xx responses, from due time to the end of the response, ms. */
  p50: number;
  p99: number;
  max: number;
}

const TICK_MS = 1;
const DRAIN_TIMEOUT_MS = 10_000;

export async function runPaced(
  plan: PacedPlan,
  options: { rate: number; seconds: number; connections: number },
): Promise<PacedResult> {
  const agent = new Agent({ keepAlive: true, maxSockets: options.connections });
  const url = new URL(plan.url);
  const total = Math.round(options.rate * options.seconds);
  const latencies: number[] = [];
  const statusCodes: Record<string, number> = {};
  let ok = 0;
  let non2xx = 0;
  let errors = 0;
  let mismatches = 0;
  let offered = 0;
  let inFlight = 0;
  // Due requests not yet sent, by due time (ms, performance.now()).
  const backlog: number[] = [];

  const send = (dueAt: number, next: PacedRequest) => {
    inFlight++;
    const finish = (status: number, body: string) => {
      inFlight--;
      next.done(status, body);
      if (status === 0) errors++;
      else {
        statusCodes[status] = (statusCodes[status] ?? 0) + 1;
        if (status >= 200 && status < 300) {
          if (plan.verifyBody && !plan.verifyBody(body)) mismatches++;
          else {
            ok++;
            latencies.push(performance.now() - dueAt);
          }
        } else non2xx++;
      }
      pump();
    };
    const outgoing = httpRequest(
      {
        host: url.hostname,
        port: url.port,
        path: `${url.pathname}${url.search}`,
        method: 'POST',
        agent,
        headers: { ...plan.headers, 'content-length': Buffer.byteLength(next.body) },
        timeout: 10_000,
      },
      (response) => {
        const chunks: Buffer[] = [];
        response.on('data', (chunk: Buffer) => chunks.push(chunk));
        response.on('end', () => finish(response.statusCode ?? 0, Buffer.concat(chunks).toString()));
        response.on('error', () => finish(0, ''));
      },
    );
    outgoing.on('timeout', () => outgoing.destroy(new Error('timeout')));
    outgoing.on('error', () => finish(0, ''));
    outgoing.end(next.body);
  };

  // Sends what is due and can be sent. Requests queue in `backlog` (not in the agent), so a request
  // is only taken from the plan when a socket is free for it.
  const pump = () => {
    while (backlog.length > 0 && inFlight < options.connections) {
      const next = plan.next();
      if (next === undefined) return;
      send(backlog.shift() as number, next);
    }
  };

  const start = performance.now();
  await new Promise<void>((resolve) => {
    const tick = () => {
      const now = performance.now();
      while (offered < total && start + (offered * 1000) / options.rate <= now) {
        backlog.push(start + (offered * 1000) / options.rate);
        offered++;
      }
      pump();
      if (offered >= total) resolve();
      else setTimeout(tick, TICK_MS);
    };
    tick();
  });
  const seconds = (performance.now() - start) / 1000;
  // Let the requests already due finish (their latency counts), within a bound.
  const drainUntil = performance.now() + DRAIN_TIMEOUT_MS;
  while ((backlog.length > 0 || inFlight > 0) && performance.now() < drainUntil) {
    pump();
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
  errors += backlog.length;
  agent.destroy();

  latencies.sort((a, b) => a - b);
  const percentile = (p: number) => round1(nearestRank(latencies, p));
  return {
    seconds,
    ok,
    statusCodes,
    non2xx,
    errors,
    mismatches,
    p50: percentile(0.5),
    p99: percentile(0.99),
    max: round1(latencies.at(-1) ?? 0),
  };
}

function round1(value: number): number {
  return Math.round(value * 10) / 10;
}
