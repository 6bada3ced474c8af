import { CLIENT_AUTHENTICATION_METHOD_NAMES, registeredGrantTypes } from '@oidc-orders/oauth-core';
import { type Static, Type } from '@sinclair/typebox';

/**
 * The seed file (CONTRACT.md "Seed file", README "Seed file reference"). Every object rejects
 * unknown members (`additionalProperties: false`) so a typo fails the start instead of being ignored.
 */

const Seconds = Type.Integer({ minimum: 1, maximum: 31_536_000 * 10 });
const SigningAlg = Type.Union([Type.Literal('RS256'), Type.Literal('ES256')]);
const NonEmptyString = Type.String({ minLength: 1, maxLength: 2048 });

/**
 * Grant types a client may register: those of the token endpoint's registry (oauth-core). The
 * forbidden ones (oauth-core FORBIDDEN_GRANT_TYPES) are refused earlier, with their own message.
 */
export const SEEDABLE_GRANT_TYPES = registeredGrantTypes();

/** RFC 7591 §2 `token_endpoint_auth_method` values: oauth-core's client authentication table. */
export const SEEDABLE_AUTH_METHODS = CLIENT_AUTHENTICATION_METHOD_NAMES;

const ScopeToken = Type.String({ pattern: '^[\\x21\\x23-\\x5B\\x5D-\\x7E]+$' });

/** RFC 8693 subject token types a policy may accept. */
export const EXCHANGEABLE_SUBJECT_TOKEN_TYPES = [
  'urn:ietf:params:oauth:token-type:access_token',
  'urn:ietf:params:oauth:token-type:id_token',
] as const;

/** `token_exchange`: what a client may obtain by RFC 8693 token exchange (README "Token exchange"). */
export const SeedTokenExchangePolicySchema = Type.Object(
  {
    audiences: Type.Array(NonEmptyString),
    scopes: Type.Array(ScopeToken),
    subject_token_types: Type.Optional(
      Type.Array(Type.Union(EXCHANGEABLE_SUBJECT_TOKEN_TYPES.map((type) => Type.Literal(type))), {
        minItems: 1,
      }),
    ),
  },
  { additionalProperties: false },
);

export const SeedClientSchema = Type.Object(
  {
    client_id: NonEmptyString,
    client_name: Type.Optional(NonEmptyString),
    client_secret: Type.Optional(NonEmptyString),
    client_secret_hash: Type.Optional(Type.String({ pattern: '^hmac-sha256\\$[A-Za-z0-9_-]{43}$' })),
    redirect_uris: Type.Optional(Type.Array(NonEmptyString)),
    post_logout_redirect_uris: Type.Optional(Type.Array(NonEmptyString)),
    grant_types: Type.Optional(
      Type.Array(Type.Union(SEEDABLE_GRANT_TYPES.map((grant) => Type.Literal(grant)))),
    ),
    scope: Type.Optional(Type.String({ maxLength: 4096 })),
    skip_consent: Type.Optional(Type.Boolean()),
    id_token_signed_response_alg: Type.Optional(SigningAlg),
    allowed_cors_origins: Type.Optional(Type.Array(NonEmptyString)),
    backchannel_logout_uri: Type.Optional(NonEmptyString),
    frontchannel_logout_uri: Type.Optional(NonEmptyString),
    refresh_tokens_without_offline_access: Type.Optional(Type.Boolean()),
    refresh_token_absolute_ttl: Type.Optional(Seconds),
    refresh_token_sliding_ttl: Type.Optional(Seconds),
    dpop_bound_access_tokens: Type.Optional(Type.Boolean()),
    dpop_nonce_required: Type.Optional(Type.Boolean()),
    require_pushed_authorization_requests: Type.Optional(Type.Boolean()),
    token_exchange: Type.Optional(SeedTokenExchangePolicySchema),
    keep_offline_access_on_logout: Type.Optional(Type.Boolean()),
    require_mfa: Type.Optional(Type.Boolean()),
    // Range checked by oauth-core's clientRegistrationProblems, which names the member.
    refresh_token_reuse_interval: Type.Optional(Type.Number()),
    token_endpoint_auth_method: Type.Optional(
      Type.Union(SEEDABLE_AUTH_METHODS.map((method) => Type.Literal(method))),
    ),
    jwks: Type.Optional(
      Type.Object(
        { keys: Type.Array(Type.Record(Type.String(), Type.Unknown()), { minItems: 1, maxItems: 20 }) },
        { additionalProperties: false },
      ),
    ),
    jwks_uri: Type.Optional(NonEmptyString),
    request_uris: Type.Optional(Type.Array(NonEmptyString, { maxItems: 20 })),
    require_signed_request_object: Type.Optional(Type.Boolean()),
    authorization_signed_response_alg: Type.Optional(SigningAlg),
    userinfo_signed_response_alg: Type.Optional(SigningAlg),
    require_signed_authorization_response: Type.Optional(Type.Boolean()),
    profile: Type.Optional(Type.Literal('fapi2')),
  },
  { additionalProperties: false },
);

export const SeedResourceSchema = Type.Object(
  {
    id: NonEmptyString,
    scopes: Type.Array(Type.String({ pattern: '^[\\x21\\x23-\\x5B\\x5D-\\x7E]+$' })),
    access_token_format: Type.Optional(Type.Union([Type.Literal('jwt'), Type.Literal('opaque')])),
    access_token_ttl: Type.Optional(Seconds),
    access_token_signing_alg: Type.Optional(SigningAlg),
    secret: Type.Optional(NonEmptyString),
    secret_hash: Type.Optional(Type.String({ pattern: '^hmac-sha256\\$[A-Za-z0-9_-]{43}$' })),
    claims: Type.Optional(Type.Array(NonEmptyString)),
    require_mfa: Type.Optional(Type.Boolean()),
  },
  { additionalProperties: false },
);

export const SeedUserSchema = Type.Object(
  {
    sub: Type.String({ minLength: 1, maxLength: 255 }),
    username: Type.String({ minLength: 1, maxLength: 255 }),
    password: Type.Optional(Type.String({ minLength: 1, maxLength: 1024 })),
    password_hash: Type.Optional(Type.String({ pattern: '^scrypt\\$' })),
    name: Type.Optional(Type.String()),
    email: Type.Optional(Type.String({ minLength: 3 })),
    email_verified: Type.Optional(Type.Boolean()),
    allowed_scopes: Type.Optional(Type.Array(NonEmptyString)),
    /** Kerberos client principal, `name@REALM`, matched exactly (README "Kerberos"). */
    kerberos_principal: Type.Optional(Type.String({ pattern: '^[^@\\s]+@[^@\\s]+$', maxLength: 1024 })),
    /** RFC 4648 base32 (spaces allowed): pre-enrols an authenticator app; stored encrypted. */
    totp_secret: Type.Optional(Type.String({ pattern: '^[A-Za-z2-7 ]{16,128}=*$' })),
    mfa_required: Type.Optional(Type.Boolean()),
  },
  { additionalProperties: false },
);

/**
 * An upstream OpenID provider (CONTRACT "Upstream identity providers", README "Upstream identity
 * providers"); the rules beyond the shape live in federation/provider-rules.ts.
 */
export const SeedIdentityProviderSchema = Type.Object(
  {
    /** In URLs (`/idp/<id>/callback`) and in `external_identities.source` (`idp:<id>`). */
    id: Type.String({ pattern: '^[a-z0-9][a-z0-9_-]{0,62}$' }),
    issuer: Type.String({ minLength: 1, maxLength: 2048 }),
    client_id: NonEmptyString,
    client_secret: Type.Optional(Type.String({ minLength: 1, maxLength: 4096 })),
    /** A file holding the secret (a mounted Kubernetes or Docker secret); trailing newline ignored. */
    client_secret_file: Type.Optional(NonEmptyString),
    token_endpoint_auth_method: Type.Optional(
      Type.Union([
        Type.Literal('client_secret_basic'),
        Type.Literal('client_secret_post'),
        Type.Literal('private_key_jwt'),
      ]),
    ),
    /** private_key_jwt: a PKCS#8 PEM file with the private key whose public half the provider holds. */
    private_key_file: Type.Optional(NonEmptyString),
    private_key_id: Type.Optional(NonEmptyString),
    scope: Type.String({ pattern: '(^|\\s)openid(\\s|$)' }),
    display_name: Type.String({ minLength: 1, maxLength: 100 }),
    /** Link to an existing user with the same verified address, after that user proves it. */
    link_by_verified_email: Type.Optional(Type.Boolean()),
    /** Take the upstream's multi-factor claims (`amr`, `acr`) as ours (README). */
    trust_upstream_mfa: Type.Optional(Type.Boolean()),
    /** Our logout also sends the browser to the provider's `end_session_endpoint`. */
    logout_at_provider: Type.Optional(Type.Boolean()),
    /** Which upstream claims fill our `name`, `email`, `groups` (defaults: the same names). */
    claims: Type.Optional(
      Type.Object(
        {
          name: Type.Optional(NonEmptyString),
          email: Type.Optional(NonEmptyString),
          groups: Type.Optional(NonEmptyString),
        },
        { additionalProperties: false },
      ),
    ),
    /** Entra ID: key identities by `tid:oid` (tenant and object id) rather than `sub`. */
    subject_claims: Type.Optional(Type.Union([Type.Literal('sub'), Type.Literal('tid_oid')])),
  },
  { additionalProperties: false },
);

const SecretHash = Type.String({ pattern: '^hmac-sha256\\$[A-Za-z0-9_-]{43}$' });

/**
 * `client_registration` (CONTRACT.md "Agent and tool clients"): Dynamic Client Registration
 * (RFC 7591, RFC 7592) and its policy; absent, registration is off and nothing is advertised.
 */
export const SeedClientRegistrationSchema = Type.Object(
  {
    /** Bearer tokens a registration must carry (RFC 7591 §3 "initial access token"), in clear… */
    initial_access_tokens: Type.Optional(Type.Array(Type.String({ minLength: 16, maxLength: 512 }))),
    /** …or as `keys hash-secret` prints them. */
    initial_access_token_hashes: Type.Optional(Type.Array(SecretHash)),
    /** Anyone may register, without an initial access token. */
    open: Type.Optional(Type.Boolean()),
    /** The most a registered client may ask for: scopes… */
    scope: Type.String({ minLength: 1, maxLength: 4096 }),
    /** …and grant types. */
    grant_types: Type.Optional(
      Type.Array(Type.Union(SEEDABLE_GRANT_TYPES.map((grant) => Type.Literal(grant))), { minItems: 1 }),
    ),
    /** A registered client that has no grant this many days after registering is deleted. */
    unused_client_ttl_days: Type.Optional(Type.Integer({ minimum: 1, maximum: 3650 })),
    /** Origins whose loopback or private addresses the server may fetch documents from. */
    fetch_origins: Type.Optional(Type.Array(NonEmptyString)),
  },
  { additionalProperties: false },
);

/**
 * `client_id_metadata_documents` (CONTRACT.md "Agent and tool clients"): client ids that are URLs
 * of Client ID Metadata Documents under these origins; absent, no such client id is accepted.
 */
export const SeedClientIdMetadataDocumentsSchema = Type.Object(
  {
    /** `https://host`, `https://*.example.com`, or an exact loopback `http://127.0.0.1:port`. */
    allowed_origins: Type.Array(NonEmptyString, { minItems: 1 }),
    /** The most a document's client may be granted. */
    scope: Type.String({ minLength: 1, maxLength: 4096 }),
  },
  { additionalProperties: false },
);

export const SeedDocumentSchema = Type.Object(
  {
    identity_providers: Type.Optional(Type.Array(SeedIdentityProviderSchema)),
    clients: Type.Optional(Type.Array(SeedClientSchema)),
    resources: Type.Optional(Type.Array(SeedResourceSchema)),
    users: Type.Optional(Type.Array(SeedUserSchema)),
    client_registration: Type.Optional(SeedClientRegistrationSchema),
    client_id_metadata_documents: Type.Optional(SeedClientIdMetadataDocumentsSchema),
    /**
     * Usernames (seed, directory or federated users) who may use the operator console at /admin,
     * signed in here with a second factor (CONTRACT.md "Administration").
     */
    admins: Type.Optional(Type.Array(NonEmptyString)),
  },
  { additionalProperties: false },
);

export type SeedClient = Static<typeof SeedClientSchema>;
export type SeedResource = Static<typeof SeedResourceSchema>;
export type SeedUser = Static<typeof SeedUserSchema>;
export type SeedIdentityProvider = Static<typeof SeedIdentityProviderSchema>;
export type SeedDocument = Static<typeof SeedDocumentSchema>;
export type SeedClientRegistration = Static<typeof SeedClientRegistrationSchema>;
