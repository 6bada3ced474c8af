import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import {
  type AuthServer,
  type OtlpReceiver,
  type ReceivedSpan,
  startAuthServer,
  startOtlpReceiver,
} from '@oidc-orders/service-kit/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { directoryFixtureFor, type E2eDirectory } from '../src/directory.js';
import { HttpBrowser } from '../src/http-browser.js';
import {
  basicAuthorization,
  type Instances,
  startInstances,
  WEB_TEST_REDIRECT_URI,
} from '../src/instances.js';
import { createFreshDatabase, type FreshDatabase } from '../src/postgres.js';
import { findFreePort, repositoryRoot, startNodeProcess, waitUntilReady } from '../src/processes.js';
import { authorizationCode, ordersSignIn, redeemCode } from '../src/protocol-flows.js';

/**
 * Tracing across both services (CONTRACT.md "Tracing"): one auth-server and one orders process on
 * PostgreSQL, both exporting to a real OTLP/HTTP receiver (JSON). A BFF request carrying a W3C
 * `traceparent` must produce orders spans and auth-server spans in that trace, each auth-server
 * request span a child of the orders span that called it; and no exported string may hold any
 * secret, token, code or password the test used.
 */

const SERVER = 2;
const CLIENT = 3;

let receiver: OtlpReceiver;
let authDatabase: FreshDatabase;
let ordersDatabase: FreshDatabase;
let stack: Instances;
const browser = new HttpBrowser();
/** Every secret value the flows handled or configured. */
const secretsUsed: string[] = [];
/** Interactions of the sign-ins before a test's own (each test looks for its new one). */
const interactionsSeenBefore = new Set<string>();

beforeAll(async () => {
  receiver = await startOtlpReceiver();
  authDatabase = await createFreshDatabase('e2e_trace_auth');
  ordersDatabase = await createFreshDatabase('e2e_trace_orders');
  const tracing = {
    OTEL_EXPORTER_OTLP_ENDPOINT: receiver.endpoint,
    // Batches leave every 200 ms instead of every 5 s: the test waits less.
    OTEL_BSP_SCHEDULE_DELAY: '200',
  };
  stack = await startInstances({
    authDatabaseUrl: authDatabase.url,
    ordersDatabaseUrl: ordersDatabase.url,
    authCount: 1,
    ordersCount: 1,
    // Short, so the traced BFF request has to refresh the access token at the auth server.
    accessTokenTtl: 6,
    authEnv: tracing,
    ordersEnv: { ...tracing, OTEL_SERVICE_NAME: 'orders-under-test' },
  });
}, 180_000);
afterAll(async () => {
  await stack?.stop();
  await receiver?.close();
  await authDatabase?.drop();
  await ordersDatabase?.drop();
});

const auth = () => stack.authUrls[0]!;
const orders = () => stack.ordersUrls[0]!;

function traceparent(): { header: string; traceId: string; parentId: string } {
  const traceId = randomBytes(16).toString('hex');
  const parentId = randomBytes(8).toString('hex');
  return { header: `00-${traceId}-${parentId}-01`, traceId, parentId };
}

/** The spans of one trace, once they stop arriving (batches are sent every 200 ms). */
async function spansOf(traceId: string, until: (spans: ReceivedSpan[]) => boolean): Promise<ReceivedSpan[]> {
  await expect
    .poll(() => until(receiver.spans.filter((span) => span.traceId === traceId)), { timeout: 15_000 })
    .toBe(true);
  return receiver.spans.filter((span) => span.traceId === traceId);
}

describe('tracing with OTEL_EXPORTER_OTLP_ENDPOINT set', () => {
  it('a BFF request with a traceparent is one trace across orders and the auth server, parent-linked', async () => {
    const { callback, fields } = await ordersSignIn(browser, {
      startAt: orders(),
      authAt: auth(),
      finishAt: orders(),
      user: stack.user,
    });
    expect(callback.status).toBe(303);
    secretsUsed.push(String(fields.code), String(fields.state));

    // Past half the access token's life: the BFF refreshes it at the auth server inside this request.
    await new Promise((resolve) => setTimeout(resolve, 3500));
    const parent = traceparent();
    const list = await fetch(`${orders()}/bff/orders?note=${randomBytes(6).toString('hex')}`, {
      headers: {
        traceparent: parent.header,
        'x-csrf': '1',
        cookie: `__Host-orders-session=${browser.cookie('__Host-orders-session')}`,
      },
    });
    expect(list.status).toBe(200);

    const isBffSpan = (span: ReceivedSpan) =>
      span.service === 'orders-under-test' && span.kind === SERVER && span.parentSpanId === parent.parentId;
    const isTokenSpan = (span: ReceivedSpan) => span.service === 'auth-server' && span.name === 'POST /token';
    // The BFF's server span ends last: once it and the auth server's token span are in, all are.
    const spans = await spansOf(
      parent.traceId,
      (received) => received.some(isBffSpan) && received.some(isTokenSpan),
    );

    // orders continues the caller's trace: its server span's parent is the caller's span, and the
    // span is named by the route template, not by the URL (which carried a query).
    const bff = spans.find(isBffSpan);
    expect(bff?.name).toBe('GET /bff/orders');
    expect(bff?.attributes['http.route']).toBe('/bff/orders');
    expect(bff?.attributes['http.response.status_code'] ?? bff?.attributes['http.status_code']).toBe(200);

    // The auth server's span for the refresh is a child of the orders client span that called it.
    const token = spans.find(isTokenSpan);
    expect(token?.kind).toBe(SERVER);
    const caller = spans.find((span) => span.spanId === token?.parentSpanId);
    expect(caller).toMatchObject({ service: 'orders-under-test', kind: CLIENT });
    // The token request names its client and grant where the server knows them.
    const tokenAttributes = spans
      .filter((span) => span.service === 'auth-server')
      .map((span) => span.attributes);
    expect(tokenAttributes).toContainEqual(
      expect.objectContaining({ 'oauth.client_id': 'orders-web', 'oauth.grant_type': 'refresh_token' }),
    );
    // Database statements with their text, `$n` placeholders and never a value. The refresh
    // token's read is the coalesced one (all reads of one event-loop turn in one `= any($1)`
    // statement, unnamed so that PostgreSQL plans each batch); a named prepared statement is
    // named in its span.
    const statements = spans.filter(
      (span) => span.service === 'auth-server' && span.attributes['db.system.name'] === 'postgresql',
    );
    const refreshLookup = statements.find((span) =>
      /from "refresh_tokens".*"token_hash" = any\(\$1::text\[\]\)/is.test(
        String(span.attributes['db.query.text']),
      ),
    );
    expect(refreshLookup?.name).toMatch(/^pg\.query/);
    const named = statements.find((span) => {
      const plan = span.attributes['db.postgresql.plan'];
      return typeof plan === 'string' && plan !== '';
    });
    expect(named?.name).toMatch(new RegExp(`^pg\\.query:${named?.attributes['db.postgresql.plan']} `));
    expect(named?.attributes['db.query.text']).toMatch(/\$1/);
  });

  it('one browser sign-in is one story: every auth-server span of its requests carries its interaction.id', async () => {
    for (const span of receiver.spans) interactionsSeenBefore.add(String(span.attributes['interaction.id']));
    const signIn = new HttpBrowser();
    const { callback } = await ordersSignIn(signIn, {
      startAt: orders(),
      authAt: auth(),
      finishAt: orders(),
      user: stack.user,
    });
    expect(callback.status).toBe(303);
    secretsUsed.push(...signIn.cookieValuesSeen);
    // The login form's POST names its interaction in its path, as the person's address bar does.
    const loginPost = () =>
      receiver.spans.find(
        (span) =>
          span.service === 'auth-server' &&
          span.kind === SERVER &&
          span.name === 'POST /interaction/:id/login' &&
          !interactionsSeenBefore.has(String(span.attributes['interaction.id'])),
      );
    await expect.poll(() => loginPost()?.attributes['interaction.id']).toMatch(/^[\w-]{8,}$/);
    const post = loginPost()!;
    const interactionId = String(post.attributes['interaction.id']);
    interactionsSeenBefore.add(interactionId);
    expect(String(post.attributes['url.path'] ?? post.attributes['http.target'])).toContain(
      `/interaction/${interactionId}/`,
    );

    // One search finds the whole path: the authorization request that started it, the login
    // page, its POST; each of them a trace of its own, every span of which carries the id.
    const story = () => receiver.spans.filter((span) => span.attributes['interaction.id'] === interactionId);
    const requestsOf = () =>
      story()
        .filter((span) => span.kind === SERVER)
        .map((span) => span.name);
    await expect
      .poll(requestsOf)
      .toEqual(
        expect.arrayContaining([
          'GET /authorize',
          'GET /interaction/:id/login',
          'POST /interaction/:id/login',
        ]),
      );
    const traces = new Set(story().map((span) => span.traceId));
    expect(traces.size).toBeGreaterThanOrEqual(3);
    const authServerSpansOfThoseTraces = receiver.spans.filter(
      (span) => span.service === 'auth-server' && traces.has(span.traceId),
    );
    expect(
      authServerSpansOfThoseTraces.filter((span) => span.attributes['interaction.id'] !== interactionId),
    ).toEqual([]);
    // Statements included, those run before the request knew its interaction (the client lookup
    // of /authorize) as well.
    expect(
      story().filter((span) => span.attributes['db.system.name'] === 'postgresql').length,
    ).toBeGreaterThan(2);
  });

  it.each([
    ['auth-server', auth],
    ['orders', orders],
  ])('a %s error page shows the trace id of the request', async (_app, baseUrl) => {
    const parent = traceparent();
    const page = await fetch(`${baseUrl()}/no-such-page`, {
      headers: { traceparent: parent.header, accept: 'text/html' },
    });
    expect(page.status).toBe(404);
    expect(await page.text()).toContain(`<code data-trace-id>${parent.traceId}</code>`);
  });

  it.each([
    ['auth-server', () => stack.auth[0]!, () => `${auth()}/token`],
    ['orders', () => stack.orders[0]!, () => `${orders()}/orders`],
  ])(
    '%s log lines carry trace_id and span_id of the request they were written for',
    async (_app, server, url) => {
      // A refused request: it is logged (auth server: "request rejected"; orders: the 403 of a
      // missing API key), besides Fastify's access lines at LOG_LEVEL=info.
      const parent = traceparent();
      const refused = await fetch(url(), {
        method: 'POST',
        headers: { traceparent: parent.header, 'content-type': 'application/x-www-form-urlencoded' },
        body: 'grant_type=client_credentials&client_id=nobody&client_secret=wrong',
      });
      expect(refused.status).toBeGreaterThanOrEqual(400);
      const linesOfTrace = () =>
        server()
          .output()
          .split('\n')
          .filter((line) => line.includes(parent.traceId))
          .map((line) => JSON.parse(line) as Record<string, unknown>);
      await expect.poll(() => linesOfTrace().length).toBeGreaterThan(0);
      for (const line of linesOfTrace()) {
        expect(line.trace_id).toBe(parent.traceId);
        expect(line.span_id).toMatch(/^[0-9a-f]{16}$/);
      }
    },
  );

  it('a refused token request is traced with its outcome: status and RFC 6749 error code', async () => {
    const parent = traceparent();
    const refused = await fetch(`${auth()}/token`, {
      method: 'POST',
      headers: { traceparent: parent.header, 'content-type': 'application/x-www-form-urlencoded' },
      body: 'grant_type=client_credentials&client_id=nobody&client_secret=wrong',
    });
    expect(refused.status).toBe(401);
    const spans = await spansOf(parent.traceId, (received) => received.some((span) => span.kind === SERVER));
    expect(spans.find((span) => span.kind === SERVER)?.attributes['http.response.status_code']).toBe(401);
    expect(spans.map((span) => span.attributes)).toContainEqual(
      expect.objectContaining({ 'oauth.grant_type': 'client_credentials', 'oauth.error': 'invalid_client' }),
    );
  });

  it('no exported span holds a secret, token, code or password of the test', async () => {
    // Tokens issued straight to a client, with a traceparent, so their requests are traced too.
    const code = await authorizationCode(new HttpBrowser(), {
      authorizeAt: auth(),
      clientId: 'web-test',
      redirectUri: WEB_TEST_REDIRECT_URI,
      scope: 'openid offline_access orders.read',
      user: stack.user,
    });
    const tokens = await redeemCode(
      auth(),
      { id: 'web-test', secret: stack.secrets.webTestClientSecret },
      code,
      WEB_TEST_REDIRECT_URI,
    );
    expect(tokens.status).toBe(200);
    secretsUsed.push(code.code, code.verifier);
    for (const name of ['access_token', 'refresh_token', 'id_token'])
      secretsUsed.push(String(tokens.json[name]));
    const introspection = await fetch(`${auth()}/introspect`, {
      method: 'POST',
      headers: {
        authorization: basicAuthorization('orders-api', stack.secrets.ordersApiSecret),
        'content-type': 'application/x-www-form-urlencoded',
        traceparent: traceparent().header,
      },
      body: new URLSearchParams({ token: String(tokens.json.access_token) }),
    });
    expect(await introspection.json()).toMatchObject({ active: true });
    secretsUsed.push(...stack.secretValues(), ...browser.cookieValuesSeen);

    // Wait for the last request's spans, then search every string of every span.
    await expect
      .poll(() => receiver.spans.some((span) => span.attributes['http.route'] === '/introspect'))
      .toBe(true);
    expect(receiver.rejected).toEqual([]);
    const exported = receiver.spans.flatMap((span) => span.strings);
    expect(exported.length).toBeGreaterThan(100);
    const leaks = secretsUsed
      .filter((secret) => secret.length >= 8)
      .filter((secret) => exported.some((value) => value.includes(secret)));
    expect(leaks).toEqual([]);
    // Query strings are exported with their values replaced (the sign-in's /authorize carried state and nonce).
    const authorize = receiver.spans.find((span) => span.attributes['http.route'] === '/authorize');
    expect(authorize).toBeDefined();
    expect(authorize?.strings.join(' ')).not.toMatch(/state=(?!\[redacted\])/);
  });

  it('the bundled server (`pnpm start`) finds the OpenTelemetry packages and exports its spans', async () => {
    // The bundle leaves the OpenTelemetry packages to node_modules (scripts/bundle-server.mjs
    // KEPT_EXTERNAL) and imports them only when tracing starts: this finds them from dist/.
    execFileSync(process.execPath, ['scripts/bundle-server.mjs', 'apps/auth-server'], {
      cwd: repositoryRoot,
    });
    const port = await findFreePort();
    const bundled = startNodeProcess('auth-server (bundle)', 'apps/auth-server', 'dist/server.js', {
      HOST: '127.0.0.1',
      PORT: String(port),
      DATABASE_URL: 'pglite://memory',
      NODE_ENV: 'development',
      SHUTDOWN_PAUSE_MS: '0',
      OTEL_EXPORTER_OTLP_ENDPOINT: receiver.endpoint,
      OTEL_BSP_SCHEDULE_DELAY: '200',
      OTEL_SERVICE_NAME: 'auth-server-bundle',
    });
    try {
      await waitUntilReady(bundled, `http://127.0.0.1:${port}/health/ready`);
      const parent = traceparent();
      const discovery = await fetch(`http://127.0.0.1:${port}/.well-known/openid-configuration`, {
        headers: { traceparent: parent.header },
      });
      expect(discovery.status).toBe(200);
      const spans = await spansOf(parent.traceId, (received) => received.some((one) => one.kind === SERVER));
      expect(spans.find((one) => one.kind === SERVER)).toMatchObject({
        service: 'auth-server-bundle',
        name: 'GET /.well-known/openid-configuration',
      });
    } finally {
      await bundled.stop();
    }
  });
});

describe('tracing a directory sign-in on the embedded database (as under pnpm dev)', () => {
  let directory: E2eDirectory;
  let server: AuthServer;
  const REDIRECT_URI = 'http://127.0.0.1:9/callback';

  beforeAll(async () => {
    directory = await directoryFixtureFor();
    server = await startAuthServer({
      // PGlite whatever TEST_DATABASE_URL says: its statements are what this checks.
      database: { url: 'pglite://memory' },
      seed: {
        clients: [
          {
            client_id: 'trace-directory',
            redirect_uris: [REDIRECT_URI],
            grant_types: ['authorization_code'],
            scope: 'openid profile',
            skip_consent: true,
          },
        ],
      },
      env: {
        ...directory.serverEnvironment,
        OTEL_EXPORTER_OTLP_ENDPOINT: receiver.endpoint,
        OTEL_BSP_SCHEDULE_DELAY: '200',
        OTEL_SERVICE_NAME: 'auth-server-directory',
      },
    });
  }, 180_000);
  afterAll(async () => {
    await server?.stop();
    await directory?.stop();
  });

  it('the login POST shows its LDAP binds and searches and its PGlite statements, all under its interaction.id, with no password or DN', async () => {
    const person = await directory.addUser('tracy');
    const { code, verifier } = await authorizationCode(new HttpBrowser(), {
      authorizeAt: server.url,
      clientId: 'trace-directory',
      redirectUri: REDIRECT_URI,
      scope: 'openid profile',
      user: { username: person.uid, password: person.password },
    });
    const ofServer = () => receiver.spans.filter((span) => span.service === 'auth-server-directory');
    const loginPost = () =>
      ofServer().find((span) => span.kind === SERVER && span.name === 'POST /interaction/:id/login');
    await expect.poll(() => loginPost()?.attributes['interaction.id']).toBeTypeOf('string');
    const interactionId = loginPost()!.attributes['interaction.id'];
    const inLogin = ofServer().filter((span) => span.traceId === loginPost()!.traceId);

    const ldap = inLogin.filter((span) => span.name.startsWith('ldap.'));
    expect(ldap).toContainEqual(
      expect.objectContaining({
        name: 'ldap.bind',
        kind: CLIENT,
        attributes: expect.objectContaining({
          'ldap.bind.account': 'service',
          'server.port': directory.slapd.url.split(':').map(Number).at(-1),
        }),
      }),
    );
    expect(ldap).toContainEqual(
      expect.objectContaining({
        name: 'ldap.bind',
        attributes: expect.objectContaining({ 'ldap.bind.account': 'user' }),
      }),
    );
    expect(ldap).toContainEqual(
      expect.objectContaining({
        name: 'ldap.search',
        attributes: expect.objectContaining({ 'ldap.search.scope': 'sub', 'ldap.search.entries': 1 }),
      }),
    );
    const statements = inLogin.filter((span) => span.attributes['db.client.driver'] === 'pglite');
    expect(statements.length).toBeGreaterThan(0);
    for (const statement of statements) {
      expect(statement).toMatchObject({ kind: CLIENT, attributes: { 'db.system.name': 'postgresql' } });
      expect(statement.name).toMatch(/^pglite\.query:[A-Z]+$/);
    }
    expect(statements.some((span) => /\$1/.test(String(span.attributes['db.query.text'])))).toBe(true);
    // Every span of the request, the LDAP and database ones included, names the interaction.
    expect(inLogin.filter((span) => span.attributes['interaction.id'] !== interactionId)).toEqual([]);

    // Neither the password nor the person's DN (it names the username) is in any span.
    const strings = ofServer().flatMap((span) => span.strings);
    for (const secret of [
      person.password,
      directory.slapd.servicePassword,
      directory.slapd.personDn(person.uid),
      code,
      verifier,
    ]) {
      expect(strings.filter((value) => value.includes(secret))).toEqual([]);
    }
  });
});
