import { sql } from 'drizzle-orm';
import { bigint, boolean, index, integer, jsonb, pgTable, primaryKey, text } from 'drizzle-orm/pg-core';
import type { JWK } from 'jose';

/**
 * The database schema: the source of truth for `drizzle-kit generate` (migrations in ../../drizzle).
 * Times are whole seconds since the epoch (bigint: int4 would overflow in 2038), matching the
 * oauth-core records. Tokens and codes are stored only as `hashToken(value)`.
 *
 * Sections:
 *   1. Registry (clients, resources, users): written by the seed loader.
 *   2. Protocol records (grants, codes, tokens): written through the oauth-core store contracts.
 *   3. Signing keys: private parts encrypted with KEY_ENCRYPTION_KEY.
 *   4. Interaction (SSO sessions, interactions, consents): owned by the /authorize + login work.
 *   5. Rate limiting: counters shared by every instance.
 *   6. Second factors: authenticator apps, their used time steps, recovery codes.
 *   7. Kerberos principals: which user a ticket's client principal signs in (seed).
 *   8. Passkeys: WebAuthn credentials and the challenges of ceremonies in progress.
 *   9. Mail links: the single-use tokens of mailed links (password reset).
 *  10. Audit events: the security events of src/audit.ts, kept for the retention period.
 *
 * Keep this file free of relative imports: drizzle-kit loads it on its own.
 */

const epochSeconds = (name: string) => bigint(name, { mode: 'number' });
const stringList = (name: string) => text(name).array().notNull().default(sql`'{}'::text[]`);

// ─── 1. Registry ─────────────────────────────────────────────────────────────────────────────────

export const clients = pgTable('clients', {
  clientId: text('client_id').primaryKey(),
  clientName: text('client_name').notNull(),
  /** Keyed HMAC of the secret (oauth-core `createSecretHasher`); null for a public client. */
  secretHash: text('secret_hash'),
  redirectUris: stringList('redirect_uris'),
  postLogoutRedirectUris: stringList('post_logout_redirect_uris'),
  grantTypes: stringList('grant_types'),
  scopes: stringList('scopes'),
  skipConsent: boolean('skip_consent').notNull().default(false),
  idTokenSigningAlg: text('id_token_signing_alg').notNull().default('RS256'),
  allowedCorsOrigins: stringList('allowed_cors_origins'),
  backchannelLogoutUri: text('backchannel_logout_uri'),
  frontchannelLogoutUri: text('frontchannel_logout_uri'),
  refreshTokensWithoutOfflineAccess: boolean('refresh_tokens_without_offline_access')
    .notNull()
    .default(false),
  refreshTokenAbsoluteTtl: integer('refresh_token_absolute_ttl').notNull(),
  refreshTokenSlidingTtl: integer('refresh_token_sliding_ttl').notNull(),
  /** RFC 9449 §5.2 `dpop_bound_access_tokens`: token requests without a DPoP proof are refused. */
  dpopBoundAccessTokens: boolean('dpop_bound_access_tokens').notNull().default(false),
  /** RFC 9449 §8: this client's DPoP proofs must carry a server nonce. */
  dpopNonceRequired: boolean('dpop_nonce_required').notNull().default(false),
  /** RFC 9126 §6: /authorize only with a `request_uri` obtained by PAR. */
  requirePushedAuthorizationRequests: boolean('require_pushed_authorization_requests')
    .notNull()
    .default(false),
  /** RFC 8693 policy (oauth-core `TokenExchangePolicy`); null: token exchange refused. */
  tokenExchange: jsonb('token_exchange').$type<{
    audiences: string[];
    scopes: string[];
    subjectTokenTypes: string[];
  }>(),
  /** Logout of the SSO session leaves this client's grants (refresh tokens) alive. */
  keepOfflineAccessOnLogout: boolean('keep_offline_access_on_logout').notNull().default(false),
  /** Every user signs in with a second factor for this client (seed `require_mfa`). */
  requireMfa: boolean('require_mfa').notNull().default(false),
  /** Seconds a rotated refresh token may be retried for the same successor (seed `refresh_token_reuse_interval`). */
  refreshTokenReuseInterval: integer('refresh_token_reuse_interval').notNull().default(0),
  /** RFC 7591 `token_endpoint_auth_method`: the methods this client may use (empty: by `secret_hash`). */
  authMethods: stringList('auth_methods'),
  /** RFC 7591 `jwks`: the client's public keys (private_key_jwt, request objects). */
  jwks: jsonb('jwks').$type<{ keys: JWK[] }>(),
  /** RFC 7591 `jwks_uri`: fetched with a timeout and cached by the server (src/plugins/client-authentication.ts). */
  jwksUri: text('jwks_uri'),
  /** OIDC Registration §2 `request_uris`: request objects the client hosts (RFC 9101 §5.2). */
  requestUris: stringList('request_uris'),
  /** RFC 9101 §10.5 `require_signed_request_object`. */
  requireSignedRequestObject: boolean('require_signed_request_object').notNull().default(false),
  /** `fapi2`: the FAPI 2.0 Security Profile applies (oauth-core fapi2.ts). */
  profile: text('profile'),
  /** JARM `authorization_signed_response_alg`: how signed authorization responses are signed. */
  authorizationSignedResponseAlg: text('authorization_signed_response_alg').notNull().default('RS256'),
  /** Every authorization response to this client is a signed JWT (JARM). */
  requireSignedAuthorizationResponse: boolean('require_signed_authorization_response')
    .notNull()
    .default(false),
  /** OIDC Registration §2 `userinfo_signed_response_alg`: UserInfo answers a JWT signed so; null: JSON. */
  userinfoSignedResponseAlg: text('userinfo_signed_response_alg'),
  /**
   * Set when the seed file no longer names this entry (or an operator disabled it): every lookup
   * of the registry skips the row, so sign-in, client authentication and its tokens stop working,
   * while grants and history keep their references. Null: enabled.
   */
  disabledAt: epochSeconds('disabled_at'),
  updatedAt: epochSeconds('updated_at').notNull(),
  /**
   * RFC 7591: when the client registered itself at the registration endpoint; null for a seed
   * client. The seed reconciliation leaves registered clients alone, and a seed entry of the same
   * id (an operator adopting the client with `clients export`) clears it.
   */
  registeredAt: epochSeconds('registered_at'),
  /** RFC 7592 §1: keyed HMAC of the registration access token (oauth-core `createSecretHasher`). */
  registrationAccessTokenHash: text('registration_access_token_hash'),
  /** RFC 7591 §3.2.1: the metadata as registered, answered again by RFC 7592 reads and updates. */
  registrationMetadata: jsonb('registration_metadata').$type<Record<string, unknown>>(),
});

export const resources = pgTable('resources', {
  id: text('id').primaryKey(),
  scopes: stringList('scopes'),
  accessTokenFormat: text('access_token_format').notNull(),
  accessTokenTtl: integer('access_token_ttl').notNull(),
  accessTokenSigningAlg: text('access_token_signing_alg').notNull().default('ES256'),
  /** Keyed HMAC of the introspection secret; null when the resource cannot introspect. */
  secretHash: text('secret_hash'),
  claims: stringList('claims'),
  /** Access tokens only from grants that met the multi-factor level (seed `require_mfa`). */
  requireMfa: boolean('require_mfa').notNull().default(false),
  /** See `clients.disabledAt`. */
  disabledAt: epochSeconds('disabled_at'),
  updatedAt: epochSeconds('updated_at').notNull(),
});

export const users = pgTable('users', {
  sub: text('sub').primaryKey(),
  username: text('username').notNull().unique(),
  /** scrypt, `scrypt$N$r$p$salt$hash` (oauth-core `hashPassword`). */
  passwordHash: text('password_hash').notNull(),
  name: text('name'),
  email: text('email'),
  emailVerified: boolean('email_verified').notNull().default(false),
  allowedScopes: text('allowed_scopes').array(),
  /** The user always signs in with a second factor (seed `mfa_required`). */
  mfaRequired: boolean('mfa_required').notNull().default(false),
  /** See `clients.disabledAt`. */
  disabledAt: epochSeconds('disabled_at'),
  updatedAt: epochSeconds('updated_at').notNull(),
  /**
   * Who keeps this user: `seed` (the seed file names it, or named it: a start whose file no longer
   * names it disables it) or `operator` (`users add`, or `users enable` of a user the file dropped;
   * the seed leaves it alone), `directory` (created at a first sign-in with a directory account) or
   * `federation` (created at a first sign-in through an upstream OpenID provider); the seed leaves
   * the last two alone. Rows from before this column were all written by the seed or by an earlier
   * `users add` that the next start disabled anyway, so `seed` is their default.
   */
  managedBy: text('managed_by')
    .$type<'seed' | 'operator' | 'directory' | 'federation'>()
    .notNull()
    .default('seed'),
  /**
   * Who set `disabled_at`: the seed re-enables only a user it disabled itself, never one an
   * operator disabled. Null while enabled, and for users disabled before this column existed.
   */
  disabledBy: text('disabled_by').$type<'seed' | 'operator'>(),
  /**
   * Keyed HMAC of the seed entry last applied to this row (src/accounts/drizzle/seed-users.ts): the seed
   * writes the entry's attributes again only when the entry changed, so a password reset or a
   * removed factor outlives restarts. Null: never applied (the next start applies the entry).
   */
  seedFingerprint: text('seed_fingerprint'),
  /**
   * The `groups` claim: a directory user's group names (`cn`s of the groups matched by full DN),
   * or the names an upstream OpenID provider's mapped claim sent, written at each sign-in. Null
   * for users nobody speaks for (no `groups` claim).
   */
  groups: text('groups').array(),
  /**
   * Who owns each profile claim (src/accounts/claim-ownership.ts): `{"name": "idp:corp",
   * "email": "local", "groups": "ldap"}`. A sign-in through a source rewrites only the claims
   * that source owns; `email` covers `email_verified` too. A claim without an entry is the local
   * account's own (or, for federated users from before this column, their provider's).
   */
  claimSources: jsonb('claim_sources')
    .$type<Partial<Record<'name' | 'email' | 'groups', string>>>()
    .notNull()
    .default({}),
  /**
   * The language of the pages the user last signed in with (src/i18n/languages.ts, `de`): mails
   * go out in it. Null until the first sign-in after this column (mails then use the fallback).
   */
  locale: text('locale'),
});

// ─── 2. Protocol records ─────────────────────────────────────────────────────────────────────────
// No foreign keys to `grants`: the store contracts let rows be written in any order inside one
// transaction, and revocation goes through `grant_id` indexes instead.

export const grants = pgTable(
  'grants',
  {
    id: text('id').primaryKey(),
    clientId: text('client_id').notNull(),
    sub: text('sub').notNull(),
    scopes: stringList('scopes'),
    resources: stringList('resources'),
    sid: text('sid'),
    authTime: epochSeconds('auth_time'),
    /** RFC 8176 `amr` and OIDC `acr` of the sign-in; a refresh keeps them. */
    amr: text('amr').array(),
    acr: text('acr'),
    createdAt: epochSeconds('created_at').notNull(),
    revokedAt: epochSeconds('revoked_at'),
  },
  // Logout finds the grants of an SSO session by `sid`.
  (table) => [index('grants_sid_idx').on(table.sid)],
);

export const authorizationCodes = pgTable(
  'authorization_codes',
  {
    codeHash: text('code_hash').primaryKey(),
    grantId: text('grant_id').notNull(),
    clientId: text('client_id').notNull(),
    sub: text('sub').notNull(),
    redirectUri: text('redirect_uri').notNull(),
    codeChallenge: text('code_challenge'),
    nonce: text('nonce'),
    scopes: stringList('scopes'),
    resources: stringList('resources'),
    sid: text('sid'),
    authTime: epochSeconds('auth_time').notNull(),
    expiresAt: epochSeconds('expires_at').notNull(),
    usedAt: epochSeconds('used_at'),
    /** RFC 9449 §10 `dpop_jkt`: the token request must prove this key. */
    dpopJkt: text('dpop_jkt'),
  },
  // Only the primary key: a code is looked up by its hash and by nothing else. The table stays
  // logged: an UNLOGGED one would save the WAL of a code's insert and consumption, but a standby
  // would not have it, so every sign-in in flight at a failover would end in `invalid_grant`
  // although the failover pool waits for the new primary (docs/token-storage.md).
);

export const refreshTokens = pgTable(
  'refresh_tokens',
  {
    tokenHash: text('token_hash').primaryKey(),
    grantId: text('grant_id').notNull(),
    clientId: text('client_id').notNull(),
    sub: text('sub').notNull(),
    scopes: stringList('scopes'),
    resources: stringList('resources'),
    parentHash: text('parent_hash'),
    createdAt: epochSeconds('created_at').notNull(),
    expiresAt: epochSeconds('expires_at').notNull(),
    usedAt: epochSeconds('used_at'),
    revokedAt: epochSeconds('revoked_at'),
    dpopJkt: text('dpop_jkt'),
    /** This token sealed under its parent token (oauth-core `tokens/successor-seal.ts`), for retries within the client's reuse interval. */
    sealedUnderParent: text('sealed_under_parent'),
    /**
     * The token that replaced this one, written by the rotation's own UPDATE: a retry within the
     * reuse interval finds the successor by two primary-key reads (rows without it: by `grant_id`
     * and `parent_hash`), so no index on `parent_hash` costs every rotation an index insert.
     */
    successorHash: text('successor_hash'),
  },
  // Revocation of a whole chain (RFC 9700 §4.14.2) finds the grant's tokens by `grant_id`. The
  // table keeps 30 % of each page free (fillfactor 70, the `token_storage_writes` migration), so a
  // rotation's update of the row stays on its page and touches no index.
  (table) => [index('refresh_tokens_grant_id_idx').on(table.grantId)],
);

export const accessTokens = pgTable(
  'access_tokens',
  {
    tokenHash: text('token_hash').primaryKey(),
    /** Null for client_credentials tokens, which belong to no user grant. */
    grantId: text('grant_id'),
    clientId: text('client_id').notNull(),
    sub: text('sub').notNull(),
    scopes: stringList('scopes'),
    audience: stringList('audience'),
    issuedAt: epochSeconds('issued_at').notNull(),
    expiresAt: epochSeconds('expires_at').notNull(),
    revokedAt: epochSeconds('revoked_at'),
    dpopJkt: text('dpop_jkt'),
    claims: jsonb('claims').$type<Record<string, unknown>>().notNull().default({}),
  },
  (table) => [index('access_tokens_grant_id_idx').on(table.grantId)],
);

/** RFC 7009 for self-contained (JWT) access tokens: a `jti` denylist kept until the token expires. */
export const revokedJwtAccessTokens = pgTable(
  'revoked_jwt_access_tokens',
  {
    jti: text('jti').primaryKey(),
    expiresAt: epochSeconds('expires_at').notNull(),
  },
  (table) => [index('revoked_jwt_access_tokens_expires_at_idx').on(table.expiresAt)],
);

/**
 * Single-use JWT ids already seen (oauth-core `JtiReplayStore`): DPoP proofs (RFC 9449 §11.1, by
 * `hashToken(jkt + "." + jti)`), client assertions (RFC 7523 §3, `client_assertion:<client>:<jti>`)
 * and request objects (RFC 9101, `request_object:<client>:<jti>`), each kept until the JWT would be
 * refused for its age anyway; expired rows are deleted periodically. The name is historical.
 */
export const dpopJtis = pgTable(
  'dpop_jtis',
  {
    key: text('key').primaryKey(),
    expiresAt: epochSeconds('expires_at').notNull(),
  },
  (table) => [index('dpop_jtis_expires_at_idx').on(table.expiresAt)],
);

/** RFC 9126 pushed authorization requests, by the hash of their `request_uri`; single use, short-lived. */
export const pushedAuthorizationRequests = pgTable(
  'pushed_authorization_requests',
  {
    requestUriHash: text('request_uri_hash').primaryKey(),
    clientId: text('client_id').notNull(),
    /** The validated authorization parameters, single-valued (RFC 8707 `resource` apart). */
    params: jsonb('params').$type<Record<string, string>>().notNull(),
    resources: stringList('resources'),
    createdAt: epochSeconds('created_at').notNull(),
    expiresAt: epochSeconds('expires_at').notNull(),
    /** When the authorization it started issued a code (RFC 9126 §7.3 single use); null before. */
    usedAt: epochSeconds('used_at'),
  },
  (table) => [index('pushed_authorization_requests_expires_at_idx').on(table.expiresAt)],
);

/**
 * RFC 8628 device authorizations. Found by the hash of the device code (token endpoint) or of the
 * normalised user code (verification page); neither code is stored in clear.
 */
export const deviceCodes = pgTable(
  'device_codes',
  {
    deviceCodeHash: text('device_code_hash').primaryKey(),
    userCodeHash: text('user_code_hash').notNull().unique(),
    clientId: text('client_id').notNull(),
    scopes: stringList('scopes'),
    resources: stringList('resources'),
    createdAt: epochSeconds('created_at').notNull(),
    expiresAt: epochSeconds('expires_at').notNull(),
    /** Seconds between polls (RFC 8628 §3.5 `slow_down` adds 5). */
    pollInterval: integer('poll_interval').notNull(),
    lastPolledAt: epochSeconds('last_polled_at'),
    /** pending | approved | denied | redeemed */
    status: text('status').notNull(),
    grantId: text('grant_id'),
    sub: text('sub'),
    decidedAt: epochSeconds('decided_at'),
    redeemedAt: epochSeconds('redeemed_at'),
  },
  (table) => [index('device_codes_expires_at_idx').on(table.expiresAt)],
);

// ─── 3. Signing keys ─────────────────────────────────────────────────────────────────────────────

export const signingKeys = pgTable('signing_keys', {
  kid: text('kid').primaryKey(),
  alg: text('alg').notNull(),
  publicJwk: jsonb('public_jwk').$type<JWK>().notNull(),
  /** AES-256-GCM under KEY_ENCRYPTION_KEY, bound to the kid (src/keys/key-encryption.ts). */
  privateKeyCiphertext: text('private_key_ciphertext').notNull(),
  createdAt: epochSeconds('created_at').notNull(),
  activatesAt: epochSeconds('activates_at').notNull(),
  retiresAt: epochSeconds('retires_at'),
  removeAfter: epochSeconds('remove_after'),
});

// ─── 4. Interaction (SSO sessions, interactions, consents) ───────────────────────────────────────
// Owned by the /authorize, login and consent work; add those tables below this line.

/**
 * The single-sign-on session (OIDC `sid` = `id`). The browser holds an opaque random key in a
 * cookie; only its hash is stored, so a database read does not yield usable session cookies.
 */
export const ssoSessions = pgTable(
  'sso_sessions',
  {
    id: text('id').primaryKey(),
    keyHash: text('key_hash').notNull().unique(),
    sub: text('sub').notNull(),
    /** OIDC `auth_time`: when the user last entered credentials in this session. */
    authTime: epochSeconds('auth_time').notNull(),
    /**
     * The sign-in methods completed in this session (oauth-core `CompletedMethod`): a password
     * sign-in starts the list, a second factor or step-up adds to it.
     */
    methods: jsonb('methods')
      .$type<Array<{ method: string; at: number; userVerified?: boolean; synced?: boolean }>>()
      .notNull()
      .default(sql`'[]'::jsonb`),
    createdAt: epochSeconds('created_at').notNull(),
    expiresAt: epochSeconds('expires_at').notNull(),
    /**
     * Where the session was signed in from, for the account page's list of sessions: the
     * User-Agent header as sent (truncated) and the client address (`request.ip`, which honours
     * TRUST_PROXY). Null for sessions from before migration 0010, or a request without the header.
     */
    userAgent: text('user_agent'),
    ip: text('ip'),
    /** When a request last presented the session's cookie, to the minute; null before migration 0010. */
    lastUsedAt: epochSeconds('last_used_at'),
  },
  (table) => [
    index('sso_sessions_sub_idx').on(table.sub),
    index('sso_sessions_expires_at_idx').on(table.expiresAt),
  ],
);

/**
 * A validated authorization request waiting for the user (login or consent). Bound to the browser
 * that started it by `browser_hash` (hash of a cookie), single-use, short-lived.
 */
export const interactions = pgTable(
  'interactions',
  {
    id: text('id').primaryKey(),
    browserHash: text('browser_hash').notNull(),
    /** The /authorize parameters as received; re-validated by oauth-core on every step. */
    request: jsonb('request')
      .$type<{ params: Record<string, string>; resources: string[]; pushedRequestUriHash?: string }>()
      .notNull(),
    /** The SSO session a login inside this interaction created (satisfies prompt=login, max_age). */
    loginSid: text('login_sid'),
    /** Scopes the user approved inside this interaction (satisfies prompt=consent). */
    approvedScopes: text('approved_scopes').array(),
    /**
     * Set when the interaction approves a device (RFC 8628 verification page) instead of answering
     * an /authorize request: the hash of the device code it decides. `request` is then empty.
     */
    deviceCodeHash: text('device_code_hash'),
    createdAt: epochSeconds('created_at').notNull(),
    expiresAt: epochSeconds('expires_at').notNull(),
  },
  (table) => [index('interactions_expires_at_idx').on(table.expiresAt)],
);

/** Remembered consent: later requests whose scopes are covered skip the consent page. */
export const consents = pgTable(
  'consents',
  {
    sub: text('sub').notNull(),
    clientId: text('client_id').notNull(),
    scopes: stringList('scopes'),
    createdAt: epochSeconds('created_at').notNull(),
    updatedAt: epochSeconds('updated_at').notNull(),
  },
  (table) => [primaryKey({ columns: [table.sub, table.clientId] })],
);

// ─── 5. Rate limiting ────────────────────────────────────────────────────────────────────────────

/**
 * Fixed-window counters for @fastify/rate-limit (src/http/database-rate-limit-store.ts), shared by
 * every instance so a limit holds behind a load balancer. `key` is the route group and client IP.
 */
export const rateLimitCounters = pgTable(
  'rate_limit_counters',
  {
    key: text('key').primaryKey(),
    /** Milliseconds since the epoch. */
    windowStartedAt: bigint('window_started_at', { mode: 'number' }).notNull(),
    hits: integer('hits').notNull(),
  },
  (table) => [index('rate_limit_counters_window_started_at_idx').on(table.windowStartedAt)],
);

// ─── 6. Second factors ───────────────────────────────────────────────────────────────────────────

/**
 * Authenticator apps (RFC 6238 TOTP). The secret is encrypted with KEY_ENCRYPTION_KEY like the
 * signing keys (AAD = `totp:<id>`). `confirmed_at` is null while an enrolment waits for its first
 * valid code; such a row never counts as a factor.
 */
export const totpCredentials = pgTable(
  'totp_credentials',
  {
    id: text('id').primaryKey(),
    sub: text('sub').notNull(),
    name: text('name').notNull(),
    secretEncrypted: text('secret_encrypted').notNull(),
    createdAt: epochSeconds('created_at').notNull(),
    confirmedAt: epochSeconds('confirmed_at'),
    lastUsedAt: epochSeconds('last_used_at'),
  },
  (table) => [index('totp_credentials_sub_idx').on(table.sub)],
);

/**
 * RFC 6238 §5.2: "the verifier MUST NOT accept the second attempt of the OTP after the successful
 * validation has been issued for the first OTP". One row per user and accepted time step; the
 * primary key makes the conditional insert the single race-critical step across instances.
 */
export const totpUsedSteps = pgTable(
  'totp_used_steps',
  {
    sub: text('sub').notNull(),
    step: bigint('step', { mode: 'number' }).notNull(),
    usedAt: epochSeconds('used_at').notNull(),
  },
  (table) => [primaryKey({ columns: [table.sub, table.step] })],
);

/**
 * Recovery codes: ten single-use codes per user, shown once. Only a keyed HMAC of each is stored
 * (key derived from KEY_ENCRYPTION_KEY), so a copied table cannot be searched offline.
 */
export const recoveryCodes = pgTable(
  'recovery_codes',
  {
    sub: text('sub').notNull(),
    codeHash: text('code_hash').notNull(),
    createdAt: epochSeconds('created_at').notNull(),
    usedAt: epochSeconds('used_at'),
  },
  (table) => [primaryKey({ columns: [table.sub, table.codeHash] })],
);

// ─── 7. Kerberos principals ──────────────────────────────────────────────────────────────────────

/**
 * Seed user member `kerberos_principal` (README "Kerberos"): the client principal of a ticket,
 * `name@REALM`, matched exactly (case-sensitive, realm included). Written with the seed; one
 * principal names at most one user. Kept apart from `users` so the protocol's User stays free of it.
 */
export const kerberosPrincipals = pgTable(
  'kerberos_principals',
  {
    principal: text('principal').primaryKey(),
    sub: text('sub').notNull(),
    updatedAt: epochSeconds('updated_at').notNull(),
  },
  (table) => [index('kerberos_principals_sub_idx').on(table.sub)],
);

/**
 * A person whose identity lives elsewhere: a directory entry (`source` = `ldap`, `subject` = the
 * directory's stable id, `entryUUID` or the decoded `objectGUID`) or an upstream OpenID provider
 * (`source` = `idp:<id>`, `subject` = the upstream's stable subject, `sub`, or `tid:oid` for Entra
 * ID). Keyed by that stable id and never by a mutable name or e-mail address, so the local `sub`
 * issued to our clients never changes, and a deleted and re-created account is a new person. One
 * local user may hold several external identities (linked providers).
 */
export const externalIdentities = pgTable(
  'external_identities',
  {
    source: text('source').notNull(),
    subject: text('subject').notNull(),
    sub: text('sub').notNull(),
    createdAt: epochSeconds('created_at').notNull(),
    lastSignInAt: epochSeconds('last_sign_in_at'),
  },
  (table) => [
    primaryKey({ columns: [table.source, table.subject] }),
    index('external_identities_sub_idx').on(table.sub),
  ],
);

/**
 * The upstream OpenID providers the seed file registers (`identity_providers`), so every instance
 * agrees which are on: a provider the file no longer names gets `disabled_at` and its button goes.
 * Secrets are not stored: each instance reads them from its seed (by value or file).
 */
export const identityProviders = pgTable('identity_providers', {
  id: text('id').primaryKey(),
  issuer: text('issuer').notNull(),
  clientId: text('client_id').notNull(),
  displayName: text('display_name').notNull(),
  updatedAt: epochSeconds('updated_at').notNull(),
  disabledAt: epochSeconds('disabled_at'),
});

/**
 * One sign-in started at an upstream provider, until its callback (OIDC Core §3.1.2.1, RFC 7636):
 * found by the hash of `state`, and bound to the browser, the interaction and the provider it was
 * started for, so any instance can finish it and only once (`used_at`, set conditionally).
 * `purpose` is `sign_in`, `account_link` (a signed-in user links a provider from the account page:
 * no interaction, `link_sub` is that user) or `logout` (our logout continued at the provider's end_session_endpoint, OIDC
 * RP-Initiated Logout 1.0 §2/§3).
 */
export const upstreamAuthorizations = pgTable(
  'upstream_authorizations',
  {
    stateHash: text('state_hash').primaryKey(),
    providerId: text('provider_id').notNull(),
    browserHash: text('browser_hash').notNull(),
    interactionId: text('interaction_id'),
    purpose: text('purpose')
      // `link` rows of older versions (a pending link) are no longer written: pending_upstream_links.
      .$type<'sign_in' | 'link' | 'account_link' | 'logout'>()
      .notNull()
      .default('sign_in'),
    linkSub: text('link_sub'),
    /** `logout`: where the browser goes once the provider sent it back (a client's post-logout URI). */
    returnTo: text('return_to'),
    codeVerifier: text('code_verifier').notNull(),
    nonce: text('nonce').notNull(),
    createdAt: epochSeconds('created_at').notNull(),
    expiresAt: epochSeconds('expires_at').notNull(),
    usedAt: epochSeconds('used_at'),
  },
  (table) => [index('upstream_authorizations_expires_idx').on(table.expiresAt)],
);

/**
 * A link offered after a first upstream sign-in whose verified address is an existing account's
 * (README "Upstream identity providers"): until the account's owner proves it (password or mailed
 * link), the upstream identity (`provider_id`, `upstream_subject`) waits here for the account
 * `sub`. Found by the hash of the link page's token, bound to the browser and the interaction it
 * was offered in, and taken once (`used_at`, set conditionally), so one proof per offer.
 */
export const pendingUpstreamLinks = pgTable(
  'pending_upstream_links',
  {
    tokenHash: text('token_hash').primaryKey(),
    providerId: text('provider_id').notNull(),
    upstreamSubject: text('upstream_subject').notNull(),
    sub: text('sub').notNull(),
    browserHash: text('browser_hash').notNull(),
    interactionId: text('interaction_id').notNull(),
    createdAt: epochSeconds('created_at').notNull(),
    expiresAt: epochSeconds('expires_at').notNull(),
    usedAt: epochSeconds('used_at'),
  },
  (table) => [index('pending_upstream_links_expires_idx').on(table.expiresAt)],
);

/**
 * The upstream ID token each federated SSO session began with (for `id_token_hint` at the
 * provider's end_session_endpoint) and the upstream `sid`, so a back-channel logout from the
 * provider finds the sessions it started (OIDC Back-Channel Logout 1.0 §2.6).
 */
export const federatedSessions = pgTable(
  'federated_sessions',
  {
    sessionId: text('session_id').primaryKey(),
    providerId: text('provider_id').notNull(),
    upstreamSubject: text('upstream_subject').notNull(),
    upstreamSid: text('upstream_sid'),
    idToken: text('id_token').notNull(),
    createdAt: epochSeconds('created_at').notNull(),
  },
  (table) => [index('federated_sessions_provider_subject_idx').on(table.providerId, table.upstreamSubject)],
);

// ─── 8. Passkeys (WebAuthn Level 3) ──────────────────────────────────────────────────────────────

/**
 * A WebAuthn public key credential (README "Passkeys"). `id` is the credential ID (WebAuthn §4,
 * base64url), unique across the RP; `public_key` the COSE key (base64url). `counter` is the
 * signature counter (§6.1.1) and `backed_up` the backup state `BS` (§6.1.3), both updated at every
 * use; `device_type` is `multiDevice` when the backup eligibility flag `BE` was set at registration.
 */
export const passkeyCredentials = pgTable(
  'passkey_credentials',
  {
    id: text('id').primaryKey(),
    sub: text('sub').notNull(),
    /**
     * The WebAuthn user handle (§5.4.3 `user.id`, base64url) the credential was created with: 32
     * random bytes per user (§14.6.1: not the username, not the `sub`), the same for all the user's
     * credentials. A discoverable credential's assertion returns it (§7.2 step 6).
     */
    userHandle: text('user_handle').notNull(),
    name: text('name').notNull(),
    publicKey: text('public_key').notNull(),
    counter: bigint('counter', { mode: 'number' }).notNull(),
    /** §5.8.4 AuthenticatorTransport hints, given back in `allowCredentials`. */
    transports: stringList('transports'),
    deviceType: text('device_type').$type<'singleDevice' | 'multiDevice'>().notNull(),
    backedUp: boolean('backed_up').notNull(),
    /** §6.5.1 AAGUID of the authenticator model (all zeros without attestation). */
    aaguid: text('aaguid').notNull(),
    createdAt: epochSeconds('created_at').notNull(),
    lastUsedAt: epochSeconds('last_used_at'),
  },
  (table) => [index('passkey_credentials_sub_idx').on(table.sub)],
);

/**
 * The challenge of a WebAuthn registration in progress (§13.4.3: generated by the server, used
 * once). `binding` names who may finish it: a hash of the browser cookie, the ceremony and the
 * session it belongs to, so a challenge issued to one browser cannot be answered from another and
 * a second ceremony replaces the first. A sign-in's challenge is sealed instead of stored; once
 * answered it is kept here as spent, under a key of its own, until it expires
 * (src/mfa/webauthn-challenges.ts). Shared by every instance.
 */
export const webauthnChallenges = pgTable(
  'webauthn_challenges',
  {
    binding: text('binding').primaryKey(),
    challenge: text('challenge').notNull(),
    /** The user the ceremony is for (registration, second factor); null for a discoverable sign-in. */
    sub: text('sub'),
    /** Registration: the user handle (§5.4.3) the options carried, stored with the credential. */
    userHandle: text('user_handle'),
    expiresAt: epochSeconds('expires_at').notNull(),
  },
  (table) => [index('webauthn_challenges_expires_at_idx').on(table.expiresAt)],
);

// ─── 9. Mail links ───────────────────────────────────────────────────────────────────────────────

/**
 * The token of a mailed link (README "Email"): 256 random bits, stored only as `hashToken(value)`.
 * One row per user and purpose, so a new request replaces (voids) the previous link. `binding` is
 * a hash of the user's password hash (reset) or of the address (verification) when the link was
 * made: a password change, or a change of address, voids the link.
 * Consumed by one conditional `DELETE … RETURNING`, so it works once across every instance.
 */
export const mailTokens = pgTable(
  'mail_tokens',
  {
    sub: text('sub').notNull(),
    /** `password_reset`, `email_verification`, `email_change`, `email_change_undo` or `upstream_link`. */
    purpose: text('purpose').notNull(),
    tokenHash: text('token_hash').notNull().unique(),
    binding: text('binding').notNull(),
    /** The address the link was mailed to (a completed reset marks it verified). */
    email: text('email').notNull(),
    createdAt: epochSeconds('created_at').notNull(),
    expiresAt: epochSeconds('expires_at').notNull(),
  },
  (table) => [
    primaryKey({ columns: [table.sub, table.purpose] }),
    index('mail_tokens_expires_at_idx').on(table.expiresAt),
  ],
);

// ─── 10. Audit events ────────────────────────────────────────────────────────────────────────────

/**
 * One security event (src/audit.ts) as stored for the console, the admin API and the account page,
 * besides its log line. Written in batches by src/audit/audit-event-writer.ts; rows older than
 * AUDIT_RETENTION_DAYS are deleted in batches by every instance. Read newest first by keyset
 * pagination on (`time`, `id`): each filter the console offers (subject, client, event name) has
 * its own index ending in those two columns, so a page is an index range scan at any table size.
 */
export const auditEvents = pgTable(
  'audit_events',
  {
    id: bigint('id', { mode: 'number' }).primaryKey().generatedAlwaysAsIdentity(),
    time: epochSeconds('time').notNull(),
    /** An AUDIT_EVENTS value (`auth.login.succeeded`, …). */
    event: text('event').notNull(),
    sub: text('sub'),
    clientId: text('client_id'),
    ip: text('ip'),
    /** The operator who acted (admin API, console): their `sub`; null for the user's own actions. */
    actor: text('actor'),
    outcome: text('outcome').$type<'success' | 'failure'>().notNull(),
    /** The event's other identifiers (AuditFields), scrubbed like the log line. */
    details: jsonb('details').$type<Record<string, unknown>>().notNull(),
  },
  (table) => [
    index('audit_events_time_idx').on(table.time, table.id),
    index('audit_events_sub_time_idx')
      .on(table.sub, table.time, table.id)
      .where(sql`${table.sub} is not null`),
    index('audit_events_client_time_idx')
      .on(table.clientId, table.time, table.id)
      .where(sql`${table.clientId} is not null`),
    index('audit_events_event_time_idx').on(table.event, table.time, table.id),
  ],
);
