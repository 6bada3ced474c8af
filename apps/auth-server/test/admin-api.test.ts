import { once } from 'node:events';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Writable } from 'node:stream';
import { BACKCHANNEL_LOGOUT_EVENT, computeS256Challenge } from '@oidc-orders/oauth-core';
import { createLocalJWKSet, jwtVerify } from 'jose';
import * as client from 'openid-client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { SeedDocument } from '../src/schemas/seed.js';
import { hiddenFields, locationOf, TestBrowser } from './browser.js';
import { basicAuthorization, FORM, form, startTestApp, TEST_ISSUER, type TestApp } from './helpers/app.js';
import { ORDERS_API, TEST_SECRETS, testSeed } from './helpers/seed.js';

/**
 * The administration API against a listening server, with openid-client doing client credentials
 * as automation would: the scopes a seed client gets, read-only tokens refused changes, tokens for
 * another audience refused, DPoP-bound tokens only with their proof, problem details; and what
 * the changes do: a disabled user cannot sign in, ending a user's sessions tells the relying party
 * over the back channel, and each change is an audit event naming its actor.
 */

const ADMIN_API = `${TEST_ISSUER}/admin/api`;
const secretOf = (clientId: string) => `${clientId}-secret-0123456789abcdef`;
const RP_CALLBACK = 'https://rp.example.test/callback';
const PAGED_USERS = ['pager-1', 'pager-2', 'pager-3', 'pager-4', 'pager-5', 'pager-6', 'pager-7'];

/** A relying party's back-channel logout endpoint: keeps every logout token it is sent. */
class BackchannelReceiver {
  readonly logoutTokens: string[] = [];
  private readonly server: Server = createServer(async (request, response) => {
    const chunks: Buffer[] = [];
    for await (const chunk of request) chunks.push(chunk as Buffer);
    const token = new URLSearchParams(Buffer.concat(chunks).toString()).get('logout_token');
    if (token !== null) this.logoutTokens.push(token);
    response.writeHead(200, { 'cache-control': 'no-store' }).end();
  });
  url = '';

  async start() {
    this.server.listen(0, '127.0.0.1');
    await once(this.server, 'listening');
    this.url = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}/backchannel-logout`;
  }

  async stop() {
    this.server.closeAllConnections();
    await new Promise((resolve) => this.server.close(resolve));
  }
}

/** Every log line of the app, parsed: the audit events among them. */
class LogLines extends Writable {
  readonly lines: Array<Record<string, unknown>> = [];
  override _write(chunk: Buffer, _encoding: string, done: () => void) {
    for (const line of chunk.toString().split('\n').filter(Boolean)) this.lines.push(JSON.parse(line));
    done();
  }
  auditEvents(event: string) {
    return this.lines.filter((line) => line.audit === true && line.event === event);
  }
}

function adminSeed(backchannelLogoutUri: string): SeedDocument {
  const seed = testSeed();
  const automation = (clientId: string, scope: string, extra: Record<string, unknown> = {}) => ({
    client_id: clientId,
    client_secret: secretOf(clientId),
    grant_types: ['client_credentials' as const],
    scope,
    ...extra,
  });
  seed.clients = [
    ...(seed.clients ?? []),
    automation('automation', 'admin.read admin.write'),
    automation('auditor', 'admin.read'),
    automation('orders-and-admin', 'admin.read orders.read'),
    automation('bound', 'admin.read admin.write', { dpop_bound_access_tokens: true }),
    {
      client_id: 'rp',
      client_secret: secretOf('rp'),
      redirect_uris: [RP_CALLBACK],
      grant_types: ['authorization_code'],
      scope: 'openid profile',
      skip_consent: true,
      backchannel_logout_uri: backchannelLogoutUri,
    },
  ];
  seed.users = [
    ...(seed.users ?? []),
    ...PAGED_USERS.map((username) => ({
      sub: `u-${username}`,
      username,
      password: `${username}-password-0123`,
      email: `${username}@example.test`,
    })),
  ];
  return seed;
}

let app: TestApp;
let close: () => Promise<void>;
let localBase: string;
const receiver = new BackchannelReceiver();
const logs = new LogLines();

/** openid-client sees the issuer's https URLs; the requests go to the listening app. */
const rewritingFetch: client.CustomFetch = (url, options) => {
  const target = new URL(url);
  if (target.origin !== TEST_ISSUER) throw new Error(`unexpected request to ${target.origin}`);
  return fetch(new URL(`${target.pathname}${target.search}`, localBase), options as RequestInit);
};

beforeAll(async () => {
  await receiver.start();
  ({ app, close } = await startTestApp({
    seed: adminSeed(receiver.url),
    logger: { level: 'info', stream: logs },
  }));
  localBase = await app.listen({ port: 0, host: '127.0.0.1' });
});
afterAll(async () => {
  await close();
  await receiver.stop();
});

async function configFor(clientId: string): Promise<client.Configuration> {
  const config = await client.discovery(
    new URL(TEST_ISSUER),
    clientId,
    undefined,
    client.ClientSecretBasic(secretOf(clientId)),
    { [client.customFetch]: rewritingFetch },
  );
  config[client.customFetch] = rewritingFetch;
  return config;
}

/** A client credentials token (RFC 6749 §4.4) from openid-client. */
async function tokenFor(clientId: string, parameters: Record<string, string>) {
  return client.clientCredentialsGrant(await configFor(clientId), parameters);
}

/** The JSON members the tests read (an admin API answer is an object or a list of them). */
type Answer = Record<string, unknown> & { status?: string | number };
type Listed = Array<Record<string, unknown>>;

/** A request to the admin API at the listening app, with the token as a bearer token. */
async function callApi(path: string, accessToken: string | null, method = 'GET') {
  const response = await fetch(new URL(`/admin/api${path}`, localBase), {
    method,
    headers: accessToken === null ? {} : { authorization: `Bearer ${accessToken}` },
  });
  return Object.assign(response, {
    answer: async () => (await response.json()) as Answer,
    list: async () => (await response.json()) as Listed,
  });
}

/** Signs `username` in at the `rp` client in a browser, so they hold an SSO session and a grant. */
async function signInAtRelyingParty(username: string, password: string) {
  const browser = new TestBrowser(app);
  const verifier = `verifier-${'v'.repeat(43)}`;
  const query = new URLSearchParams({
    client_id: 'rp',
    redirect_uri: RP_CALLBACK,
    response_type: 'code',
    scope: 'openid profile',
    code_challenge: computeS256Challenge(verifier),
    code_challenge_method: 'S256',
    nonce: 'n-rp',
  });
  const loginPage = await browser.follow(await browser.get(`/authorize?${query}`));
  const afterLogin = await browser.post(browser.lastUrl, {
    ...hiddenFields(loginPage.body),
    username,
    password,
  });
  const code = afterLogin.headers.location ? locationOf(afterLogin).searchParams.get('code') : null;
  if (code === null) return { signedIn: false as const, status: afterLogin.statusCode };
  const tokens = await app.inject({
    method: 'POST',
    url: '/token',
    headers: { ...FORM, authorization: basicAuthorization('rp', secretOf('rp')) },
    payload: form({
      grant_type: 'authorization_code',
      code,
      redirect_uri: RP_CALLBACK,
      code_verifier: verifier,
    }),
  });
  expect(tokens.statusCode).toBe(200);
  return { signedIn: true as const, status: afterLogin.statusCode };
}

describe('who may call the admin API', () => {
  it('answers a request without a token 401 with a challenge, as problem details', async () => {
    const response = await callApi('/users', null);
    expect(response.status).toBe(401);
    expect(response.headers.get('www-authenticate')).toMatch(/^Bearer realm="admin-api"/);
    expect(response.headers.get('www-authenticate')).toContain('DPoP algs=');
    expect(response.headers.get('content-type')).toMatch(/^application\/problem\+json/);
    expect(await response.json()).toMatchObject({ status: 401, error: 'invalid_token', type: 'about:blank' });
  });

  it('issues admin scopes by client credentials to a seed client whose scope lists them, for the admin resource', async () => {
    const tokens = await tokenFor('automation', { scope: 'admin.read admin.write' });
    expect(tokens.scope).toBe('admin.read admin.write');
    const introspection = await app.inject({
      method: 'GET',
      url: '/admin/api/clients',
      headers: { authorization: `Bearer ${tokens.access_token}` },
    });
    expect(introspection.statusCode).toBe(200);
  });

  it('refuses admin scopes to a seed client whose scope does not list them', async () => {
    // `service` has orders and reports scopes only (test seed).
    const config = await client.discovery(
      new URL(TEST_ISSUER),
      'service',
      undefined,
      client.ClientSecretBasic(TEST_SECRETS.service),
      { [client.customFetch]: rewritingFetch },
    );
    config[client.customFetch] = rewritingFetch;
    const refused = await client
      .clientCredentialsGrant(config, { scope: 'admin.read' })
      .catch((error) => error);
    expect(refused).toBeInstanceOf(client.ResponseBodyError);
    expect(refused.error).toBe('invalid_scope');
  });

  it('lets a read-only token read and refuses it every change: 403 insufficient_scope naming admin.write', async () => {
    const { access_token: token } = await tokenFor('auditor', { scope: 'admin.read' });
    expect((await callApi('/users', token)).status).toBe(200);
    for (const [path, method] of [
      ['/users/u-pager-1/disable', 'POST'],
      ['/users/u-pager-1/sessions', 'DELETE'],
      ['/keys/rotate', 'POST'],
    ] as const) {
      const refused = await callApi(path, token, method);
      expect(refused.status, path).toBe(403);
      expect(refused.headers.get('www-authenticate'), path).toContain('error="insufficient_scope"');
      expect(refused.headers.get('www-authenticate'), path).toContain('scope="admin.write"');
      expect(await refused.json(), path).toMatchObject({ status: 403, error: 'insufficient_scope' });
    }
    const user = await callApi('/users/u-pager-1', token);
    expect((await user.answer()).status).toBe('enabled');
  });

  it('refuses a token of this server addressed to another resource (RFC 8707 audience)', async () => {
    const tokens = await tokenFor('orders-and-admin', { scope: 'orders.read', resource: ORDERS_API });
    const response = await callApi('/users', tokens.access_token);
    expect(response.status).toBe(401);
    expect(response.headers.get('www-authenticate')).toContain('error="invalid_token"');
    // The same client gets in with a token for the admin resource.
    const admin = await tokenFor('orders-and-admin', { scope: 'admin.read', resource: ADMIN_API });
    expect((await callApi('/users', admin.access_token)).status).toBe(200);
  });

  it('accepts a DPoP-bound token only with a proof of its key', async () => {
    const config = await configFor('bound');
    const DPoP = client.getDPoPHandle(config, await client.randomDPoPKeyPair());
    const tokens = await client.clientCredentialsGrant(config, { scope: 'admin.read' }, { DPoP });
    expect(tokens.token_type).toBe('dpop');
    const withProof = await client.fetchProtectedResource(
      config,
      tokens.access_token,
      new URL(`${ADMIN_API}/users?q=pager-1`),
      'GET',
      undefined,
      undefined,
      { DPoP },
    );
    expect(withProof.status).toBe(200);
    const found = (await withProof.json()) as Listed;
    expect(found.map((user) => user.sub)).toEqual(['u-pager-1']);
    // The same token as a bearer token, or in the DPoP scheme without a proof: refused.
    expect((await callApi('/users', tokens.access_token)).status).toBe(401);
    const withoutProof = await fetch(new URL('/admin/api/users', localBase), {
      headers: { authorization: `DPoP ${tokens.access_token}` },
    });
    expect(withoutProof.status).toBe(401);
    expect(withoutProof.headers.get('www-authenticate')).toMatch(/^DPoP /);
  });
});

describe('what the admin API does', () => {
  let token: string;
  beforeAll(async () => {
    ({ access_token: token } = await tokenFor('automation', { scope: 'admin.read admin.write' }));
  });

  it('searches users: a JSON list, the next page linked (RFC 8288 rel="next") until the last', async () => {
    const seen: string[] = [];
    let next: string | null = `${ADMIN_API}/users?q=PAGER&limit=3`;
    let pages = 0;
    while (next !== null) {
      const response = await callApi(next.slice(ADMIN_API.length), token);
      seen.push(...(await response.list()).map((user) => String(user.username)));
      next = /^<([^>]+)>; rel="next"$/.exec(response.headers.get('link') ?? '')?.[1] ?? null;
      pages++;
    }
    expect(pages).toBe(3);
    expect(seen).toEqual(PAGED_USERS);
    const [first] = await (await callApi('/users?q=pager-3%40example', token)).list();
    expect(first).toEqual({
      sub: 'u-pager-3',
      username: 'pager-3',
      name: null,
      email: 'pager-3@example.test',
      status: 'enabled',
      source: 'seed',
    });
  });

  it('answers an unknown user 404 as problem details', async () => {
    const response = await callApi('/users/u-nobody', token);
    expect(response.status).toBe(404);
    expect(response.headers.get('content-type')).toMatch(/^application\/problem\+json/);
    expect(await response.json()).toMatchObject({ status: 404, error: 'not_found' });
  });

  it('disables a user, who then cannot sign in, and records who did it', async () => {
    expect(await signInAtRelyingParty('pager-2', 'pager-2-password-0123')).toMatchObject({ signedIn: true });
    const disabled = await callApi('/users/u-pager-2/disable', token, 'POST');
    expect(disabled.status).toBe(200);
    expect(await disabled.json()).toMatchObject({ sub: 'u-pager-2', changed: true, sessions: 1 });
    expect(await signInAtRelyingParty('pager-2', 'pager-2-password-0123')).toMatchObject({ signedIn: false });
    expect((await (await callApi('/users/u-pager-2', token)).answer()).status).toBe('disabled');
    expect(logs.auditEvents('auth.admin.user_disabled')).toEqual([
      expect.objectContaining({ sub: 'u-pager-2', actor: 'automation' }),
    ]);

    // The stored audit events, newest first, name the actor too.
    const stored = await (await callApi('/audit?sub=u-pager-2', token)).list();
    expect(stored[0]).toMatchObject({
      event: 'auth.admin.user_disabled',
      sub: 'u-pager-2',
      actor: 'automation',
      time: expect.any(Number),
    });
    expect(stored.map((entry) => entry.event)).toContain('auth.login.succeeded');

    expect((await callApi('/users/u-pager-2/enable', token, 'POST')).status).toBe(200);
    expect(await signInAtRelyingParty('pager-2', 'pager-2-password-0123')).toMatchObject({ signedIn: true });
    expect(logs.auditEvents('auth.admin.user_enabled')).toEqual([
      expect.objectContaining({ sub: 'u-pager-2', actor: 'automation' }),
    ]);
  });

  it("ends a user's sessions and the relying party receives a back-channel logout token", async () => {
    await signInAtRelyingParty('alice', TEST_SECRETS.alicePassword);
    const sessions = await (await callApi('/users/u-alice/sessions', token)).list();
    expect(sessions).toHaveLength(1);
    expect(sessions[0]).toMatchObject({ sub: 'u-alice', clients: ['rp'] });

    const before = receiver.logoutTokens.length;
    const ended = await callApi('/users/u-alice/sessions', token, 'DELETE');
    expect(ended.status).toBe(200);
    expect(await ended.json()).toMatchObject({ sub: 'u-alice', sessions: 1 });
    await app.sessionLogout.backchannel.idle();

    const [logoutToken] = receiver.logoutTokens.slice(before);
    const jwks = createLocalJWKSet((await app.inject({ method: 'GET', url: '/jwks' })).json());
    const { payload } = await jwtVerify(logoutToken ?? '', jwks, { issuer: TEST_ISSUER, audience: 'rp' });
    expect(payload).toMatchObject({
      sub: 'u-alice',
      sid: sessions[0]?.sid,
      events: { [BACKCHANNEL_LOGOUT_EVENT]: {} },
    });
    expect(await (await callApi('/users/u-alice/sessions', token)).list()).toEqual([]);
    expect(logs.auditEvents('auth.admin.sessions_ended')).toEqual([
      expect.objectContaining({ sub: 'u-alice', actor: 'automation', count: 1 }),
    ]);
  });

  it('ends one session and revokes one grant by id, rotates keys, resets factors; each change names its actor', async () => {
    await signInAtRelyingParty('pager-4', 'pager-4-password-0123');
    const [session] = await (await callApi('/users/u-pager-4/sessions', token)).list();
    const ended = await callApi(`/sessions/${session?.sid}`, token, 'DELETE');
    expect(await ended.answer()).toMatchObject({ sid: session?.sid, sub: 'u-pager-4', grants: 1 });
    expect(await (await callApi('/users/u-pager-4/sessions', token)).list()).toEqual([]);
    expect((await callApi(`/sessions/${session?.sid}`, token, 'DELETE')).status).toBe(404);

    await signInAtRelyingParty('pager-5', 'pager-5-password-0123');
    const [grant] = await (await callApi('/users/u-pager-5/grants', token)).list();
    expect(grant).toMatchObject({ clientId: 'rp', sub: 'u-pager-5' });
    expect((await callApi(`/grants/${grant?.grantId}`, token, 'DELETE')).status).toBe(200);
    expect(await (await callApi('/users/u-pager-5/grants', token)).list()).toEqual([]);

    const rotated = await (await callApi('/keys/rotate', token, 'POST')).answer();
    const added = (rotated.added as Array<{ kid: string }>).map((key) => key.kid);
    const states = await (await callApi('/keys', token)).list();
    expect(states.filter((key) => added.includes(String(key.kid))).map((key) => key.state)).toEqual([
      'next',
      'next',
    ]);

    expect(await (await callApi('/users/u-pager-6/reset-mfa', token, 'POST')).answer()).toMatchObject({
      sub: 'u-pager-6',
      authenticatorApps: 0,
    });
    // Mail is off in this server: the reset link cannot be sent, and the answer says why.
    const mail = await callApi('/users/u-pager-6/reset-mail', token, 'POST');
    expect(mail.status).toBe(409);
    expect(await mail.answer()).toMatchObject({ error: 'mail_off' });

    for (const [event, sub] of [
      ['auth.admin.session_revoked', 'u-pager-4'],
      ['auth.admin.grant_revoked', 'u-pager-5'],
      ['auth.admin.mfa_reset', 'u-pager-6'],
    ]) {
      expect(logs.auditEvents(event ?? ''), event).toEqual([
        expect.objectContaining({ sub, actor: 'automation' }),
      ]);
    }
    expect(logs.auditEvents('auth.keys.rotated')).toEqual([
      expect.objectContaining({ actor: 'automation', added }),
    ]);
  });

  it('filters the stored audit events by event, client and time, newest first, paged by Link', async () => {
    const byEvent = await (await callApi('/audit?event=auth.admin.user_enabled', token)).list();
    expect(byEvent.map((entry) => [entry.event, entry.sub])).toEqual([
      ['auth.admin.user_enabled', 'u-pager-2'],
    ]);
    const first = await callApi('/audit?sub=u-pager-2&limit=1', token);
    const [newest] = await first.list();
    const next = /^<([^>]+)>; rel="next"$/.exec(first.headers.get('link') ?? '')?.[1] ?? '';
    expect(next).toContain('sub=u-pager-2');
    const [older] = await (await callApi(next.slice(ADMIN_API.length), token)).list();
    expect(Number(older?.time)).toBeLessThanOrEqual(Number(newest?.time));
    expect(older).not.toEqual(newest);
    const later = Number(newest?.time) + 1;
    expect(await (await callApi(`/audit?sub=u-pager-2&since=${later}`, token)).list()).toEqual([]);
    const byClient = await (await callApi('/audit?client_id=rp&limit=500', token)).list();
    expect(byClient.length).toBeGreaterThan(0);
    expect(byClient.every((entry) => entry.client_id === 'rp')).toBe(true);
    const badCursor = await callApi('/audit?cursor=bm90LWEtY3Vyc29y', token);
    expect(badCursor.status).toBe(400);
    expect(await badCursor.answer()).toMatchObject({ error: 'invalid_cursor' });
  });

  it('lists clients and resources read-only with live counts, and signing keys with their state', async () => {
    const clients = await (await callApi('/clients', token)).list();
    expect(clients.find((entry) => entry.clientId === 'rp')).toMatchObject({
      source: 'seed',
      status: 'enabled',
      backchannelLogoutUri: receiver.url,
    });
    expect(clients.find((entry) => entry.clientId === 'automation')?.lastUsedAt).toEqual(expect.any(Number));
    const resources = await (await callApi('/resources', token)).list();
    expect(resources.find((entry) => entry.id === ADMIN_API)).toMatchObject({
      source: 'built-in',
      scopes: ['admin.read', 'admin.write'],
    });
    const keys = await (await callApi('/keys', token)).list();
    expect(keys.some((key) => key.state === 'active')).toBe(true);
  });

  it('is described in the OpenAPI document under the admin tag', async () => {
    const document = (await app.inject({ method: 'GET', url: '/openapi.json' })).json();
    expect(document.paths['/admin/api/users'].get.tags).toEqual(['admin']);
    expect(document.paths['/admin/api/users/{sub}/sessions'].delete.summary).toMatch(/back-channel/);
  });
});
