import type { JWTPayload } from 'jose';
import { ACR_VALUES, grantMeetsAcr } from '../authentication-level.js';
import { isPublicClient } from '../client-auth-methods.js';
import {
  invalidGrant,
  invalidRequest,
  invalidScope,
  invalidTarget,
  OAuthError,
  unauthorizedClient,
} from '../errors.js';
import {
  type Client,
  GRANT_TYPES,
  type Resource,
  TOKEN_TYPES,
  type TokenExchangePolicy,
  type TokenResponse,
  type User,
} from '../model.js';
import { accessTokenScopes, formatScope, parseScope } from '../scopes.js';
import type { ProtocolStores } from '../storage/index.js';
import { issueAccessToken } from '../tokens/access-token.js';
import type { TokenVerifier } from '../tokens/signer.js';
import { findActiveAccessToken } from '../tokens/validate-access-token.js';
import type { GrantHandler, MintingDependencies, TokenRequest } from './types.js';

/** What the token exchange grant uses: it reads the tokens it is given, so it needs the verifier. */
export interface TokenExchangeGrantDependencies extends MintingDependencies {
  stores: Pick<ProtocolStores, 'accessTokens' | 'grants' | 'clients' | 'users' | 'resources'>;
  /** Verifies JWTs this server issued: JWT access tokens and ID tokens presented as subject or actor. */
  verifier: TokenVerifier;
}

/**
 * A token presented in a token exchange, as far as the exchange cares: who it is about, what it
 * allows, and where it comes from.
 */
interface PresentedToken {
  sub: string;
  /** Scopes the token carries; `null` for ID tokens, which carry none (the policy is the ceiling). */
  scopes: readonly string[] | null;
  /**
   * The user grant behind it (access tokens of user grants; ID tokens by their `gid`), so ending
   * that grant ends the result too.
   */
  grantId: string | null;
  authTime: number | null;
  /**
   * The `acr` of the sign-in, when the token itself carries it (an ID token); an access token of a
   * user grant takes its grant's (`subjectStanding`).
   */
  acr: string | null;
  /** RFC 8693 §4.1: a delegation chain the token already carries. */
  act: unknown;
  dpopJkt: string | null;
}

/**
 * RFC 8693 §2.2.2: "If the request itself is not valid or if either the subject_token or
 * actor_token are invalid for any reason, or are unacceptable based on policy, the invalid_request
 * error code MUST be used" (a fixed public text; the reason is in the detail).
 */
const unacceptableToken = (which: 'subject_token' | 'actor_token', detail: string) =>
  new OAuthError('invalid_request', { description: `the ${which} is invalid or not acceptable`, detail });

async function readToken(
  which: 'subject_token' | 'actor_token',
  token: string,
  type: string,
  client: Client,
  policy: TokenExchangePolicy,
  deps: TokenExchangeGrantDependencies,
): Promise<PresentedToken> {
  if (type === TOKEN_TYPES.accessToken) {
    const active = await findActiveAccessToken(token, deps);
    if (active === null) throw unacceptableToken(which, 'access token unknown, expired or revoked');
    return {
      sub: active.sub,
      scopes: active.scopes,
      grantId: active.grantId,
      authTime: typeof active.claims.auth_time === 'number' ? active.claims.auth_time : null,
      acr: null,
      act: active.claims.act,
      dpopJkt: active.dpopJkt,
    };
  }
  if (type === TOKEN_TYPES.idToken && (which === 'actor_token' || policy.subjectTokenTypes.includes(type))) {
    let claims: JWTPayload;
    try {
      claims = await deps.verifier.verify(token, { typ: 'JWT' });
    } catch {
      throw unacceptableToken(which, 'ID token does not verify or has expired');
    }
    const audience = typeof claims.aud === 'string' ? [claims.aud] : (claims.aud ?? []);
    // Only an ID token this server issued to the requesting client: anyone else's would let a client
    // turn a token it merely saw into access.
    if (
      claims.iss !== deps.config.issuer ||
      !audience.includes(client.clientId) ||
      typeof claims.sub !== 'string'
    ) {
      throw unacceptableToken(which, 'ID token of another issuer or audience');
    }
    // An ID token outlives neither its grant nor its session: without `gid` there is no grant to
    // tie the exchanged token to, so it could outlive them (the user removing the app, a reset).
    if (which === 'subject_token' && typeof claims.gid !== 'string') {
      throw unacceptableToken(which, 'ID token without a grant (gid)');
    }
    return {
      sub: claims.sub,
      scopes: null,
      grantId: which === 'subject_token' ? (claims.gid as string) : null,
      authTime: typeof claims.auth_time === 'number' ? claims.auth_time : null,
      acr: typeof claims.acr === 'string' ? claims.acr : null,
      act: undefined,
      dpopJkt: null,
    };
  }
  throw unacceptableToken(which, `token type ${type.slice(0, 100)} not accepted`);
}

/**
 * The subject's user (for a user's access token or an ID token: it must still exist) and the `acr`
 * its sign-in reached: the grant's, for a token of a user grant (an access token's `gid` or row,
 * an ID token's `gid`); for a client's own token, none. The grant must be alive and be this
 * subject's: a subject token whose grant has ended (revoked by the user on the account page, by a
 * reset, by logout, by refresh-token reuse) is `invalid_grant`, as its refresh token is.
 */
async function subjectStanding(
  subject: PresentedToken,
  client: Client,
  deps: TokenExchangeGrantDependencies,
): Promise<{ user: User | null; acr: string | null }> {
  let user: User | null = null;
  if (subject.grantId !== null || subject.scopes === null) {
    user = await deps.stores.users.findUserBySub(subject.sub);
    if (user === null) throw unacceptableToken('subject_token', 'user no longer exists');
  }
  if (subject.grantId === null) return { user, acr: subject.acr };
  const grant = await deps.stores.grants.findGrant(subject.grantId);
  if (grant === null || grant.revokedAt !== null) throw invalidGrant("the subject token's grant has ended");
  // An ID token names a grant of its own audience and subject; anything else is not this server's.
  if (subject.scopes === null && (grant.sub !== subject.sub || grant.clientId !== client.clientId)) {
    throw unacceptableToken('subject_token', 'ID token gid of another grant');
  }
  return { user, acr: grant.acr ?? null };
}

/**
 * A resource with `require_mfa` gets access tokens only from a sign-in that met the multi-factor
 * level, as from the user grants (`issueUserTokens`): an exchange never turns a password-only token
 * into one. RFC 8693 §2.2.2 `invalid_target`: "The authorization server is unwilling or unable to
 * issue a token for any target service indicated by the target or audience parameters."
 */
function requireLevelOfTarget(target: Resource, acr: string | null): void {
  if (target.requireMfa !== true || grantMeetsAcr(acr, ACR_VALUES.mfa)) return;
  throw new OAuthError('invalid_target', {
    description: 'the resource requires a multi-factor sign-in, which the subject token does not carry',
    detail: `resource ${target.id.slice(0, 200)} requires ${ACR_VALUES.mfa}, subject acr ${acr ?? 'none'}`,
  });
}

/**
 * The one resource the exchanged token is for (this server addresses each access token to one):
 * `resource` and `audience` values together name at most one, which must be a known resource the
 * policy allows. Named none: the allowed resource owning a requested scope, by id order.
 */
function selectExchangeTarget(
  named: readonly string[],
  requestedScopes: readonly string[],
  policy: TokenExchangePolicy,
  resources: readonly Resource[],
): Resource {
  const ids = [...new Set(named)];
  if (ids.length > 1) throw invalidTarget('more than one audience or resource');
  const allowed = resources.filter((resource) => policy.audiences.includes(resource.id));
  if (ids.length === 1) {
    const target = allowed.find((resource) => resource.id === ids[0]);
    // RFC 8693 §2.2.2: "unwilling or unable to issue a token for any target service" → invalid_target.
    if (target === undefined) throw invalidTarget(`audience ${ids[0]!.slice(0, 200)} unknown or not allowed`);
    return target;
  }
  const owning = allowed
    .filter((resource) => resource.scopes.some((scope) => requestedScopes.includes(scope)))
    .sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
  if (owning[0] === undefined) throw invalidTarget('no audience named and none follows from the scope');
  return owning[0];
}

/**
 * RFC 8693 token exchange. The requesting client (confidential, with a `tokenExchange` policy)
 * presents a `subject_token` (an access token of this server, or an ID token this server issued to
 * it when the policy accepts ID tokens) and gets an access token:
 * - for one audience (`audience` / `resource`), which the policy must allow (else `invalid_target`);
 * - for a `require_mfa` audience only when the subject's sign-in met the multi-factor level (else
 *   `invalid_target`), so an exchange never raises the level;
 * - with a scope that is a subset of the subject token's scope and of the policy's scopes (else
 *   `invalid_scope`), restricted to the audience's scopes and the OIDC ones, never empty;
 * - about the subject's `sub`, for this client (`client_id`), in the subject's grant (`gid`: an
 *   access token's grant, or the grant an ID token was issued in), so ending the user's grant ends
 *   the exchanged tokens too, and a subject token of an ended grant is `invalid_grant`;
 * - with `act: { sub: <actor's sub> }` when an `actor_token` is given (delegation, §1.1), nesting
 *   the subject token's own `act` (§4.1); without one, the client impersonates the subject.
 * The response carries `issued_token_type` (§2.2.1) and no refresh token. Only access tokens can be
 * requested. Bad or unacceptable tokens → `invalid_request` (§2.2.2).
 */
export const tokenExchangeGrant = {
  grantType: GRANT_TYPES.tokenExchange,
  parameters: [
    'subject_token',
    'subject_token_type',
    'actor_token',
    'actor_token_type',
    'requested_token_type',
    'resource',
    'audience',
    'scope',
  ],
  repeatableParameters: ['resource', 'audience'],
  async handle(request: TokenRequest, deps: TokenExchangeGrantDependencies): Promise<TokenResponse> {
    const { client, params } = request;
    const policy = client.tokenExchange ?? null;
    // RFC 8693 §5: the server decides who may exchange; only authenticated clients with a policy.
    if (!request.clientAuthenticated || isPublicClient(client) || policy === null) {
      throw unauthorizedClient('token exchange needs a confidential client with a token_exchange policy');
    }
    const { subject_token: subjectToken, subject_token_type: subjectType } = params;
    const { actor_token: actorToken, actor_token_type: actorType } = params;
    // §2.1: subject_token and subject_token_type are REQUIRED; actor_token_type iff actor_token.
    if (subjectToken === undefined || subjectType === undefined) {
      throw invalidRequest('subject_token and subject_token_type are required');
    }
    if ((actorToken === undefined) !== (actorType === undefined)) {
      throw invalidRequest('actor_token and actor_token_type go together');
    }
    const requestedType = params.requested_token_type;
    if (requestedType !== undefined && requestedType !== TOKEN_TYPES.accessToken) {
      throw invalidRequest(
        'only access tokens can be requested',
        `requested_token_type=${requestedType.slice(0, 100)}`,
      );
    }
    const requestedScopes = parseScope(params.scope);
    // `audience` may repeat (§2.1): the HTTP layer hands the values over like `resource`.
    const audiences = request.audiences ?? (params.audience === undefined ? [] : [params.audience]);

    const subject = await readToken('subject_token', subjectToken, subjectType, client, policy, deps);
    // RFC 9449: a DPoP-bound token is only usable with its key, here as anywhere else.
    if (subject.dpopJkt !== null && subject.dpopJkt !== request.dpopJkt) {
      throw unacceptableToken('subject_token', 'DPoP-bound subject token without a proof of its key');
    }
    const actor =
      actorToken === undefined || actorType === undefined
        ? null
        : await readToken('actor_token', actorToken, actorType, client, policy, deps);
    if (actor !== null && actor.dpopJkt !== null && actor.dpopJkt !== request.dpopJkt) {
      throw unacceptableToken('actor_token', 'DPoP-bound actor token without a proof of its key');
    }

    const { user, acr } = await subjectStanding(subject, client, deps);

    // The ceiling: what the subject token carries (an ID token carries no scope: the policy rules),
    // what the policy lets this client obtain, and what the user may be granted at all.
    const ceiling = policy.scopes.filter(
      (scope) =>
        (subject.scopes === null || subject.scopes.includes(scope)) &&
        (user === null || user.allowedScopes === null || user.allowedScopes.includes(scope)),
    );
    const wider = requestedScopes.filter((scope) => !ceiling.includes(scope));
    if (wider.length > 0)
      throw invalidScope(`scope beyond the subject token or the policy: ${wider.join(' ')}`);

    const target = selectExchangeTarget(
      [...request.resources, ...audiences],
      requestedScopes.length > 0 ? requestedScopes : ceiling,
      policy,
      await deps.stores.resources.listResources(),
    );
    requireLevelOfTarget(target, acr);
    const scopes = accessTokenScopes(requestedScopes.length > 0 ? requestedScopes : ceiling, target);
    if (scopes.length === 0)
      throw invalidScope(`nothing of the subject token's scope applies to ${target.id}`);

    // §4.1: the actor is the outermost `act`; a chain the subject already carries stays inside it.
    // Without an actor the subject's own chain is kept, so a delegation never turns into impersonation.
    const priorAct =
      typeof subject.act === 'object' && subject.act !== null && !Array.isArray(subject.act)
        ? (subject.act as Record<string, unknown>)
        : null;
    const act: Record<string, unknown> | null =
      actor === null ? priorAct : { sub: actor.sub, ...(priorAct !== null ? { act: priorAct } : {}) };
    // One write at most (an opaque token): no transaction needed.
    const accessToken = await issueAccessToken(
      {
        client,
        sub: subject.sub,
        grantId: subject.grantId,
        scopes,
        resource: target,
        user,
        authTime: subject.authTime,
        dpopJkt: request.dpopJkt,
        act,
      },
      { ...deps, accessTokens: deps.stores.accessTokens },
    );
    return {
      access_token: accessToken.token,
      // RFC 8693 §2.2.1: REQUIRED.
      issued_token_type: TOKEN_TYPES.accessToken,
      token_type: accessToken.tokenType,
      expires_in: accessToken.expiresIn,
      scope: formatScope(accessToken.scopes),
    };
  },
} satisfies GrantHandler<TokenExchangeGrantDependencies>;
