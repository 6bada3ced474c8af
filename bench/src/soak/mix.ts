/**
 * The steady mix of the soak run: what a day of real traffic does to both services, in one cycle
 * of operations started at a fixed rate. Sign-ins go through the pages as a browser does (a fresh
 * cookie jar: login form, redirect, code exchange), refreshes rotate the chains those sign-ins
 * made, introspections check opaque tokens, and the orders API is called with the API key and with
 * a signed-in user's bearer token.
 */
import { authorizeThroughPages, CookieJar, exchangeCode, postForm } from '../oauth-flow.js';
import { clientCredentialsBody } from '../workloads/client-credentials.js';
import type { OrdersTarget } from '../workloads/orders.js';
import type { AuthTarget } from '../workloads/types.js';

export type Operation = 'sign-in' | 'refresh' | 'introspect' | 'token' | 'orders-create' | 'orders-list';

/**
 * One cycle, started over and over: 28 operations, 1 sign-in (a password hash, the costliest by
 * far) and 6 refreshes among them, the rest token requests, introspections and orders.
 */
const HALF_CYCLE: readonly Operation[] = [
  'introspect',
  'refresh',
  'orders-create',
  'token',
  'introspect',
  'orders-list',
  'refresh',
  'introspect',
  'orders-create',
  'token',
  'refresh',
  'orders-list',
  'introspect',
];
export const MIX: readonly Operation[] = ['sign-in', ...HALF_CYCLE, 'token', ...HALF_CYCLE];

/** Which latency series an operation feeds: a single request to one server, or a whole sign-in. */
export type Answerer = 'auth' | 'orders' | 'sign-in';

export interface Outcome {
  answerer: Answerer;
  ok: boolean;
}

/** Refresh chains kept for rotation: older ones are left to expire, as abandoned sessions do. */
const MAX_CHAINS = 64;

export class SoakMix {
  private readonly chains: string[] = [];
  private userAccessToken: string | undefined;
  private opaqueToken: string | undefined;
  private tokenCount = 0;
  private customer = 0;

  constructor(
    private readonly auth: AuthTarget,
    private readonly orders: OrdersTarget,
  ) {}

  /** Runs one operation, falling back to a sign-in or a token request when it lacks material. */
  run(operation: Operation): Promise<Outcome> {
    switch (operation) {
      case 'sign-in':
        return this.signIn();
      case 'refresh':
        return this.chains.length === 0 ? this.signIn() : this.refresh();
      case 'introspect':
        return this.opaqueToken === undefined ? this.token('opaque') : this.introspect(this.opaqueToken);
      case 'token':
        return this.token(this.tokenCount++ % 2 === 0 ? 'jwt' : 'opaque');
      case 'orders-create':
        return this.createOrder();
      case 'orders-list':
        return this.userAccessToken === undefined ? this.signIn() : this.listOrders(this.userAccessToken);
    }
  }

  private async signIn(): Promise<Outcome> {
    const flow = this.auth.codeFlow;
    if (!flow) throw new Error('the auth server has no browser flow');
    const tokens = await exchangeCode(flow, await authorizeThroughPages(flow, new CookieJar()));
    this.keep(tokens.refresh_token, tokens.access_token);
    return { answerer: 'sign-in', ok: tokens.refresh_token !== undefined };
  }

  private async refresh(): Promise<Outcome> {
    const flow = this.auth.codeFlow;
    const chain = this.chains.shift();
    if (!flow || chain === undefined) return { answerer: 'auth', ok: false };
    const response = await postForm(
      flow.tokenEndpoint,
      { grant_type: 'refresh_token', refresh_token: chain },
      flow.client,
    );
    if (response.status !== 200) return { answerer: 'auth', ok: false };
    const body = JSON.parse(response.body) as { refresh_token?: string; access_token?: string };
    this.keep(body.refresh_token, body.access_token);
    return { answerer: 'auth', ok: body.refresh_token !== undefined };
  }

  private async token(kind: 'jwt' | 'opaque'): Promise<Outcome> {
    const resource = kind === 'jwt' ? this.auth.jwtResource : this.auth.opaqueResource;
    const response = await postForm(
      this.auth.tokenEndpoint,
      clientCredentialsBody(resource),
      this.auth.ccClient,
    );
    if (response.status !== 200) return { answerer: 'auth', ok: false };
    if (kind === 'opaque')
      this.opaqueToken = (JSON.parse(response.body) as { access_token: string }).access_token;
    return { answerer: 'auth', ok: true };
  }

  private async introspect(token: string): Promise<Outcome> {
    const endpoint = this.auth.introspectionEndpoint;
    if (!endpoint) return { answerer: 'auth', ok: false };
    const response = await postForm(
      endpoint,
      { token, token_type_hint: 'access_token' },
      this.auth.introspector,
    );
    return { answerer: 'auth', ok: response.status === 200 && response.body.includes('"active":true') };
  }

  private async createOrder(): Promise<Outcome> {
    // Distinct customers, as in orders-create: one shared address would serialise on its row.
    const email = `soak-${this.customer++ % 500}@example.com`;
    const response = await fetch(`${this.orders.baseUrl}/orders`, {
      method: 'POST',
      headers: {
        ...this.orders.createHeaders,
        'content-type': 'application/json',
        accept: 'application/json',
      },
      body: JSON.stringify({ email, quantity: 1 }),
      signal: AbortSignal.timeout(15_000),
    });
    await response.arrayBuffer();
    return { answerer: 'orders', ok: response.status === 201 };
  }

  private async listOrders(accessToken: string): Promise<Outcome> {
    const response = await fetch(this.orders.listUrl, {
      headers: { authorization: `Bearer ${accessToken}`, accept: 'application/json' },
      signal: AbortSignal.timeout(15_000),
    });
    await response.arrayBuffer();
    return { answerer: 'orders', ok: response.status === 200 };
  }

  private keep(refreshToken: string | undefined, accessToken: string | undefined): void {
    if (refreshToken !== undefined) this.chains.push(refreshToken);
    if (this.chains.length > MAX_CHAINS) this.chains.shift();
    if (accessToken !== undefined) this.userAccessToken = accessToken;
  }
}
