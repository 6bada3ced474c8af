import { readFile } from 'node:fs/promises';
import type {
  Client,
  ClientAuthenticationMethod,
  Resource,
  SecretHasher,
  User,
} from '@oidc-orders/oauth-core';
import {
  DEFAULT_SCRYPT_COST,
  fapi2RegistrationProblems,
  hashPassword,
  type ScryptCost,
  TOKEN_TYPES,
  verifyPassword,
} from '@oidc-orders/oauth-core';
import { Value } from '@sinclair/typebox/value';
import { inArray } from 'drizzle-orm';
import type { JWK } from 'jose';
import type { LifetimeDefaults } from './config.js';
import type { AppDatabase } from './db/client.js';
import { users } from './db/schema.js';
import { replaceKerberosPrincipals } from './kerberos/principal-repository.js';
import { applySeededTotpSecret } from './mfa/totp-repository.js';
import {
  type SeedClient,
  type SeedDocument,
  SeedDocumentSchema,
  type SeedResource,
  type SeedUser,
} from './schemas/seed.js';
import { writeRegistryRecords } from './storage/drizzle-stores.js';
import { disableEntriesNotIn, type RegistryKind } from './storage/registry-status.js';

/**
 * The seed file (SEED_FILE): clients, resources and users, applied idempotently at every start.
 * Plain-text secrets are hashed before they reach the database. The file is the truth: a client,
 * resource or user it no longer names is disabled (`disabled_at`, see storage/registry-status.ts),
 * not deleted, so grants and history keep their references; naming it again enables it.
 */

/** A seed problem, phrased as one line that names the entry and member. */
export class SeedError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'SeedError';
  }
}

/** RFC 9700 §2.4 (password) and §2.1.2 (implicit): deprecated grants this server never offers. */
const REFUSED_GRANT_TYPES: Readonly<Record<string, string>> = {
  password: 'the resource owner password credentials grant is not supported (RFC 9700 §2.4)',
  implicit: 'the implicit grant is not supported (RFC 9700 §2.1.2)',
};

export async function readSeedFile(path: string): Promise<SeedDocument> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (error) {
    throw new SeedError(
      `SEED_FILE ${path} cannot be read: ${(error as NodeJS.ErrnoException).code ?? 'error'}`,
    );
  }
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (error) {
    throw new SeedError(
      `SEED_FILE ${path}${jsonErrorLocation(text, error as Error)} is not valid JSON: ${(error as Error).message}`,
    );
  }
  try {
    return parseSeedDocument(json);
  } catch (error) {
    if (error instanceof SeedError) throw new SeedError(`SEED_FILE ${path}: ${error.message}`);
    throw error;
  }
}

/**
 * `:line:column` of a JSON.parse error, the way editors jump to it. V8 reports either
 * "(line L column C)" or "at position P" depending on the version; both are turned into one form.
 */
export function jsonErrorLocation(text: string, error: Error): string {
  const lineColumn = /line (\d+) column (\d+)/.exec(error.message);
  if (lineColumn) return `:${lineColumn[1]}:${lineColumn[2]}`;
  const position = /position (\d+)/.exec(error.message);
  const offset = position
    ? Number(position[1])
    : /end of JSON input/.test(error.message)
      ? text.length
      : undefined;
  if (offset === undefined) return '';
  const before = text.slice(0, offset).split('\n');
  return `:${before.length}:${(before.at(-1)?.length ?? 0) + 1}`;
}

/** Validates a parsed seed document; throws `SeedError` naming the first problem. */
export function parseSeedDocument(value: unknown): SeedDocument {
  rejectRefusedGrantTypes(value);
  const firstError = Value.Errors(SeedDocumentSchema, value).First();
  if (firstError) {
    const location = formatPath(firstError.path);
    if (firstError.message === 'Unexpected property') {
      const member = firstError.path.split('/').pop() ?? '';
      throw new SeedError(`${location}: unknown member "${member}"`);
    }
    if (firstError.value === undefined) throw new SeedError(`${location}: required member is missing`);
    throw new SeedError(`${location}: ${firstError.message.toLowerCase()}`);
  }
  const document = value as SeedDocument;
  checkClients(document.clients ?? []);
  checkResources(document.resources ?? []);
  checkUsers(document.users ?? []);
  return document;
}

function rejectRefusedGrantTypes(value: unknown): void {
  const seedClients = (value as { clients?: unknown } | null)?.clients;
  if (!Array.isArray(seedClients)) return;
  seedClients.forEach((client: unknown, index) => {
    const grantTypes = (client as { grant_types?: unknown } | null)?.grant_types;
    if (!Array.isArray(grantTypes)) return;
    for (const grantType of grantTypes) {
      const reason = typeof grantType === 'string' ? REFUSED_GRANT_TYPES[grantType] : undefined;
      if (reason)
        throw new SeedError(
          `${describeClient(client, index)}: grant type "${grantType}" is refused: ${reason}`,
        );
    }
  });
}

function describeClient(client: unknown, index: number): string {
  const clientId = (client as { client_id?: unknown } | null)?.client_id;
  return typeof clientId === 'string' ? `clients[${index}] (${clientId})` : `clients[${index}]`;
}

function formatPath(pointer: string): string {
  if (pointer === '') return 'seed document';
  return pointer
    .split('/')
    .slice(1)
    .map((segment) => segment.replace(/~1/g, '/').replace(/~0/g, '~'))
    .reduce(
      (path, segment) =>
        /^\d+$/.test(segment) ? `${path}[${segment}]` : path ? `${path}.${segment}` : segment,
      '',
    );
}

function isAbsoluteUrlWithoutFragment(value: string): boolean {
  return URL.canParse(value) && !value.includes('#');
}

function checkClients(seedClients: readonly SeedClient[]): void {
  const seen = new Set<string>();
  seedClients.forEach((client, index) => {
    const where = describeClient(client, index);
    if (seen.has(client.client_id)) throw new SeedError(`${where}: duplicate client_id`);
    seen.add(client.client_id);
    if (client.client_secret !== undefined && client.client_secret_hash !== undefined) {
      throw new SeedError(`${where}: give client_secret or client_secret_hash, not both`);
    }
    const grantTypes = client.grant_types ?? ['authorization_code'];
    checkClientKeys(client, where);
    const isPublic = securityRegistration(client).authMethods.includes('none');
    if (isPublic && grantTypes.includes('client_credentials')) {
      // RFC 6749 §4.4: the client credentials grant MUST only be used by confidential clients.
      throw new SeedError(
        `${where}: client_credentials requires a client that authenticates (public clients cannot use it)`,
      );
    }
    if (grantTypes.includes('authorization_code') && (client.redirect_uris ?? []).length === 0) {
      throw new SeedError(`${where}: redirect_uris is required for the authorization_code grant`);
    }
    // RFC 6749 §3.1.2: redirection endpoints are absolute URIs without a fragment.
    for (const member of ['redirect_uris', 'post_logout_redirect_uris'] as const) {
      for (const uri of client[member] ?? []) {
        if (!isAbsoluteUrlWithoutFragment(uri)) {
          throw new SeedError(`${where}.${member}: "${uri}" is not an absolute URI without a fragment`);
        }
      }
    }
    for (const member of ['backchannel_logout_uri', 'frontchannel_logout_uri'] as const) {
      const uri = client[member];
      if (uri !== undefined && !isAbsoluteUrlWithoutFragment(uri)) {
        throw new SeedError(`${where}.${member}: "${uri}" is not an absolute URI without a fragment`);
      }
    }
    const exchanges = grantTypes.includes('urn:ietf:params:oauth:grant-type:token-exchange');
    if (exchanges !== (client.token_exchange !== undefined)) {
      throw new SeedError(
        exchanges
          ? `${where}: the token-exchange grant needs a token_exchange policy`
          : `${where}: token_exchange is set but grant_types lacks the token-exchange grant`,
      );
    }
    // RFC 8693 §5: exchanging tokens is a privileged act; only a client that authenticates may do it.
    if (exchanges && isPublic) {
      throw new SeedError(`${where}: token exchange requires a client that authenticates`);
    }
    for (const origin of client.allowed_cors_origins ?? []) {
      if (!URL.canParse(origin) || new URL(origin).origin !== origin) {
        throw new SeedError(
          `${where}.allowed_cors_origins: "${origin}" is not an origin (scheme://host[:port])`,
        );
      }
    }
  });
}

/**
 * `token_endpoint_auth_method` against the credentials registered with it, the keys themselves
 * (public only: RFC 7591 §2 "MUST NOT" hold private keys), and the FAPI 2.0 profile's demands.
 */
function checkClientKeys(client: SeedClient, where: string): void {
  const hasSecret = client.client_secret !== undefined || client.client_secret_hash !== undefined;
  const hasKeys = client.jwks !== undefined || client.jwks_uri !== undefined;
  const method = securityRegistration(client).authMethods[0];
  if (client.jwks !== undefined && client.jwks_uri !== undefined) {
    // RFC 7591 §2: "The jwks_uri and jwks parameters MUST NOT both be present".
    throw new SeedError(`${where}.jwks: give jwks or jwks_uri, not both`);
  }
  for (const [index, key] of (client.jwks?.keys ?? []).entries()) {
    const problem = publicJwkProblem(key);
    if (problem !== null) throw new SeedError(`${where}.jwks.keys[${index}]: ${problem}`);
  }
  if (client.jwks_uri !== undefined && !isAbsoluteUrlWithoutFragment(client.jwks_uri)) {
    throw new SeedError(`${where}.jwks_uri: "${client.jwks_uri}" is not an absolute URI without a fragment`);
  }
  if ((method === 'client_secret_basic' || method === 'client_secret_post') && !hasSecret) {
    throw new SeedError(`${where}.token_endpoint_auth_method: ${method} needs a client_secret`);
  }
  if ((method === 'private_key_jwt' || method === 'none') && hasSecret) {
    throw new SeedError(`${where}.client_secret: not used with token_endpoint_auth_method ${method}`);
  }
  if ((method === 'private_key_jwt' || client.require_signed_request_object === true) && !hasKeys) {
    throw new SeedError(
      `${where}.jwks: jwks or jwks_uri is required for private_key_jwt and signed request objects`,
    );
  }
  const [fapiProblem] = fapi2RegistrationProblems({
    ...securityRegistration(client),
    secretHash: hasSecret ? 'set' : null,
    grantTypes: client.grant_types ?? ['authorization_code'],
  });
  if (fapiProblem !== undefined) {
    throw new SeedError(`${where}.${fapiProblem.member}: ${fapiProblem.problem} (profile fapi2)`);
  }
}

/** RFC 7517 / RFC 7518 §6: members only a private or symmetric key has. */
const PRIVATE_JWK_MEMBERS = ['d', 'p', 'q', 'dp', 'dq', 'qi', 'oth', 'k'];

function publicJwkProblem(key: Record<string, unknown>): string | null {
  if (!['RSA', 'EC', 'OKP'].includes(String(key.kty)))
    return 'kty must be RSA, EC or OKP (an asymmetric public key)';
  if (PRIVATE_JWK_MEMBERS.some((member) => member in key))
    return 'holds private key material; register the public key only';
  return null;
}

/**
 * The authentication and profile members of a client record, with their defaults: the method is
 * `client_secret_basic` with a secret (then `client_secret_post` is accepted too unless the method
 * is given explicitly), `none` without one, `private_key_jwt` for `fapi2`; a `fapi2` client is
 * DPoP-bound, PAR-only and gets ES256 ID tokens unless the file says otherwise (then refused).
 */
function securityRegistration(client: SeedClient) {
  const fapi2 = client.profile === 'fapi2';
  const hasSecret = client.client_secret !== undefined || client.client_secret_hash !== undefined;
  const explicit = client.token_endpoint_auth_method;
  const authMethods: ClientAuthenticationMethod[] =
    explicit !== undefined
      ? [explicit]
      : fapi2
        ? ['private_key_jwt']
        : hasSecret
          ? ['client_secret_basic', 'client_secret_post']
          : ['none'];
  return {
    authMethods,
    jwks: client.jwks === undefined ? null : { keys: client.jwks.keys as JWK[] },
    jwksUri: client.jwks_uri ?? null,
    requireSignedRequestObject: client.require_signed_request_object ?? false,
    profile: fapi2 ? ('fapi2' as const) : null,
    dpopBoundAccessTokens: client.dpop_bound_access_tokens ?? fapi2,
    requirePushedAuthorizationRequests: client.require_pushed_authorization_requests ?? fapi2,
    // OIDC Dynamic Client Registration §2: RS256 by default; FAPI 2.0 §5.4.1 forbids it.
    idTokenSigningAlg: client.id_token_signed_response_alg ?? (fapi2 ? 'ES256' : 'RS256'),
  } satisfies Partial<Client>;
}

function checkResources(seedResources: readonly SeedResource[]): void {
  const ids = new Set<string>();
  const scopeOwners = new Map<string, string>();
  seedResources.forEach((resource, index) => {
    const where = `resources[${index}] (${resource.id})`;
    if (ids.has(resource.id)) throw new SeedError(`${where}: duplicate id`);
    ids.add(resource.id);
    if (resource.secret !== undefined && resource.secret_hash !== undefined) {
      throw new SeedError(`${where}: give secret or secret_hash, not both`);
    }
    for (const scope of resource.scopes) {
      // A resource owns its scopes: a scope maps to exactly one audience.
      const owner = scopeOwners.get(scope);
      if (owner !== undefined)
        throw new SeedError(`${where}: scope "${scope}" already belongs to resource ${owner}`);
      scopeOwners.set(scope, resource.id);
    }
  });
}

function checkUsers(seedUsers: readonly SeedUser[]): void {
  const subs = new Set<string>();
  const usernames = new Set<string>();
  const principals = new Set<string>();
  seedUsers.forEach((user, index) => {
    const where = `users[${index}] (${user.username})`;
    if (subs.has(user.sub)) throw new SeedError(`${where}: duplicate sub`);
    if (usernames.has(user.username)) throw new SeedError(`${where}: duplicate username`);
    subs.add(user.sub);
    usernames.add(user.username);
    if (user.kerberos_principal !== undefined) {
      if (principals.has(user.kerberos_principal))
        throw new SeedError(`${where}: duplicate kerberos_principal`);
      principals.add(user.kerberos_principal);
    }
    if ((user.password === undefined) === (user.password_hash === undefined)) {
      throw new SeedError(`${where}: give exactly one of password or password_hash`);
    }
  });
}

// ─── Applying ────────────────────────────────────────────────────────────────────────────────────

export interface SeedDependencies {
  secrets: SecretHasher;
  lifetimes: LifetimeDefaults;
  now: number;
  /** Encrypts seeded `totp_secret`s (KEY_ENCRYPTION_KEY); without it a seed with one is refused. */
  keyEncryptionKey?: Uint8Array;
  /** scrypt cost for plain-text `password`s; default DEFAULT_SCRYPT_COST (tests pass a cheaper one). */
  passwordCost?: ScryptCost;
}

export interface SeedSummary {
  clientIds: string[];
  resourceIds: string[];
  usernames: string[];
  /** Ids (client ids, resource ids, user `sub`s) disabled by this run because the file omits them. */
  disabled: Record<RegistryKind, string[]>;
}

/**
 * Upserts every entry in one transaction, then disables the entries the file no longer names. Idempotent: applying the same document twice leaves the
 * same rows (client and resource secret hashes are deterministic HMACs; a stored password hash is
 * kept when it still matches the plain-text password, so restarts do not re-hash).
 */
export async function applySeed(
  db: AppDatabase,
  seed: SeedDocument,
  deps: SeedDependencies,
): Promise<SeedSummary> {
  const seedClients = seed.clients ?? [];
  const seedResources = seed.resources ?? [];
  const seedUsers = seed.users ?? [];

  // The KDF runs before the transaction, so the transaction stays short.
  const passwordHashes = await resolvePasswordHashes(db, seedUsers, deps.passwordCost ?? DEFAULT_SCRYPT_COST);

  await writeRegistryRecords(
    db,
    {
      clients: seedClients.map((client) => clientRecord(client, deps)),
      resources: seedResources.map((resource) => resourceRecord(resource, deps)),
      users: seedUsers.map((user) => userRecord(user, passwordHashes.get(user.sub) ?? '')),
    },
    deps.now,
  );
  await replaceKerberosPrincipals(
    db,
    seedUsers.flatMap((user) =>
      user.kerberos_principal === undefined ? [] : [{ principal: user.kerberos_principal, sub: user.sub }],
    ),
    deps.now,
  );
  for (const user of seedUsers) {
    if (user.totp_secret !== undefined && deps.keyEncryptionKey === undefined) {
      throw new SeedError(`user ${user.username}: totp_secret needs the key-encryption key`);
    }
    if (deps.keyEncryptionKey !== undefined) {
      await applySeededTotpSecret(db, deps.keyEncryptionKey, user.sub, user.totp_secret, deps.now);
    }
  }
  // A member left out of the file names nothing: every entry of that kind is disabled.
  const disabled = await disableEntriesNotIn(
    db,
    {
      clients: seedClients.map((client) => client.client_id),
      resources: seedResources.map((resource) => resource.id),
      users: seedUsers.map((user) => user.sub),
    },
    deps.now,
  );

  return {
    clientIds: seedClients.map((client) => client.client_id),
    resourceIds: seedResources.map((resource) => resource.id),
    usernames: seedUsers.map((user) => user.username),
    disabled,
  };
}

async function resolvePasswordHashes(
  db: AppDatabase,
  seedUsers: readonly SeedUser[],
  cost: ScryptCost,
): Promise<Map<string, string>> {
  const hashes = new Map<string, string>();
  const plain = seedUsers.filter((user) => user.password !== undefined);
  const stored =
    plain.length === 0
      ? []
      : await db
          .select({ sub: users.sub, passwordHash: users.passwordHash })
          .from(users)
          .where(
            inArray(
              users.sub,
              plain.map((user) => user.sub),
            ),
          );
  const storedBySub = new Map(stored.map((row) => [row.sub, row.passwordHash]));
  for (const user of seedUsers) {
    if (user.password_hash !== undefined) {
      hashes.set(user.sub, user.password_hash);
      continue;
    }
    const password = user.password ?? '';
    const existing = storedBySub.get(user.sub);
    hashes.set(
      user.sub,
      existing !== undefined && (await verifyPassword(password, existing))
        ? existing
        : await hashPassword(password, { cost }),
    );
  }
  return hashes;
}

function clientRecord(client: SeedClient, deps: SeedDependencies): Client {
  const secretHash =
    client.client_secret_hash ??
    (client.client_secret === undefined ? null : deps.secrets.hash(client.client_secret));
  return {
    clientId: client.client_id,
    clientName: client.client_name ?? client.client_id,
    secretHash,
    redirectUris: client.redirect_uris ?? [],
    postLogoutRedirectUris: client.post_logout_redirect_uris ?? [],
    // RFC 7591 §2: grant_types defaults to authorization_code.
    grantTypes: client.grant_types ?? ['authorization_code'],
    scopes: (client.scope ?? 'openid').split(' ').filter((scope) => scope !== ''),
    skipConsent: client.skip_consent ?? false,
    allowedCorsOrigins: client.allowed_cors_origins ?? [],
    backchannelLogoutUri: client.backchannel_logout_uri ?? null,
    frontchannelLogoutUri: client.frontchannel_logout_uri ?? null,
    refreshTokensWithoutOfflineAccess: client.refresh_tokens_without_offline_access ?? false,
    refreshTokenAbsoluteTtl: client.refresh_token_absolute_ttl ?? deps.lifetimes.refreshTokenAbsoluteTtl,
    refreshTokenSlidingTtl: client.refresh_token_sliding_ttl ?? deps.lifetimes.refreshTokenSlidingTtl,
    dpopNonceRequired: client.dpop_nonce_required ?? false,
    tokenExchange:
      client.token_exchange === undefined
        ? null
        : {
            audiences: client.token_exchange.audiences,
            scopes: client.token_exchange.scopes,
            // Access tokens only unless the policy also names ID tokens.
            subjectTokenTypes: client.token_exchange.subject_token_types ?? [TOKEN_TYPES.accessToken],
          },
    keepOfflineAccessOnLogout: client.keep_offline_access_on_logout ?? false,
    requireMfa: client.require_mfa ?? false,
    ...securityRegistration(client),
  };
}

function resourceRecord(resource: SeedResource, deps: SeedDependencies): Resource {
  return {
    id: resource.id,
    scopes: resource.scopes,
    accessTokenFormat: resource.access_token_format ?? 'jwt',
    accessTokenTtl: resource.access_token_ttl ?? deps.lifetimes.accessTokenTtl,
    accessTokenSigningAlg: resource.access_token_signing_alg ?? 'ES256',
    secretHash:
      resource.secret_hash ?? (resource.secret === undefined ? null : deps.secrets.hash(resource.secret)),
    claims: resource.claims ?? [],
    requireMfa: resource.require_mfa ?? false,
  };
}

function userRecord(user: SeedUser, passwordHash: string): User {
  return {
    sub: user.sub,
    username: user.username,
    passwordHash,
    name: user.name ?? null,
    email: user.email ?? null,
    emailVerified: user.email_verified ?? false,
    allowedScopes: user.allowed_scopes ?? null,
    mfaRequired: user.mfa_required ?? false,
  };
}
