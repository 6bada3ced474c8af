import rateLimit from '@fastify/rate-limit';
import {
  type Clock,
  checkUpdateIdentity,
  isOAuthError,
  needsClientSecret,
  OAuthError,
  type RandomSource,
  type RegisteredMetadata,
  type RegistrationPolicy,
  readRegistrationRequest,
  registeredClient,
  registrationResponse,
} from '@oidc-orders/oauth-core';
import type { FastifyInstance, FastifyPluginAsync, FastifyRequest } from 'fastify';
import { AUDIT_EVENTS, audit } from '../../audit.js';
import { ENDPOINTS } from '../../endpoints.js';
import { databaseRateLimitStore } from '../../http/database-rate-limit-store.js';
import type { SeedClientRegistration } from '../../schemas/seed.js';
import {
  deleteRegisteredClient,
  deleteUnusedRegisteredClients,
  findRegisteredClient,
  insertRegisteredClient,
  type RegisteredClientRow,
  replaceRegisteredClient,
} from '../../storage/drizzle/registered-clients.js';

export interface RegistrationRoutesOptions {
  /** The seed's `client_registration`; the routes exist only when it is set. */
  settings: SeedClientRegistration;
  clock: Clock;
  random: RandomSource;
}

const ONE_MINUTE_MS = 60_000;
const DAY_SECONDS = 86_400;
/** Registered client ids are the server's own, never one a client (or the seed) chose. */
const CLIENT_ID_PREFIX = 'dyn_';
/** RFC 7591 §2: this server's defaults for the caps the seed leaves out. */
const DEFAULT_GRANT_TYPES = ['authorization_code', 'refresh_token'] as const;
const DEFAULT_UNUSED_CLIENT_TTL_DAYS = 30;
/** The largest registration document read (RFC 7591 metadata is a few hundred bytes). */
const REGISTRATION_BODY_LIMIT_BYTES = 16 * 1024;

/**
 * Dynamic Client Registration (RFC 7591 §3) at `POST /register` and its management (RFC 7592 §2)
 * at `/register/<client_id>`, JSON in and out (the oauth area's `no-store` and RFC 6749 §5.2
 * error bodies apply; its form-body check does not). Registration needs an initial access token unless
 * the seed says `open`; management needs the client's registration access token. Protocol rules
 * (defaults, caps, error codes) are oauth-core's `readRegistrationRequest` and `registeredClient`;
 * this file is HTTP and bookkeeping only.
 */
export const registrationRoutes: FastifyPluginAsync<RegistrationRoutesOptions> = async (app, options) => {
  const policy: RegistrationPolicy = {
    scopes: options.settings.scope.split(' ').filter(Boolean),
    grantTypes: options.settings.grant_types ?? [...DEFAULT_GRANT_TYPES],
  };
  const ttlSeconds =
    (options.settings.unused_client_ttl_days ?? DEFAULT_UNUSED_CLIENT_TTL_DAYS) * DAY_SECONDS;
  const randomToken = (bytes: number) => Buffer.from(options.random.bytes(bytes)).toString('base64url');
  const nowSeconds = () => options.clock.nowSeconds();
  const registrationClientUri = (clientId: string) =>
    `${app.config.issuer}${ENDPOINTS.registration.path}/${encodeURIComponent(clientId)}`;

  await registerRateLimit(app);

  const initialAccessAllowed = initialAccessCheck(app, options.settings);

  app.post(
    ENDPOINTS.registration.path,
    {
      bodyLimit: REGISTRATION_BODY_LIMIT_BYTES,
      config: { formBody: 'json', ...registrationRateLimitConfig(app) },
    },
    async (request, reply) => {
      try {
        if (!initialAccessAllowed(request)) throw invalidToken('a valid initial access token is required');
        await sweepUnusedClients(app, nowSeconds() - ttlSeconds);
        const metadata = readRegistrationRequest(request.body, policy);
        const clientId = `${CLIENT_ID_PREFIX}${randomToken(16)}`;
        const clientSecret = needsClientSecret(metadata) ? randomToken(32) : undefined;
        const registrationAccessToken = randomToken(32);
        const now = nowSeconds();
        const client = registeredClient(clientId, metadata, {
          secretHash: clientSecret === undefined ? null : app.secretHasher.hash(clientSecret),
          lifetimes: app.config.lifetimes,
        });
        await insertRegisteredClient(
          app.database.db,
          { client, metadata, registrationAccessTokenHash: app.secretHasher.hash(registrationAccessToken) },
          now,
        );
        app.stores.invalidateRegistry();
        audit(request.log, AUDIT_EVENTS.clientRegistered, { client_id: clientId, ip: request.ip });
        return reply.code(201).send(
          registrationResponse(metadata, {
            clientId,
            ...(clientSecret === undefined ? {} : { clientSecret }),
            registrationAccessToken,
            registrationClientUri: registrationClientUri(clientId),
            issuedAt: now,
          }),
        );
      } catch (error) {
        if (isOAuthError(error)) {
          audit(request.log, AUDIT_EVENTS.clientRegistrationRefused, { reason: error.code, ip: request.ip });
        }
        throw error;
      }
    },
  );

  const managementPath = ENDPOINTS.registrationManagement.path;
  const managed = async (request: FastifyRequest) => {
    const { clientId } = request.params as { clientId: string };
    return authorizedRegistration(app, request, clientId);
  };

  // RFC 7592 §2.1: read the registration.
  app.get(managementPath, async (request) => {
    const row = await managed(request);
    return registrationResponse(row.registrationMetadata as RegisteredMetadata, {
      clientId: row.clientId,
      registrationClientUri: registrationClientUri(row.clientId),
      issuedAt: row.registeredAt,
    });
  });

  // RFC 7592 §2.2: replace the registration's metadata.
  app.put(
    managementPath,
    { bodyLimit: REGISTRATION_BODY_LIMIT_BYTES, config: { formBody: 'json' } },
    async (request) => {
      const row = await managed(request);
      checkUpdateIdentity(request.body, row.clientId);
      const metadata = readRegistrationRequest(request.body, policy);
      // A secret stays while the method needs one; a client that now needs one gets a new one.
      const newSecret = needsClientSecret(metadata) && row.secretHash === null ? randomToken(32) : undefined;
      const secretHash = !needsClientSecret(metadata)
        ? null
        : newSecret === undefined
          ? row.secretHash
          : app.secretHasher.hash(newSecret);
      const client = registeredClient(row.clientId, metadata, {
        secretHash,
        lifetimes: app.config.lifetimes,
      });
      await replaceRegisteredClient(
        app.database.db,
        { client, metadata, registrationAccessTokenHash: row.registrationAccessTokenHash ?? '' },
        row.registeredAt,
        nowSeconds(),
      );
      app.stores.invalidateRegistry();
      audit(request.log, AUDIT_EVENTS.clientRegistrationUpdated, { client_id: row.clientId });
      return registrationResponse(metadata, {
        clientId: row.clientId,
        ...(newSecret === undefined ? {} : { clientSecret: newSecret }),
        registrationClientUri: registrationClientUri(row.clientId),
        issuedAt: row.registeredAt,
      });
    },
  );

  // RFC 7592 §2.3: the client deregisters; its id, secret and registration access token stop working.
  app.delete(managementPath, async (request, reply) => {
    const row = await managed(request);
    await deleteRegisteredClient(app.database.db, row.clientId);
    app.stores.invalidateRegistry();
    audit(request.log, AUDIT_EVENTS.clientDeleted, { client_id: row.clientId, reason: 'deregistered' });
    return reply.code(204).send();
  });
};

/** RFC 6750 §3.1 `invalid_token`, with its challenge: RFC 7591 §3 and RFC 7592 §2 both use it. */
function invalidToken(detail: string): OAuthError {
  return new OAuthError('invalid_token', {
    description: 'the access token is missing or invalid',
    detail,
    headers: { 'www-authenticate': 'Bearer realm="registration", error="invalid_token"' },
  });
}

/** RFC 6750 §2.1: `Authorization: Bearer <token>`, or undefined. */
function bearerToken(request: FastifyRequest): string | undefined {
  const match = /^Bearer +([A-Za-z0-9\-._~+/]+=*)$/i.exec(request.headers.authorization ?? '');
  return match?.[1];
}

/**
 * RFC 7591 §3: "The authorization server MAY be configured to support open registration"; else
 * the request carries an initial access token, compared by its keyed hash (constant time).
 */
function initialAccessCheck(app: FastifyInstance, settings: SeedClientRegistration) {
  const hashes = [
    ...(settings.initial_access_tokens ?? []).map((token) => app.secretHasher.hash(token)),
    ...(settings.initial_access_token_hashes ?? []),
  ];
  return (request: FastifyRequest): boolean => {
    if (settings.open === true) return true;
    const token = bearerToken(request);
    return token !== undefined && hashes.some((hash) => app.secretHasher.verify(token, hash));
  };
}

/**
 * RFC 7592 §2: the registration access token must be this client's. An unknown client, a seed
 * client, or a token issued to another client are all the same 401 `invalid_token`: nothing tells
 * a caller which client ids exist.
 */
async function authorizedRegistration(
  app: FastifyInstance,
  request: FastifyRequest,
  clientId: string,
): Promise<RegisteredClientRow> {
  const token = bearerToken(request);
  if (token === undefined) throw invalidToken('no registration access token');
  const row = await findRegisteredClient(app.database.db, clientId);
  const hash = row?.registrationAccessTokenHash;
  if (row === undefined || hash == null || !app.secretHasher.verify(token, hash)) {
    throw invalidToken(`registration access token not valid for ${clientId.slice(0, 64)}`);
  }
  return row;
}

async function sweepUnusedClients(app: FastifyInstance, registeredBefore: number): Promise<void> {
  const deleted = await deleteUnusedRegisteredClients(app.database.db, registeredBefore);
  if (deleted.length === 0) return;
  app.stores.invalidateRegistry();
  for (const clientId of deleted)
    audit(app.log, AUDIT_EVENTS.clientDeleted, { client_id: clientId, reason: 'unused' });
}

/**
 * Registrations per IP and minute (REGISTRATION_RATE_LIMIT_PER_MINUTE), counted like the token
 * endpoint's limit (RATE_LIMIT_STORE): open registration must not let one host fill the table.
 */
async function registerRateLimit(app: FastifyInstance): Promise<void> {
  if (app.config.rateLimits.registrationsPerMinute <= 0) return;
  await app.register(rateLimit, {
    global: false,
    ...(app.config.rateLimits.store === 'database' ? { store: databaseRateLimitStore(app.database.db) } : {}),
    keyGenerator: (request) => `ip:${request.ip}`,
    onExceeded: (request) => {
      audit(request.log, AUDIT_EVENTS.rateLimitExceeded, { limit: 'registration_ip', ip: request.ip });
    },
    errorResponseBuilder: (_request, context) =>
      new OAuthError('temporarily_unavailable', {
        status: context.statusCode,
        description: `too many registrations from this address; retry in ${Math.max(1, Math.ceil(context.ttl / 1000))} seconds`,
        detail: 'registration rate limit exceeded',
      }),
  });
}

function registrationRateLimitConfig(app: FastifyInstance) {
  const max = app.config.rateLimits.registrationsPerMinute;
  return max <= 0 ? {} : { rateLimit: { max, timeWindow: ONE_MINUTE_MS, groupId: 'registration' } };
}
