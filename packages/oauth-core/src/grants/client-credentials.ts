import { isPublicClient } from '../client-auth-methods.js';
import { invalidScope, unauthorizedClient } from '../errors.js';
import { GRANT_TYPES, type TokenResponse } from '../model.js';
import { formatScope, OIDC_SCOPES, parseScope, selectAccessTokenTarget } from '../scopes.js';
import type { ProtocolStores } from '../storage/index.js';
import { issueAccessToken } from '../tokens/access-token.js';
import type { GrantHandler, MintingDependencies } from './types.js';

/** What the client credentials grant uses: no user, no grant, no refresh token. */
export interface ClientCredentialsGrantDependencies extends MintingDependencies {
  stores: Pick<ProtocolStores, 'resources' | 'accessTokens'>;
}

/**
 * RFC 6749 §4.4: a token for the client itself (`sub` = client_id), no refresh token (§4.4.3), no
 * ID token (no user). `scope` omitted → the client's non-OIDC scopes (RFC 6749 §3.3 default).
 */
export const clientCredentialsGrant = {
  grantType: GRANT_TYPES.clientCredentials,
  parameters: ['scope', 'resource'],
  repeatableParameters: ['resource'],
  async handle(request, deps): Promise<TokenResponse> {
    const { client, params } = request;
    // RFC 6749 §4.4: "The client credentials grant type MUST only be used by confidential clients."
    if (!request.clientAuthenticated || isPublicClient(client)) {
      throw unauthorizedClient('client_credentials needs a confidential client');
    }
    const requested = parseScope(params.scope);
    // No user: openid and the other OIDC scopes make no sense here.
    if (requested.some((scope) => OIDC_SCOPES.includes(scope)))
      throw invalidScope('OIDC scope in client_credentials');
    if (requested.some((scope) => !client.scopes.includes(scope)))
      throw invalidScope('scope not allowed for the client');
    const scopes =
      requested.length > 0 ? requested : client.scopes.filter((scope) => !OIDC_SCOPES.includes(scope));
    const target = selectAccessTokenTarget({
      scopes,
      requestedResources: request.resources,
      boundResources: [],
      resources: await deps.stores.resources.listResources(),
    });
    // One write at most (an opaque token): no transaction needed.
    const accessToken = await issueAccessToken(
      {
        client,
        sub: client.clientId,
        grantId: null,
        scopes: target.scopes,
        resource: target.resource,
        user: null,
        dpopJkt: request.dpopJkt,
      },
      { ...deps, accessTokens: deps.stores.accessTokens },
    );
    return {
      access_token: accessToken.token,
      token_type: accessToken.tokenType,
      expires_in: accessToken.expiresIn,
      scope: formatScope(accessToken.scopes),
    };
  },
} satisfies GrantHandler<ClientCredentialsGrantDependencies>;
