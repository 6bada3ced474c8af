import { ACR_VALUES, grantMeetsAcr } from '../authentication-level.js';
import { invalidGrant } from '../errors.js';
import type { Client, Grant, TokenResponse, User } from '../model.js';
import { type AccessTokenTarget, formatScope, selectAccessTokenTarget } from '../scopes.js';
import type { IssuedTokenRecords, ProtocolStores, TokenStores } from '../storage/index.js';
import { issueAccessToken } from '../tokens/access-token.js';
import { issueIdToken } from '../tokens/id-token.js';
import { issueRefreshToken, shouldIssueRefreshToken } from '../tokens/refresh-token.js';
import type { MintingDependencies, TokenRequest } from './types.js';

/** What a user grant (authorization_code, refresh_token, device_code) hands out. */
export interface UserTokenIssuance {
  client: Client;
  user: User;
  grant: Grant;
  /** Scopes granted for this exchange (a refresh may narrow them, RFC 6749 §6). */
  scopes: readonly string[];
  target: AccessTokenTarget;
  dpopJkt: string | null;
  /** A refresh token to mint, or `null` for none. */
  refreshToken: {
    /** RFC 6749 §6: a rotated refresh token keeps the scope of the one it replaces. */
    scopes: readonly string[];
    resources: readonly string[];
    parentHash: string | null;
    dpopJkt: string | null;
  } | null;
  /** An ID token to mint (`openid` granted), or `null`. */
  idToken: { nonce: string | null } | null;
}

/** The stores `issueUserTokens` writes to. */
export interface UserTokenWriters {
  accessTokens: Pick<TokenStores['accessTokens'], 'createAccessToken'>;
  refreshTokens: Pick<TokenStores['refreshTokens'], 'createRefreshToken'>;
}

/**
 * Mints the tokens of a user grant and writes nothing: the response, and the records to store
 * (`IssuedTokenRecords`), which the caller stores in the same atomic unit as the conditional
 * consume step (`commitCodeRedemption`, `commitRefreshTokenRotation`). Signing happens here, before
 * any database write, so no transaction is held open while tokens are signed.
 */
export async function prepareUserTokens(
  issuance: UserTokenIssuance,
  context: MintingDependencies,
): Promise<{ response: TokenResponse; records: IssuedTokenRecords }> {
  const records: IssuedTokenRecords = { accessToken: null, refreshToken: null };
  const recorder: UserTokenWriters = {
    accessTokens: {
      async createAccessToken(token) {
        records.accessToken = token;
      },
    },
    refreshTokens: {
      async createRefreshToken(token) {
        records.refreshToken = token;
      },
    },
  };
  const response = await issueUserTokens(issuance, recorder, context);
  return { response, records };
}

/** What a redeemed code (an authorization code or an approved device code) hands to its first tokens. */
export interface CodeRedemption {
  user: User;
  grant: Grant;
  /** The scopes and RFC 8707 resources the code was issued for. */
  scopes: readonly string[];
  resources: readonly string[];
  /** OIDC Core §3.1.2.1: the authorization request's `nonce`, echoed in the ID token (none for a device code). */
  nonce: string | null;
}

/**
 * The first tokens of a grant, when its code is redeemed (RFC 6749 §4.1.3, RFC 8628 §3.5): an
 * access token for the audience the code's scopes, its resources and the request's `resource`
 * select, a refresh token when the client gets one, an ID token when `openid` was granted. Signed
 * here and written nowhere (`prepareUserTokens`): the grant commits the records together with its
 * conditional consume step.
 */
export async function prepareRedemptionTokens(
  request: TokenRequest,
  redemption: CodeRedemption,
  deps: MintingDependencies & { stores: Pick<ProtocolStores, 'resources'> },
): Promise<{ response: TokenResponse; records: IssuedTokenRecords }> {
  const { client } = request;
  const { scopes, resources } = redemption;
  const target = selectAccessTokenTarget({
    scopes,
    requestedResources: request.resources,
    boundResources: resources,
    resources: await deps.stores.resources.listResources(),
  });
  // RFC 9449 §5: refresh tokens of public clients are bound to the DPoP key.
  const refreshBinding = request.clientAuthenticated ? null : request.dpopJkt;
  return prepareUserTokens(
    {
      client,
      user: redemption.user,
      grant: redemption.grant,
      scopes,
      target,
      dpopJkt: request.dpopJkt,
      refreshToken: shouldIssueRefreshToken(client, scopes)
        ? { scopes, resources, parentHash: null, dpopJkt: refreshBinding }
        : null,
      idToken: scopes.includes('openid') ? { nonce: redemption.nonce } : null,
    },
    deps,
  );
}

/**
 * The `scope` of a user grant's token response: every scope granted by this exchange, in grant
 * order, whatever the access token's audience (RFC 6749 §5.1 and §3.3: the response names the
 * granted scope when it differs from the request; clients such as oauthlib compare it with what they
 * asked for). `offline_access` is listed exactly when it was granted and a refresh token is issued.
 */
export function responseScopes(granted: readonly string[], refreshTokenIssued: boolean): string[] {
  return granted.filter((scope) => scope !== 'offline_access' || refreshTokenIssued);
}

/** Issues the tokens of a user grant. Call inside `stores.transaction` with its stores. */
export async function issueUserTokens(
  issuance: UserTokenIssuance,
  tx: UserTokenWriters,
  context: MintingDependencies,
): Promise<TokenResponse> {
  const { client, user, grant } = issuance;
  // A resource with `require_mfa` gets tokens only from grants whose sign-in met the level; a
  // refresh keeps the grant's level and so can never raise it.
  if (issuance.target.resource?.requireMfa && !grantMeetsAcr(grant.acr, ACR_VALUES.mfa)) {
    throw invalidGrant('the grant did not meet the multi-factor level the resource requires');
  }
  const accessToken = await issueAccessToken(
    {
      client,
      sub: user.sub,
      grantId: grant.id,
      scopes: issuance.target.scopes,
      resource: issuance.target.resource,
      user,
      authTime: grant.authTime,
      dpopJkt: issuance.dpopJkt,
    },
    { ...context, accessTokens: tx.accessTokens },
  );
  const response: TokenResponse = {
    access_token: accessToken.token,
    token_type: accessToken.tokenType,
    expires_in: accessToken.expiresIn,
    scope: formatScope(responseScopes(issuance.scopes, issuance.refreshToken !== null)),
  };
  if (issuance.refreshToken !== null) {
    const refresh = await issueRefreshToken(
      { grant, client, ...issuance.refreshToken },
      { refreshTokens: tx.refreshTokens, clock: context.clock, random: context.random },
    );
    response.refresh_token = refresh.token;
  }
  if (issuance.idToken !== null) {
    response.id_token = await issueIdToken(
      {
        client,
        user,
        scopes: issuance.scopes,
        nonce: issuance.idToken.nonce,
        authTime: grant.authTime,
        amr: grant.amr,
        acr: grant.acr,
        sid: grant.sid,
        grantId: grant.id,
        accessToken: accessToken.token,
      },
      context,
    );
  }
  return response;
}
