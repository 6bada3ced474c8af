import { type Static, type TSchema, Type } from '@sinclair/typebox';

/**
 * The shapes of the administration API (src/routes/admin-api/): requests are validated against
 * them and answers serialised by them, and /openapi.json publishes them.
 */

const Seconds = Type.Integer({ description: 'seconds since the epoch' });
const NullableSeconds = Type.Union([Seconds, Type.Null()]);
const NullableString = Type.Union([Type.String(), Type.Null()]);
const Strings = Type.Array(Type.String());

/** RFC 9457 §3: a problem details object (`application/problem+json`). */
export const ProblemDetails = Type.Object(
  {
    type: Type.String({ description: 'about:blank: the status code says it all, `error` is the code' }),
    title: Type.String(),
    status: Type.Integer(),
    detail: Type.Optional(Type.String()),
    error: Type.String({
      description: 'a stable code: the RFC 6750 error, not_found, or the reason refused',
    }),
  },
  { description: 'RFC 9457 problem details' },
);

export const UserSummary = Type.Object({
  sub: Type.String(),
  username: Type.String(),
  name: NullableString,
  email: NullableString,
  status: Type.Union([Type.Literal('enabled'), Type.Literal('disabled')]),
  source: Type.Union([
    Type.Literal('seed'),
    Type.Literal('operator'),
    Type.Literal('directory'),
    Type.Literal('federation'),
  ]),
});

export const UserSearchQuery = Type.Object({
  q: Type.Optional(Type.String({ maxLength: 256 })),
  limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 200, default: 50 })),
  cursor: Type.Optional(Type.String({ maxLength: 1024, pattern: '^[A-Za-z0-9_-]*$' })),
});
export type UserSearchQuery = Static<typeof UserSearchQuery>;

const Factor = Type.Object({
  id: Type.String(),
  name: Type.String(),
  createdAt: Seconds,
  lastUsedAt: NullableSeconds,
});

export const UserDetail = Type.Composite([
  UserSummary,
  Type.Object({
    emailVerified: Type.Boolean(),
    mfaRequired: Type.Boolean(),
    groups: Type.Union([Strings, Type.Null()]),
    factors: Type.Object({
      authenticatorApps: Type.Array(Factor),
      passkeys: Type.Array(Factor),
      recoveryCodesRemaining: Type.Integer(),
    }),
    linkedIdentities: Type.Array(
      Type.Object({
        source: Type.String(),
        subject: Type.String(),
        linkedAt: NullableSeconds,
        lastSignInAt: NullableSeconds,
      }),
    ),
    activeSessions: Type.Integer(),
    activeGrants: Type.Integer(),
  }),
]);

export const SessionOverview = Type.Object({
  sid: Type.String(),
  sub: Type.String(),
  createdAt: Seconds,
  authTime: Seconds,
  expiresAt: Seconds,
  lastUsedAt: NullableSeconds,
  ip: NullableString,
  userAgent: NullableString,
  methods: Strings,
  clients: Strings,
});

export const GrantOverview = Type.Object({
  grantId: Type.String(),
  clientId: Type.String(),
  sub: Type.String(),
  scopes: Strings,
  resources: Strings,
  sid: NullableString,
  createdAt: Seconds,
});

const LiveUse = {
  activeGrants: Type.Integer(),
  lastUsedAt: NullableSeconds,
};

export const ClientOverview = Type.Object({
  clientId: Type.String(),
  clientName: Type.String(),
  source: Type.Union([Type.Literal('seed'), Type.Literal('registered')]),
  status: Type.Union([Type.Literal('enabled'), Type.Literal('disabled')]),
  grantTypes: Strings,
  scopes: Strings,
  redirectUris: Strings,
  authMethods: Strings,
  backchannelLogoutUri: NullableString,
  dpopBoundAccessTokens: Type.Boolean(),
  ...LiveUse,
});

export const ResourceOverview = Type.Object({
  id: Type.String(),
  scopes: Strings,
  accessTokenFormat: Type.Union([Type.Literal('jwt'), Type.Literal('opaque')]),
  accessTokenTtl: Type.Integer(),
  source: Type.Union([Type.Literal('seed'), Type.Literal('built-in')]),
  status: Type.Union([Type.Literal('enabled'), Type.Literal('disabled')]),
  ...LiveUse,
});

export const ProviderOverview = Type.Object({
  id: Type.String(),
  issuer: Type.String(),
  displayName: Type.String(),
  status: Type.Union([Type.Literal('enabled'), Type.Literal('disabled')]),
  linkedAccounts: Type.Integer(),
  lastSignInAt: NullableSeconds,
});

export const SigningKeyStatus = Type.Object({
  kid: Type.String(),
  alg: Type.String(),
  state: Type.Union([
    Type.Literal('next'),
    Type.Literal('active'),
    Type.Literal('retired'),
    Type.Literal('expired'),
  ]),
  createdAt: Seconds,
  activatesAt: Seconds,
  retiresAt: NullableSeconds,
  removeAfter: NullableSeconds,
  ageSeconds: Type.Integer(),
});

export const KeyRotation = Type.Object({
  added: Type.Array(Type.Object({ kid: Type.String(), alg: Type.String(), activatesAt: Seconds })),
  retired: Strings,
  deleted: Strings,
});

/** What a change answers: the user it was done to and what it ended. */
export const UserChange = Type.Object({
  sub: Type.String(),
  changed: Type.Optional(Type.Boolean({ description: 'false when it already was in that state' })),
  sessions: Type.Optional(Type.Integer({ description: 'SSO sessions ended' })),
  grants: Type.Optional(Type.Integer({ description: 'grants revoked' })),
  authenticatorApps: Type.Optional(Type.Integer()),
  passkeys: Type.Optional(Type.Integer()),
  recoveryCodes: Type.Optional(Type.Integer()),
});

export const SessionEnded = Type.Object({
  sid: Type.String(),
  sub: Type.String(),
  grants: Type.Integer({ description: 'grants of the session revoked' }),
});

export const AuditQuery = Type.Object({
  sub: Type.Optional(Type.String({ minLength: 1, maxLength: 255 })),
  client_id: Type.Optional(Type.String({ minLength: 1, maxLength: 255 })),
  event: Type.Optional(Type.String({ minLength: 1, maxLength: 100 })),
  since: Type.Optional(Type.Integer({ minimum: 0, description: 'seconds since the epoch, inclusive' })),
  until: Type.Optional(Type.Integer({ minimum: 0, description: 'seconds since the epoch, exclusive' })),
  cursor: Type.Optional(Type.String({ maxLength: 1024, pattern: '^[A-Za-z0-9_-]*$' })),
  limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 500, default: 50 })),
});
export type AuditQuery = Static<typeof AuditQuery>;

/** One stored audit event (src/audit/audit-event-store.ts), as the API names its members. */
export const AuditEventView = Type.Object({
  time: Seconds,
  event: Type.String(),
  sub: NullableString,
  client_id: NullableString,
  ip: NullableString,
  actor: Type.Union([Type.String(), Type.Null()], { description: 'who made an operator change' }),
  outcome: Type.Union([Type.Literal('success'), Type.Literal('failure')]),
  details: Type.Record(Type.String(), Type.Unknown()),
});

const SeedPlanKind = Type.Union([
  Type.Literal('clients'),
  Type.Literal('resources'),
  Type.Literal('users'),
  Type.Literal('identity_providers'),
]);
const SeedPlanNote = Type.Object({ kind: SeedPlanKind, id: Type.String(), reason: Type.String() });

/** What applying the seed file would change (src/seed-plan/plan.ts), never a secret. */
export const SeedPlanView = Type.Object({
  hasChanges: Type.Boolean(),
  changes: Type.Array(
    Type.Object({
      kind: SeedPlanKind,
      id: Type.String(),
      action: Type.Union([
        Type.Literal('add'),
        Type.Literal('change'),
        Type.Literal('enable'),
        Type.Literal('disable'),
      ]),
      members: Strings,
    }),
  ),
  undoes: Type.Array(SeedPlanNote, { description: 'operator changes that applying the file would undo' }),
  keeps: Type.Array(SeedPlanNote, { description: 'operator changes the file leaves alone' }),
});

export const SubParams = Type.Object({ sub: Type.String({ minLength: 1, maxLength: 255 }) });
export const SidParams = Type.Object({ sid: Type.String({ minLength: 1, maxLength: 255 }) });
export const GrantParams = Type.Object({ grantId: Type.String({ minLength: 1, maxLength: 255 }) });
export const ClientParams = Type.Object({ clientId: Type.String({ minLength: 1, maxLength: 255 }) });

/** The error answers every route of the area can give (RFC 9457 bodies). */
const PROBLEM_STATUSES = [400, 401, 403, 404, 409, 422] as const;

/** A route's response schemas: its success shape, and problem details for the errors. */
export function adminResponses(status: 200 | 204, body?: TSchema): Record<number, TSchema> {
  const problems = Object.fromEntries(PROBLEM_STATUSES.map((code) => [code, ProblemDetails]));
  return { ...problems, [status]: body ?? Type.Null() };
}
