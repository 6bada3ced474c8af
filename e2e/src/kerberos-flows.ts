/**
 * The browser step of a Kerberos sign-in done by curl (`--negotiate`, Debian's curl is built with
 * GSS-API/SPNEGO), with a cookie jar per "browser", plus the auth server started with a keytab.
 */

import { execFile } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { createServer } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  createTestDatabase,
  type KerberosRealm,
  startAuthServer,
  startKerberosRealm,
  type UserPrincipal,
} from '@oidc-orders/service-kit/testing';
import { expect } from 'vitest';
import { basicAuthorization, postForm } from './instances.js';
import { findFreePort, type ManagedProcess } from './processes.js';

export interface CurlResponse {
  status: number;
  headers: Map<string, string[]>;
  body: string;
  /** Every request header curl sent (from `-v`), e.g. the `Authorization: Negotiate` it made. */
  sentAuthorization: string[];
}

let browsers = 0;

/** A curl "browser": one cookie jar, one credential cache (KRB5CCNAME). */
export class CurlBrowser {
  private requests = 0;
  private readonly jar: string;
  constructor(
    directory: string,
    private readonly realm: KerberosRealm,
    readonly ccache: string,
  ) {
    this.jar = join(directory, `jar-${++browsers}`);
  }

  /** One request (no redirects followed): a GET, or a POST of `form`; `negotiate` lets curl answer a Negotiate challenge. */
  async get(
    url: string,
    options: { negotiate?: boolean; authorization?: string; form?: Record<string, string> } = {},
  ): Promise<CurlResponse> {
    const id = ++this.requests;
    const headerFile = `${this.jar}-h-${id}`;
    const bodyFile = `${this.jar}-b-${id}`;
    const args = ['-sS', '-v', '-b', this.jar, '-c', this.jar, '-D', headerFile, '-o', bodyFile, url];
    if (options.negotiate) args.unshift('--negotiate', '-u', ':');
    if (options.authorization) args.unshift('-H', `Authorization: ${options.authorization}`);
    for (const [name, value] of Object.entries(options.form ?? {}))
      args.unshift('--data-urlencode', `${name}=${value}`);
    // Asynchronous: the server answering may live in this process (captureNegotiateToken).
    const result = await new Promise<{ stderr: string }>((done, fail) =>
      execFile(
        'curl',
        ['--max-time', '30', ...args],
        { env: { PATH: process.env.PATH ?? '', ...this.realm.env, KRB5CCNAME: this.ccache } },
        (error, _stdout, stderr) =>
          error ? fail(new Error(`curl failed: ${error.message} ${stderr}`)) : done({ stderr }),
      ),
    );
    const blocks = (await readFile(headerFile, 'utf8'))
      .split(/\r?\n\r?\n/)
      .filter((block) => block.trim() !== '');
    const last = (blocks.at(-1) ?? '').split(/\r?\n/);
    const status = Number(/^HTTP\/[\d.]+ (\d{3})/.exec(last[0] ?? '')?.[1]);
    const headers = new Map<string, string[]>();
    for (const line of last.slice(1)) {
      const colon = line.indexOf(':');
      if (colon < 0) continue;
      const name = line.slice(0, colon).trim().toLowerCase();
      headers.set(name, [...(headers.get(name) ?? []), line.slice(colon + 1).trim()]);
    }
    const sentAuthorization = result.stderr
      .split('\n')
      .filter((line) => /^> Authorization: /i.test(line))
      .map((line) => line.replace(/^> Authorization: /i, '').trim());
    return { status, headers, body: await readFile(bodyFile, 'utf8'), sentAuthorization };
  }
}

export const header = (response: CurlResponse, name: string) => response.headers.get(name)?.[0];

/** The value of the hidden CSRF field of a page's form. */
export const csrfOf = (page: string) => /name="csrf" value="([^"]+)"/.exec(page)?.[1] ?? '';

/** The `href` of the login page's `data-sign-in="kerberos"` element, absolute. */
export function kerberosLinkOf(loginPage: string, base: string): string | null {
  const element = /<a [^>]*data-sign-in="kerberos"[^>]*>/.exec(loginPage)?.[0];
  const href = element && /href="([^"]+)"/.exec(element)?.[1];
  return href ? new URL(href.replaceAll('&amp;', '&'), base).href : null;
}

export function pkcePair() {
  const verifier = randomBytes(32).toString('base64url');
  return { verifier, challenge: createHash('sha256').update(verifier).digest('base64url') };
}

/** The payload of a JWS (the test reads what the server signed; the client libraries verify elsewhere). */
export function jwtPayload(token: string): Record<string, unknown> {
  return JSON.parse(Buffer.from(token.split('.')[1] ?? '', 'base64url').toString('utf8'));
}

/**
 * A server that answers every request `401 WWW-Authenticate: Negotiate` and keeps the tokens it
 * is sent: how a test gets a real SPNEGO token for HTTP/localhost without handing it to the auth
 * server (to replay it, or to present it after the ticket expired).
 */
export async function captureNegotiateToken(browser: CurlBrowser): Promise<string> {
  const tokens: string[] = [];
  const server = createServer((request, response) => {
    const authorization = request.headers.authorization;
    if (authorization?.startsWith('Negotiate ')) tokens.push(authorization.slice('Negotiate '.length));
    response.writeHead(401, { 'www-authenticate': 'Negotiate' }).end();
  });
  const port = await findFreePort();
  await new Promise<void>((done) => server.listen(port, '127.0.0.1', done));
  try {
    await browser.get(`http://localhost:${port}/`, { negotiate: true });
  } finally {
    await new Promise((done) => server.close(done));
  }
  const token = tokens[0];
  if (token === undefined) throw new Error('curl sent no Negotiate token (no ticket?)');
  return token;
}

export interface KerberosAuthServer {
  issuer: string;
  process: ManagedProcess;
  stop(): Promise<void>;
}

/** The auth server as `pnpm --filter auth-server start:tsx` runs it, with KRB5_KTNAME set. */
export async function startKerberosAuthServer(options: {
  realm: KerberosRealm;
  seed: unknown;
  databaseUrl: string;
  env?: Record<string, string>;
}): Promise<KerberosAuthServer> {
  const server = await startAuthServer({
    seed: options.seed,
    hostname: 'localhost',
    database: { url: options.databaseUrl },
    env: { ...options.realm.env, LOG_LEVEL: 'info', KRB5_KTNAME: options.realm.keytab, ...options.env },
  });
  return { issuer: server.issuer, process: server.process(), stop: () => server.stop() };
}

// ─── The scenario both Kerberos suites run ───────────────────────────────────────────────────────

export const REDIRECT_URI = 'http://127.0.0.1:9/callback';
export const DEVICE_GRANT = 'urn:ietf:params:oauth:grant-type:device_code';
/** RFC 8176 §2 `wia` (Windows integrated authentication): README "Kerberos", "amr and acr". */
export const KERBEROS_AMR = 'wia';
/** One factor (README "Kerberos", "amr and acr"): the single-factor level of acr_values_supported. */
export const KERBEROS_ACR = 'urn:oidc-orders:acr:password';

const randomSecret = () => randomBytes(18).toString('base64url');

export interface KerberosScenario {
  realm: KerberosRealm;
  directory: string;
  server: KerberosAuthServer;
  clientSecret: string;
  /** Registered as user u-alice by `kerberos_principal`. */
  alice: UserPrincipal;
  /** A valid principal that no user names. */
  carol: UserPrincipal;
  /** Registered as u-dave; tickets live one minute. */
  dave: UserPrincipal;
  /** /authorize for a client (`kerb-web`, `kerb-second`, `kerb-mfa`), PKCE and state made here. */
  authorizeUrl(
    clientId: string,
    extra?: Record<string, string>,
  ): { url: string; verifier: string; state: string };
  /** /authorize → the login page; returns the Kerberos link on it and the request. */
  kerberosLink(
    curl: CurlBrowser,
    clientId?: string,
  ): Promise<{ link: string; request: { url: string; verifier: string; state: string } }>;
  /** Code → tokens; returns the ID token's payload. */
  redeem(code: string, verifier: string, clientId?: string): Promise<Record<string, unknown>>;
  /** The code of a redirect to the client, checking its state. */
  codeOf(location: string | undefined, state: string): string;
  stop(): Promise<void>;
}

/** `env`: more settings for the auth server (the directory suite's `LDAP_*`). */
export async function startKerberosScenario(
  options: { env?: Record<string, string> } = {},
): Promise<KerberosScenario> {
  const realm = await startKerberosRealm();
  const directory = await mkdtemp(join(tmpdir(), 'e2e-kerberos-'));
  const database = await createTestDatabase({ prefix: 'e2e_kerberos' });
  const clientSecret = randomSecret();
  const webClient = (clientId: string) => ({
    client_id: clientId,
    client_secret: clientSecret,
    redirect_uris: [REDIRECT_URI],
    grant_types: ['authorization_code', 'refresh_token'],
    scope: 'openid profile',
    skip_consent: true,
  });
  const alice = realm.addUser('alice');
  const carol = realm.addUser('carol');
  const dave = realm.addUser('dave', { maxLife: '1 minute' });
  const user = (name: string, principal: UserPrincipal) => ({
    sub: `u-${name}`,
    username: name,
    password: randomSecret(),
    kerberos_principal: principal.principal,
  });
  const server = await startKerberosAuthServer({
    realm,
    databaseUrl: database.url,
    seed: {
      clients: [
        webClient('kerb-web'),
        webClient('kerb-second'),
        // Asks every user for a second factor (seed `require_mfa`): Kerberos alone is one factor.
        { ...webClient('kerb-mfa'), require_mfa: true },
        {
          client_id: 'kerb-device',
          client_name: 'Kerberos device',
          grant_types: [DEVICE_GRANT],
          scope: 'openid profile',
        },
      ],
      users: [user('alice', alice), user('dave', dave)],
    },
    // As on two hosts, each with its own replay cache: GSSAPI's per-host cache is off here, so a
    // replay is caught only by the record every instance shares (README "Several instances").
    env: { KRB5RCACHETYPE: 'none', ...options.env },
  });

  const authorizeUrl: KerberosScenario['authorizeUrl'] = (clientId, extra = {}) => {
    const { verifier, challenge } = pkcePair();
    const state = randomSecret();
    const query = new URLSearchParams({
      response_type: 'code',
      client_id: clientId,
      redirect_uri: REDIRECT_URI,
      scope: 'openid profile',
      state,
      nonce: randomSecret(),
      code_challenge: challenge,
      code_challenge_method: 'S256',
      ...extra,
    });
    return { url: `${server.issuer}/authorize?${query}`, verifier, state };
  };

  return {
    realm,
    directory,
    server,
    clientSecret,
    alice,
    carol,
    dave,
    authorizeUrl,
    async kerberosLink(curl, clientId = 'kerb-web') {
      const request = authorizeUrl(clientId);
      const start = await curl.get(request.url);
      expect([302, 303]).toContain(start.status);
      const login = await curl.get(new URL(header(start, 'location') ?? '', server.issuer).href);
      expect(login.status).toBe(200);
      const link = kerberosLinkOf(login.body, server.issuer);
      expect(link).toMatch(/\/interaction\/[^/]+\/kerberos(\?|$)/);
      return { link: link as string, request };
    },
    async redeem(code, verifier, clientId = 'kerb-web') {
      const tokens = await postForm(
        `${server.issuer}/token`,
        { grant_type: 'authorization_code', code, redirect_uri: REDIRECT_URI, code_verifier: verifier },
        basicAuthorization(clientId, clientSecret),
      );
      expect(tokens.status).toBe(200);
      return jwtPayload(tokens.json.id_token as string);
    },
    codeOf(location, state) {
      const url = new URL(location ?? 'http://invalid/');
      expect(url.href.startsWith(REDIRECT_URI)).toBe(true);
      expect(url.searchParams.get('state')).toBe(state);
      return url.searchParams.get('code') as string;
    },
    async stop() {
      await server.stop();
      await database.drop();
      await realm.stop();
      await rm(directory, { recursive: true, force: true });
    },
  };
}
