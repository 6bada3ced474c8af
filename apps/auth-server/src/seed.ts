import { readFile } from 'node:fs/promises';
import type { Client, Resource, SecretHasher, User } from '@oidc-orders/oauth-core';
import {
  adminApiScopesIn,
  type ClientRegistrationContext,
  clientDefaults,
  clientRegistrationProblems,
  DEFAULT_SCRYPT_COST,
  forbiddenGrantReason,
  isAdminApiScope,
  type ScryptCost,
} from '@oidc-orders/oauth-core';
import { Value } from '@sinclair/typebox/value';
import { type ParseError, parse as parseJsonc, printParseErrorCode } from 'jsonc-parser';
import { resolvePasswordHashes, usersChangedSinceApplied } from './accounts/drizzle/seed-users.js';
import { claimSeedUsers } from './accounts/drizzle/user-ownership.js';
import type { LifetimeDefaults } from './config.js';
import type { AppDatabase } from './db/client.js';
import { duplicateProviderIndex, identityProviderProblems } from './federation/provider-rules.js';
import { applyIdentityProviders } from './federation/registry.js';
import { replaceKerberosPrincipals } from './kerberos/principal-repository.js';
import { applySeededTotpSecret } from './mfa/totp-repository.js';
import {
  type SeedClient,
  type SeedDocument,
  SeedDocumentSchema,
  type SeedIdentityProvider,
  type SeedResource,
  type SeedUser,
} from './schemas/seed.js';
import { disableEntriesNotIn, type RegistryKind } from './storage/drizzle/registry-status.js';
import { writeRegistryRecords } from './storage/drizzle/stores.js';

/**
 * The seed file (SEED_FILE): clients, resources and users, applied idempotently at every start.
 * Plain-text secrets are hashed before they reach the database. The file is the truth: a client,
 * resource or user it no longer names is disabled (`disabled_at`, see storage/drizzle/registry-status.ts),
 * not deleted, so grants and history keep their references; naming it again enables it. Users added
 * or disabled by an operator are the exception the seed respects (accounts/drizzle/user-ownership.ts).
 */

/** A seed problem, phrased as one line that names the entry and member. */
export class SeedError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'SeedError';
  }
}

export async function readSeedFile(path: string): Promise<SeedDocument> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (error) {
    throw new SeedError(
      `SEED_FILE ${path} cannot be read: ${(error as NodeJS.ErrnoException).code ?? 'error'}`,
    );
  }
  const json = parseSeedText(path, text);
  try {
    return parseSeedDocument(json);
  } catch (error) {
    if (error instanceof SeedError) throw new SeedError(`SEED_FILE ${path}: ${error.message}`);
    throw error;
  }
}

/**
 * The seed file is JSON with comments and trailing commas (JSONC, as VS Code's settings), so an
 * example can carry a commented-out entry. A syntax error names the file and `:line:column` of the
 * first problem, the way editors jump to it.
 */
export function parseSeedText(path: string, text: string): unknown {
  const errors: ParseError[] = [];
  const value: unknown = parseJsonc(text, errors, {
    allowTrailingComma: true,
    disallowComments: false,
    allowEmptyContent: false,
  });
  const [first] = errors;
  if (first) {
    const problem = printParseErrorCode(first.error)
      .replace(/([a-z])([A-Z])/g, '$1 $2')
      .toLowerCase();
    throw new SeedError(`SEED_FILE ${path}${lineColumnAt(text, first.offset)} is not valid JSON: ${problem}`);
  }
  return value;
}

function lineColumnAt(text: string, offset: number): string {
  const before = text.slice(0, offset).split('\n');
  return `:${before.length}:${(before.at(-1)?.length ?? 0) + 1}`;
}

/** Validates a parsed seed document; throws `SeedError` naming the first problem. */
export function parseSeedDocument(value: unknown): SeedDocument {
  rejectForbiddenGrantTypes(value);
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
  checkIdentityProviders(document.identity_providers ?? []);
  checkClientRegistration(document.client_registration);
  checkAdmins(document.admins ?? []);
  refuseAdminScopes('client_id_metadata_documents.scope', document.client_id_metadata_documents?.scope);
  return document;
}

/**
 * `admins` names people, not records of this file: a directory or federated user is known only
 * once they sign in, so a name is checked for its shape only, and a repeated one is a typo.
 */
function checkAdmins(admins: readonly string[]): void {
  const duplicate = admins.findIndex((name, index) => admins.indexOf(name) !== index);
  if (duplicate !== -1)
    throw new SeedError(`admins[${duplicate}] (${admins[duplicate]}): duplicate username`);
}

/**
 * The administration API's scopes go to a seed client that lists them, never to a client that
 * registers itself (oauth-core admin-api.ts): a policy naming them is a mistake said at start.
 */
function refuseAdminScopes(member: string, scope: string | undefined): void {
  const listed = adminApiScopesIn((scope ?? '').split(' '));
  if (listed.length > 0) {
    throw new SeedError(`${member}: ${listed.join(' ')} may only be given to seed clients (their own scope)`);
  }
}

/** Registration needs a gate: initial access tokens, or `open` said out loud. */
function checkClientRegistration(registration: SeedDocument['client_registration']): void {
  refuseAdminScopes('client_registration.scope', registration?.scope);
  if (registration === undefined || registration.open === true) return;
  const tokens =
    (registration.initial_access_tokens?.length ?? 0) +
    (registration.initial_access_token_hashes?.length ?? 0);
  if (tokens === 0) {
    throw new SeedError(
      'client_registration: give initial_access_tokens (or initial_access_token_hashes), or set open: true',
    );
  }
}

/** Before the schema, so a forbidden grant gets its reason rather than "unexpected value". */
function rejectForbiddenGrantTypes(value: unknown): void {
  const seedClients = (value as { clients?: unknown } | null)?.clients;
  if (!Array.isArray(seedClients)) return;
  seedClients.forEach((client: unknown, index) => {
    const grantTypes = (client as { grant_types?: unknown } | null)?.grant_types;
    if (!Array.isArray(grantTypes)) return;
    for (const grantType of grantTypes) {
      const reason = typeof grantType === 'string' ? forbiddenGrantReason(grantType) : undefined;
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

/**
 * The file's own rules (unique ids, one form of the secret), then oauth-core's registration rules
 * on the client record the entry registers; the first problem found fails the start.
 */
function checkClients(seedClients: readonly SeedClient[]): void {
  const seen = new Set<string>();
  seedClients.forEach((client, index) => {
    const where = describeClient(client, index);
    if (seen.has(client.client_id)) throw new SeedError(`${where}: duplicate client_id`);
    seen.add(client.client_id);
    if (client.client_secret !== undefined && client.client_secret_hash !== undefined) {
      throw new SeedError(`${where}: give client_secret or client_secret_hash, not both`);
    }
    const [problem] = clientRegistrationProblems(clientDefaults(client, parsingContext(client)));
    if (problem !== undefined) {
      const member = problem.member === undefined ? '' : `.${problem.member}`;
      throw new SeedError(`${where}${member}: ${problem.problem}`);
    }
  });
}

/**
 * Parsing knows whether the entry registers a secret but not its keyed hash (made when applying,
 * with the server's key), and no registration rule reads the server's lifetimes.
 */
function parsingContext(client: SeedClient): ClientRegistrationContext {
  const hasSecret = client.client_secret !== undefined || client.client_secret_hash !== undefined;
  return {
    secretHash: hasSecret ? 'not yet hashed' : null,
    lifetimes: { refreshTokenAbsoluteTtl: 0, refreshTokenSlidingTtl: 0 },
  };
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
      // The built-in administration API owns its scopes (oauth-core admin-api.ts).
      if (isAdminApiScope(scope))
        throw new SeedError(`${where}: scope "${scope}" belongs to the built-in administration API`);
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

function checkIdentityProviders(providers: readonly SeedIdentityProvider[]): void {
  const duplicate = duplicateProviderIndex(providers);
  if (duplicate !== undefined)
    throw new SeedError(`identity_providers[${duplicate}] (${providers[duplicate]?.id}): duplicate id`);
  providers.forEach((provider, index) => {
    const [problem] = identityProviderProblems(provider);
    if (problem === undefined) return;
    const member = problem.member === undefined ? '' : `.${problem.member}`;
    throw new SeedError(`identity_providers[${index}] (${provider.id})${member}: ${problem.problem}`);
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
 * Upserts every entry in one transaction, then disables the entries the file no longer names.
 * Idempotent: applying the same document twice leaves the same rows (client and resource secret
 * hashes are deterministic HMACs). A user entry is written only when it differs from the one
 * applied last (its fingerprint, see accounts/drizzle/user-ownership.ts), so what an operator or the user
 * changed since (password, factors, enabled or disabled) outlives restarts until the entry changes.
 */
export async function applySeed(
  db: AppDatabase,
  seed: SeedDocument,
  deps: SeedDependencies,
): Promise<SeedSummary> {
  const seedClients = seed.clients ?? [];
  const seedResources = seed.resources ?? [];
  const seedUsers = seed.users ?? [];
  const changedUsers = await usersChangedSinceApplied(db, seedUsers, deps.secrets);

  // The KDF runs before the transaction, so the transaction stays short.
  const passwordHashes = await resolvePasswordHashes(
    db,
    [...changedUsers.keys()],
    deps.passwordCost ?? DEFAULT_SCRYPT_COST,
  );

  await writeRegistryRecords(
    db,
    {
      clients: seedClients.map((client) => clientRecord(client, deps)),
      resources: seedResources.map((resource) => resourceRecord(resource, deps)),
      users: [...changedUsers.keys()].map((user) => userRecord(user, passwordHashes.get(user.sub) ?? '')),
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
  await applySeededTotpSecrets(db, seedUsers, changedUsers, deps);
  await claimSeedUsers(
    db,
    seedUsers.map((user) => user.sub),
    new Map([...changedUsers].map(([user, fingerprint]) => [user.sub, fingerprint])),
  );
  // Likewise a provider the file no longer names is disabled: its button goes on every instance.
  await applyIdentityProviders(db, seed.identity_providers ?? [], deps.now);
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

/**
 * Every entry's `totp_secret` needs the key-encryption key; only changed entries are applied, so an
 * authenticator app removed since (`users reset-mfa`, the account page) stays removed.
 */
async function applySeededTotpSecrets(
  db: AppDatabase,
  seedUsers: readonly SeedUser[],
  changedUsers: ReadonlyMap<SeedUser, string>,
  deps: SeedDependencies,
): Promise<void> {
  for (const user of seedUsers) {
    if (user.totp_secret !== undefined && deps.keyEncryptionKey === undefined) {
      throw new SeedError(`user ${user.username}: totp_secret needs the key-encryption key`);
    }
  }
  if (deps.keyEncryptionKey === undefined) return;
  for (const user of changedUsers.keys()) {
    await applySeededTotpSecret(db, deps.keyEncryptionKey, user.sub, user.totp_secret, deps.now);
  }
}

/** The client record an entry writes (also what `seed plan` compares, src/seed-plan/). */
export function clientRecord(
  client: SeedClient,
  deps: Pick<SeedDependencies, 'secrets' | 'lifetimes'>,
): Client {
  const secretHash =
    client.client_secret_hash ??
    (client.client_secret === undefined ? null : deps.secrets.hash(client.client_secret));
  return clientDefaults(client, { secretHash, lifetimes: deps.lifetimes });
}

export function resourceRecord(
  resource: SeedResource,
  deps: Pick<SeedDependencies, 'secrets' | 'lifetimes'>,
): Resource {
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

export function userRecord(user: SeedUser, passwordHash: string): User {
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
