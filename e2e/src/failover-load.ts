import { HttpBrowser, type HttpPage } from './http-browser.js';
import { basicAuthorization, type Instances, postForm, WEB_TEST_REDIRECT_URI } from './instances.js';
import { authorizationCode, redeemCode, refresh } from './protocol-flows.js';

/**
 * The soak mix (bench/src/soak/mix.ts: sign-ins through the pages, code exchanges, refresh
 * rotations, token requests and introspections, orders placed) as steady load over every instance
 * of both apps, with the bookkeeping a failover test needs: every answer's status, every refresh
 * token handed out and its successor, every code accepted, every order answered 201.
 *
 * A client that gets a 503 does what a real one does: it keeps what it had and sends it again
 * later (a refresh token, a code), which is what `refresh_token_reuse_interval` is for when the
 * database committed a rotation whose answer was lost.
 */

export type LoadOperation = 'sign-in' | 'code' | 'refresh' | 'token' | 'introspect' | 'order';

/** One cycle of the mix: one sign-in, six refreshes, the rest token requests, introspections, orders. */
const CYCLE: readonly LoadOperation[] = [
  'sign-in',
  ...(['introspect', 'refresh', 'order', 'token', 'refresh', 'introspect', 'order', 'refresh'] as const),
  ...(['token', 'introspect', 'refresh', 'order', 'refresh', 'introspect', 'order', 'refresh'] as const),
];

export interface LoadOutcome {
  operation: LoadOperation;
  /** ms since the load started, when the request was sent and answered. */
  startedAt: number;
  endedAt: number;
  /** HTTP status; 0 when no answer came (a timeout, a reset): never acceptable. */
  status: number;
  ok: boolean;
  /** The answer's start, for failure messages. */
  body: string;
  /** For a sign-in cut short: the page request that met the failure (`POST /login`). */
  step?: string;
}

/** Answers that mean "the database is away, try again": a 503 with the documented body. */
export function isCleanUnavailable(outcome: LoadOutcome): boolean {
  if (outcome.status !== 503) return false;
  if (outcome.operation === 'sign-in') return true; // a page saying so (HTML)
  return /temporarily_unavailable|temporarily unavailable/.test(outcome.body);
}

const WRITES: ReadonlySet<LoadOperation> = new Set(['code', 'refresh', 'token', 'order']);

/**
 * A browser that remembers the last page it saw and the request that fetched it, so a sign-in cut
 * by a 503 page says which step met it.
 */
class RecordingBrowser extends HttpBrowser {
  lastPage: HttpPage | undefined;
  lastStep = '';
  override async get(url: string | URL): Promise<HttpPage> {
    this.lastStep = `GET ${new URL(url).pathname}`;
    this.lastPage = await super.get(url);
    return this.lastPage;
  }
  override async post(url: string | URL, fields: Record<string, string>): Promise<HttpPage> {
    this.lastStep = `POST ${new URL(url).pathname}`;
    this.lastPage = await super.post(url, fields);
    return this.lastPage;
  }
}

interface Answer {
  status: number;
  ok: boolean;
  body: string;
  step?: string;
}

export class FailoverLoad {
  readonly outcomes: LoadOutcome[] = [];
  /** What the protocol promises and an answer broke (a token refused, a code accepted twice). */
  readonly violations: string[] = [];
  /** Refresh token → the successor it was answered with (the same one on every retry). */
  readonly successors = new Map<string, string>();
  /** Refresh tokens answered and not yet rotated: the chains the clients hold. */
  readonly heads = new Set<string>();
  /** Codes redeemed with 200, and those still to redeem (their exchange met a 503). */
  readonly acceptedCodes: Array<{ code: string; verifier: string }> = [];
  readonly pendingCodes: Array<{ code: string; verifier: string }> = [];
  /** Order ids answered 201. */
  readonly orderIds: number[] = [];
  #running = false;
  #workers: Promise<void>[] = [];
  #started = performance.now();
  #turn = 0;
  #opaqueToken: string | undefined;

  constructor(private readonly stack: Instances) {}

  now(): number {
    return performance.now() - this.#started;
  }

  start(workers: number): void {
    this.#running = true;
    this.#workers = Array.from({ length: workers }, (_, index) => this.#work(index));
  }

  async stop(): Promise<void> {
    this.#running = false;
    await Promise.all(this.#workers);
  }

  failures(): LoadOutcome[] {
    return this.outcomes.filter((outcome) => !outcome.ok);
  }

  /** The first write sent at or after `since` that succeeded: when writes work again. */
  firstWriteSucceededAfter(since: number): LoadOutcome | undefined {
    return this.outcomes
      .filter((outcome) => WRITES.has(outcome.operation) && outcome.ok && outcome.startedAt >= since)
      .sort((a, b) => a.endedAt - b.endedAt)[0];
  }

  async #work(worker: number): Promise<void> {
    let position = worker * 5;
    while (this.#running) {
      const operation = CYCLE[position++ % CYCLE.length]!;
      await this.run(operation);
    }
  }

  /** The next instance of a service, round robin: the load spreads over every instance. */
  #next(urls: string[]): string {
    return urls[this.#turn++ % urls.length]!;
  }

  async run(operation: LoadOperation): Promise<void> {
    const startedAt = this.now();
    const record = (status: number, ok: boolean, body: string, step?: string) =>
      this.outcomes.push({
        operation,
        startedAt,
        endedAt: this.now(),
        status,
        ok,
        body: body.slice(0, 300),
        ...(step === undefined ? {} : { step }),
      });
    try {
      const { status, ok, body, step } = await this.#send(operation);
      record(status, ok, body, step);
    } catch (error) {
      record(0, false, String(error));
    }
  }

  #send(operation: LoadOperation): Promise<Answer> {
    switch (operation) {
      case 'sign-in':
        return this.#signIn();
      case 'code':
        return this.pendingCodes.length > 0 ? this.#redeem(this.pendingCodes.shift()!) : this.#signIn();
      case 'refresh':
        return this.#refreshOne();
      case 'token':
        return this.#token();
      case 'introspect':
        return this.#opaqueToken === undefined ? this.#token() : this.#introspect(this.#opaqueToken);
      case 'order':
        return this.#order();
    }
  }

  #webTest() {
    return { id: 'web-test', secret: this.stack.secrets.webTestClientSecret };
  }

  async #signIn(): Promise<Answer> {
    const browser = new RecordingBrowser();
    try {
      const code = await authorizationCode(browser, {
        authorizeAt: this.#next(this.stack.authUrls),
        loginAt: this.#next(this.stack.authUrls),
        clientId: 'web-test',
        redirectUri: WEB_TEST_REDIRECT_URI,
        scope: 'openid offline_access orders.read',
        user: this.stack.user,
      });
      return await this.#redeem(code);
    } catch (error) {
      const page = browser.lastPage;
      if (page && page.status !== 200 && page.status !== 302 && page.status !== 303)
        return { status: page.status, ok: false, body: page.body, step: browser.lastStep };
      throw error;
    }
  }

  async #redeem(code: { code: string; verifier: string }) {
    const answer = await redeemCode(
      this.#next(this.stack.authUrls),
      this.#webTest(),
      code,
      WEB_TEST_REDIRECT_URI,
    );
    if (answer.status === 200) {
      this.acceptedCodes.push(code);
      this.heads.add(answer.json.refresh_token as string);
    } else if (answer.status === 503) {
      this.pendingCodes.push(code);
    } else if (answer.status === 400 && answer.json.error === 'invalid_grant') {
      // A retried code whose first exchange committed but whose answer was lost: refused, as
      // RFC 6749 §4.1.2 says. Accepted once, never twice.
      return { status: answer.status, ok: true, body: answer.text };
    }
    return { status: answer.status, ok: answer.status === 200, body: answer.text };
  }

  async #refreshOne() {
    const [token] = this.heads;
    if (token === undefined) return this.#signIn();
    this.heads.delete(token);
    const answer = await refresh(this.#next(this.stack.authUrls), this.#webTest(), token);
    if (answer.status === 200) {
      const successor = answer.json.refresh_token as string;
      const earlier = this.successors.get(token);
      if (earlier !== undefined && earlier !== successor)
        this.violations.push('a refresh token was rotated into two different successors');
      this.successors.set(token, successor);
      this.heads.add(successor);
    } else if (answer.status === 503) {
      this.heads.add(token); // kept and sent again later
    } else {
      this.violations.push(`a refresh token held by the client was refused: ${answer.status} ${answer.text}`);
    }
    return { status: answer.status, ok: answer.status === 200, body: answer.text };
  }

  async #token() {
    const answer = await postForm(
      `${this.#next(this.stack.authUrls)}/token`,
      { grant_type: 'client_credentials', scope: 'reports.read' },
      basicAuthorization('worker', this.stack.secrets.workerClientSecret),
    );
    if (answer.status === 200) this.#opaqueToken = answer.json.access_token as string;
    return { status: answer.status, ok: answer.status === 200, body: answer.text };
  }

  async #introspect(token: string) {
    const answer = await postForm(
      `${this.#next(this.stack.authUrls)}/introspect`,
      { token },
      basicAuthorization('reports-api', this.stack.secrets.reportsApiSecret),
    );
    return {
      status: answer.status,
      ok: answer.status === 200 && answer.json.active === true,
      body: answer.text,
    };
  }

  async #order() {
    const response = await fetch(`${this.#next(this.stack.ordersUrls)}/orders`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-api-key': this.stack.secrets.apiKey },
      body: JSON.stringify({ email: `failover-${this.#turn % 200}@example.com`, quantity: 1 }),
      signal: AbortSignal.timeout(20_000),
    });
    const body = await response.text();
    if (response.status === 201) this.orderIds.push((JSON.parse(body) as { id: number }).id);
    return { status: response.status, ok: response.status === 201, body };
  }
}

/** Failures by operation and status, for the report: `refresh 503 ×3, order 503 ×2`. */
export function describeFailures(outcomes: LoadOutcome[]): string {
  const counts = new Map<string, number>();
  for (const outcome of outcomes) {
    const key = `${outcome.operation} ${outcome.status}`;
    counts.set(key, (counts.get(key) ?? 0) + 1);
  }
  return [...counts].map(([key, count]) => `${key} ×${count}`).join(', ') || 'none';
}

/**
 * The apps' log lines about the database being away since `sinceEpochMs` (the warnings behind
 * their 503s: failure kind, SQLSTATE, driver reason, statement), for a failure message: which
 * statement met which error.
 */
export function databaseWarnings(logs: string, sinceEpochMs: number): string[] {
  return logs.split('\n').filter((line) => {
    if (!line.includes('database unavailable')) return false;
    const time = /"time":(\d+)/.exec(line)?.[1];
    return time === undefined || Number(time) >= sinceEpochMs;
  });
}
