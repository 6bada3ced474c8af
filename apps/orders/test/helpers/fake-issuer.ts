import { randomBytes } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { type CryptoKey, exportJWK, generateKeyPair, type JWK, type JWTPayload, SignJWT } from 'jose';

/**
 * A stand-in authorization server for route tests that need tokens the real one would never
 * issue (expired, wrong audience, wrong `typ`, foreign keys) or failures on demand. It serves
 * discovery, a JWKS (counting reads), introspection, a refresh-token grant with rotation and reuse
 * detection, and revocation. The end-to-end tests use the real auth server instead.
 */
export interface FakeIssuer {
  readonly issuer: string;
  /** How many times the JWKS was read. */
  jwksReads(): number;
  /** Signs with the published key (or `kid` of an unpublished one) as `typ`. */
  sign(
    payload: JWTPayload,
    options?: { typ?: string; kid?: string; alg?: 'ES256' | 'RS256' },
  ): Promise<string>;
  /** A key whose `kid` is not in the JWKS until `publish(kid)` is called. */
  addUnpublishedKey(kid: string): Promise<void>;
  publish(kid: string): void;
  /** What the introspection endpoint answers for an opaque token. */
  setIntrospection(token: string, response: Record<string, unknown>): void;
  /** Basic credentials seen at the introspection endpoint (decoded `id:secret`). */
  introspectionCallers(): string[];
  /** Registers a refresh token; each use rotates it (the old one becomes reuse). */
  issueRefreshToken(): string;
  /** Refresh grants answered so far (successful ones). */
  refreshGrants(): number;
  /** Refresh tokens presented after they were used (reuse detection fired). */
  reuseDetections(): number;
  /** Refused refresh grants answered with `invalid_grant` from now on. */
  refuseRefresh(refuse: boolean): void;
  /** Lifetime (s) of access tokens minted by the refresh grant. */
  setAccessTokenTtl(seconds: number): void;
  /** Tokens revoked at the revocation endpoint. */
  revoked(): string[];
  /** Holds each refresh grant until this resolves (to line up concurrent callers). */
  holdRefreshes(gate: Promise<void> | undefined): void;
  close(): Promise<void>;
}

export const FAKE_CLIENT_ID = 'orders-web';
export const FAKE_CLIENT_SECRET = 'fake-client-secret';
export const FAKE_RESOURCE_ID = 'orders-api';
export const FAKE_RESOURCE_SECRET = 'fake-resource-secret';

interface KeyEntry {
  kid: string;
  alg: 'ES256' | 'RS256';
  privateKey: CryptoKey;
  publicJwk: JWK;
  published: boolean;
}

/** `port` 0 picks a free one; a fixed port lets a test start the issuer after the app (discovery retry). */
export async function startFakeIssuer(port = 0): Promise<FakeIssuer> {
  const keys = new Map<string, KeyEntry>();
  async function addKey(kid: string, alg: 'ES256' | 'RS256', published: boolean) {
    const { privateKey, publicKey } = await generateKeyPair(alg, { extractable: true });
    keys.set(kid, {
      kid,
      alg,
      privateKey: privateKey as CryptoKey,
      publicJwk: { ...(await exportJWK(publicKey)), kid, alg, use: 'sig' },
      published,
    });
  }
  await addKey('es-1', 'ES256', true);
  await addKey('rs-1', 'RS256', true);

  let jwksReads = 0;
  const introspections = new Map<string, Record<string, unknown>>();
  const introspectionCallers: string[] = [];
  const liveRefreshTokens = new Set<string>();
  const usedRefreshTokens = new Set<string>();
  let refreshGrants = 0;
  let reuseDetections = 0;
  let refuse = false;
  let accessTokenTtl = 300;
  let gate: Promise<void> | undefined;
  const revoked: string[] = [];

  const server: Server = createServer((request, response) => {
    void handle(request, response).catch((error) => {
      response.writeHead(500).end(String(error));
    });
  });
  await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve));
  const issuer = `http://127.0.0.1:${(server.address() as { port: number }).port}`;

  async function sign(
    payload: JWTPayload,
    options: { typ?: string; kid?: string; alg?: 'ES256' | 'RS256' } = {},
  ): Promise<string> {
    const key = keys.get(options.kid ?? (options.alg === 'RS256' ? 'rs-1' : 'es-1'))!;
    return new SignJWT(payload)
      .setProtectedHeader({ alg: key.alg, kid: key.kid, ...(options.typ ? { typ: options.typ } : {}) })
      .sign(key.privateKey);
  }

  async function handle(request: IncomingMessage, response: ServerResponse) {
    const url = new URL(request.url ?? '/', issuer);
    const json = (status: number, body: unknown) => {
      response.writeHead(status, { 'content-type': 'application/json', 'cache-control': 'no-store' });
      response.end(JSON.stringify(body));
    };
    if (request.method === 'GET' && url.pathname === '/.well-known/openid-configuration') {
      return json(200, {
        issuer,
        authorization_endpoint: `${issuer}/authorize`,
        token_endpoint: `${issuer}/token`,
        jwks_uri: `${issuer}/jwks`,
        introspection_endpoint: `${issuer}/introspect`,
        revocation_endpoint: `${issuer}/revoke`,
        end_session_endpoint: `${issuer}/logout`,
        response_types_supported: ['code'],
        subject_types_supported: ['public'],
        id_token_signing_alg_values_supported: ['ES256', 'RS256'],
      });
    }
    if (request.method === 'GET' && url.pathname === '/jwks') {
      jwksReads++;
      return json(200, {
        keys: [...keys.values()].filter((key) => key.published).map((key) => key.publicJwk),
      });
    }
    const form = new URLSearchParams(await readBody(request));
    if (request.method === 'POST' && url.pathname === '/introspect') {
      const caller = decodeBasic(request.headers.authorization);
      introspectionCallers.push(caller ?? '');
      if (caller !== `${FAKE_RESOURCE_ID}:${FAKE_RESOURCE_SECRET}`)
        return json(401, { error: 'invalid_client' });
      return json(200, introspections.get(form.get('token') ?? '') ?? { active: false });
    }
    if (request.method === 'POST' && url.pathname === '/revoke') {
      revoked.push(form.get('token') ?? '');
      response.writeHead(200).end();
      return;
    }
    if (request.method === 'POST' && url.pathname === '/token') {
      if (decodeBasic(request.headers.authorization) !== `${FAKE_CLIENT_ID}:${FAKE_CLIENT_SECRET}`) {
        return json(401, { error: 'invalid_client' });
      }
      if (form.get('grant_type') !== 'refresh_token') return json(400, { error: 'unsupported_grant_type' });
      const presented = form.get('refresh_token') ?? '';
      if (gate) await gate;
      if (refuse) return json(400, { error: 'invalid_grant' });
      if (usedRefreshTokens.has(presented)) {
        // RFC 9700 §4.14.2: reuse revokes the whole family.
        reuseDetections++;
        liveRefreshTokens.clear();
        return json(400, { error: 'invalid_grant', error_description: 'refresh token reuse' });
      }
      if (!liveRefreshTokens.delete(presented)) return json(400, { error: 'invalid_grant' });
      usedRefreshTokens.add(presented);
      refreshGrants++;
      const refreshToken = randomBytes(16).toString('base64url');
      liveRefreshTokens.add(refreshToken);
      const now = Math.floor(Date.now() / 1000);
      const accessToken = await sign(
        {
          iss: issuer,
          aud: FAKE_RESOURCE_ID,
          sub: 'u-alice',
          email: 'alice@example.com',
          scope: 'openid profile orders.read',
          client_id: FAKE_CLIENT_ID,
          iat: now,
          exp: now + accessTokenTtl,
          jti: randomBytes(8).toString('hex'),
        },
        { typ: 'at+jwt' },
      );
      return json(200, {
        access_token: accessToken,
        token_type: 'Bearer',
        expires_in: accessTokenTtl,
        refresh_token: refreshToken,
      });
    }
    json(404, { error: 'not_found' });
  }

  return {
    issuer,
    jwksReads: () => jwksReads,
    sign,
    async addUnpublishedKey(kid) {
      await addKey(kid, 'ES256', false);
    },
    publish(kid) {
      keys.get(kid)!.published = true;
    },
    setIntrospection(token, response) {
      introspections.set(token, response);
    },
    introspectionCallers: () => [...introspectionCallers],
    issueRefreshToken() {
      const token = randomBytes(16).toString('base64url');
      liveRefreshTokens.add(token);
      return token;
    },
    refreshGrants: () => refreshGrants,
    reuseDetections: () => reuseDetections,
    refuseRefresh(value) {
      refuse = value;
    },
    setAccessTokenTtl(seconds) {
      accessTokenTtl = seconds;
    },
    revoked: () => [...revoked],
    holdRefreshes(value) {
      gate = value;
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

async function readBody(request: IncomingMessage): Promise<string> {
  let body = '';
  for await (const chunk of request) body += chunk;
  return body;
}

/** RFC 6749 §2.3.1: id and secret are form-urlencoded inside Basic. */
function decodeBasic(header: string | undefined): string | undefined {
  if (!header?.startsWith('Basic ')) return undefined;
  const [id = '', secret = ''] = Buffer.from(header.slice(6), 'base64').toString().split(':');
  return `${decodeURIComponent(id)}:${decodeURIComponent(secret)}`;
}

/** Claims of a good JWT access token for this API, valid for `ttl` seconds. */
export function accessTokenClaims(issuer: string, overrides: JWTPayload = {}, ttl = 300): JWTPayload {
  const now = Math.floor(Date.now() / 1000);
  return {
    iss: issuer,
    aud: FAKE_RESOURCE_ID,
    sub: 'u-alice',
    email: 'alice@example.com',
    scope: 'openid profile orders.read',
    client_id: FAKE_CLIENT_ID,
    iat: now,
    exp: now + ttl,
    jti: randomBytes(8).toString('hex'),
    ...overrides,
  };
}
