/**
 * Peer: panva's `oidc-provider`, configured the way its documentation recommends for production
 * with JWT access tokens: Resource Indicators (RFC 8707) resolve each resource server, with
 * `accessTokenFormat: 'jwt'` signed ES256 from `jwks`, plus an opaque resource server for the
 * opaque-token and introspection workloads, and a browser client for the code and refresh
 * workloads with its own login pages (src/peers/provider-login.ts). State in the library's
 * in-memory adapter (which its documentation calls development-only) or, as in production, on
 * Redis (src/store/redis-adapter.ts). No proxy, no development interactions. Run as its own
 * process by the harness:
 * `node --import tsx src/peers/oidc-provider.ts` with `BENCH_PEER_CONFIG`.
 */
import { randomUUID } from 'node:crypto';
import { createServer } from 'node:http';
import { Redis } from 'ioredis';
import { exportJWK, generateKeyPair } from 'jose';
import Provider, {
  type Configuration,
  errors,
  type KoaContextWithOIDC,
  type ResourceServer,
} from 'oidc-provider';
import { redisAdapterFactory } from '../store/redis-adapter.js';
import { exitWithParent, type ProviderPeerConfig, readPeerConfig } from './peer-config.js';
import { handleLoginPages, type LoginSettings } from './provider-login.js';

const config = readPeerConfig<ProviderPeerConfig>();

const { privateKey } = await generateKeyPair('ES256', { extractable: true });
const signingKey = { ...(await exportJWK(privateKey)), kid: 'bench-es256', alg: 'ES256', use: 'sig' };

const resourceServers = new Map<string, ResourceServer>([
  [
    config.jwtResource.id,
    {
      scope: config.jwtResource.scope,
      audience: config.jwtResource.id,
      accessTokenTTL: config.accessTokenTtl,
      accessTokenFormat: 'jwt',
      jwt: { sign: { alg: 'ES256' } },
    },
  ],
  [
    config.opaqueResource.id,
    {
      scope: config.opaqueResource.scope,
      audience: config.opaqueResource.id,
      accessTokenTTL: config.accessTokenTtl,
      accessTokenFormat: 'opaque',
    },
  ],
]);

const redis = config.store.kind === 'redis' ? new Redis(config.store.url) : undefined;
const WEB_OIDC_SCOPE = 'openid email';

const configuration: Configuration = {
  ...(redis ? { adapter: redisAdapterFactory(redis) } : {}),
  clients: [
    {
      client_id: config.webClient.id,
      client_secret: config.webClient.secret,
      grant_types: ['authorization_code', 'refresh_token'],
      response_types: ['code'],
      redirect_uris: [config.webClient.redirectUri],
      token_endpoint_auth_method: 'client_secret_basic',
      'urn:bench:resources': [config.jwtResource.id],
    },
    {
      client_id: config.ccClient.id,
      client_secret: config.ccClient.secret,
      grant_types: ['client_credentials'],
      response_types: [],
      redirect_uris: [],
      token_endpoint_auth_method: 'client_secret_basic',
      // The documented recommendation: only resources pre-registered on the client are allowed.
      'urn:bench:resources': [config.jwtResource.id, config.opaqueResource.id],
    },
    {
      client_id: config.introspector.id,
      client_secret: config.introspector.secret,
      grant_types: [],
      response_types: [],
      redirect_uris: [],
      token_endpoint_auth_method: 'client_secret_basic',
    },
  ],
  extraClientMetadata: { properties: ['urn:bench:resources'] },
  // The only key is ES256, so that is every client's ID Token algorithm too.
  clientDefaults: { id_token_signed_response_alg: 'ES256' },
  jwks: { keys: [signingKey] },
  cookies: { keys: [randomUUID(), randomUUID()] },
  enabledJWA: { idTokenSigningAlgValues: ['ES256'] },
  features: {
    devInteractions: { enabled: false },
    clientCredentials: { enabled: true },
    introspection: {
      enabled: true,
      // Only the registered resource server may introspect, and only tokens addressed to it.
      allowedPolicy: (_ctx, client, token) =>
        client.clientId === config.introspector.id &&
        'aud' in token &&
        token.aud === config.opaqueResource.id,
    },
    resourceIndicators: {
      enabled: true,
      // The JWT resource when the scope asks for it; a sign-in with OpenID scopes only (the
      // `signin` workload) gets an access token for UserInfo, as ours does.
      defaultResource: (ctx) =>
        requestedScope(ctx).includes(config.jwtResource.scope) ? config.jwtResource.id : undefined,
      useGrantedResource: () => true,
      getResourceServerInfo: (_ctx, resourceIndicator, client) => {
        const allowed = client['urn:bench:resources'];
        const server = resourceServers.get(resourceIndicator);
        if (!server || !Array.isArray(allowed) || !allowed.includes(resourceIndicator)) {
          throw new errors.InvalidTarget();
        }
        return server;
      },
    },
  },
  // Refresh tokens without `offline_access` (whose consent rules the pages do not model), and
  // rotated on every use as our server does (RFC 9700 §4.14.2).
  issueRefreshToken: async (_ctx, client) => client.grantTypeAllowed('refresh_token'),
  rotateRefreshToken: () => true,
  findAccount: async (_ctx, sub) => ({ accountId: sub, claims: () => ({ sub }) }),
};

const provider = new Provider(config.issuer, configuration);
provider.on('server_error', (_ctx, error) => console.error('server_error', error));
const callback = provider.callback();

const login: LoginSettings = {
  user: config.user,
  oidcScope: WEB_OIDC_SCOPE,
  resource: config.jwtResource,
};

const server = createServer((request, response) => {
  if (request.url === '/health/ready' || request.url === '/health/live') {
    response.writeHead(200, { 'content-type': 'text/plain' }).end('ok');
    return;
  }
  handleLoginPages(provider, login, request, response).then(
    (handled) => {
      if (!handled) callback(request, response);
    },
    (error: unknown) => {
      console.error('login page', error);
      if (!response.headersSent) response.writeHead(500).end();
    },
  );
});
server.keepAliveTimeout = 72_000;
server.listen(config.port, '127.0.0.1');

exitWithParent(async () => {
  await new Promise((resolve) => server.close(resolve));
  await redis?.quit();
});

/** The scope of the request, or of the code or refresh token it redeems, as a list. */
function requestedScope(ctx: KoaContextWithOIDC): string[] {
  const { params, entities } = ctx.oidc;
  const scope = params?.scope ?? entities.AuthorizationCode?.scope ?? entities.RefreshToken?.scope ?? '';
  return String(scope).split(' ');
}
