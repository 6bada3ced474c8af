import {
  ACR_VALUES_SUPPORTED,
  authMethodsSupportedAt,
  CLAIMS_SUPPORTED,
  CLIENT_JWT_SIGNING_ALGS,
  DPOP_SIGNING_ALGS,
  OIDC_SCOPES,
  PROMPT_VALUES_SUPPORTED,
  RESPONSE_MODES_SUPPORTED,
  registeredGrantTypes,
} from '@oidc-orders/oauth-core';
import type { FastifyPluginAsync } from 'fastify';
import { discoveryEndpointUrls, ENDPOINTS, type EnabledFeatures } from '../endpoints.js';
import { SUPPORTED_LANGUAGES } from '../i18n/languages.js';
import { SUPPORTED_SIGNING_ALGS } from '../keys/key-ring.js';

/**
 * `*_auth_methods_supported` come from oauth-core's table of client authentication methods, and
 * `*_auth_signing_alg_values_supported` from its CLIENT_JWT_SIGNING_ALGS: the same the endpoints
 * authenticate against.
 * RFC 9126 §2 and RFC 8628 §3.1: PAR and device authorization authenticate as the token endpoint.
 */
function authenticationMetadata() {
  const algs = [...CLIENT_JWT_SIGNING_ALGS];
  return {
    token_endpoint_auth_methods_supported: authMethodsSupportedAt('token'),
    token_endpoint_auth_signing_alg_values_supported: algs,
    revocation_endpoint_auth_methods_supported: authMethodsSupportedAt('revocation'),
    revocation_endpoint_auth_signing_alg_values_supported: algs,
    // RFC 7662 §2.1: introspection requires authentication, so public clients (`none`) cannot use it.
    introspection_endpoint_auth_methods_supported: authMethodsSupportedAt('introspection'),
    introspection_endpoint_auth_signing_alg_values_supported: algs,
  };
}

/**
 * OpenID Connect Discovery 1.0 and the JWKS (RFC 7517 §5). Both are served from memory. Every URL
 * is built from ISSUER, never from the request's Host header (Discovery §4.3: the issuer in the
 * document must be identical to the one the relying party used; a Host-derived URL would let
 * anyone who can reach the server with a forged Host header redirect clients elsewhere).
 */
export interface DiscoveryOptions {
  /** Optional endpoints the seed turns on (src/endpoints.ts `enabledBy`). */
  enabled?: EnabledFeatures;
  /** The seed's `client_id_metadata_documents` is set. */
  metadataDocuments?: boolean;
}

export const discoveryRoutes: FastifyPluginAsync<DiscoveryOptions> = async (app, options) => {
  const issuer = app.config.issuer;
  const cacheControl = `public, max-age=${app.config.metadataMaxAgeSeconds}`;

  const staticMetadata = {
    issuer,
    // Every `*_endpoint` and `jwks_uri`, from the one table of endpoints (src/endpoints.ts).
    ...discoveryEndpointUrls(issuer, options.enabled),
    // RFC 9126 §5: PAR is offered to every client and required of those registered so.
    require_pushed_authorization_requests: false,
    // The token endpoint's registry (oauth-core createGrantRegistry): the one list of grants.
    grant_types_supported: registeredGrantTypes(),
    // RFC 9700 §2.1.1: the implicit and hybrid flows are not offered.
    response_types_supported: ['code'],
    // oauth-core's table of response modes: query, form_post and JARM's jwt, query.jwt, form_post.jwt.
    response_modes_supported: [...RESPONSE_MODES_SUPPORTED],
    // JARM: signed authorization responses use the server's keys, as ID tokens do.
    authorization_signing_alg_values_supported: [...SUPPORTED_SIGNING_ALGS],
    subject_types_supported: ['public'],
    id_token_signing_alg_values_supported: [...SUPPORTED_SIGNING_ALGS],
    // OIDC Discovery §3: a client registering `userinfo_signed_response_alg` gets UserInfo as a JWT
    // signed with the server's key of that algorithm.
    userinfo_signing_alg_values_supported: [...SUPPORTED_SIGNING_ALGS],
    claims_supported: [...CLAIMS_SUPPORTED],
    // OIDC Discovery §3: the languages of the pages, which `ui_locales` chooses among.
    ui_locales_supported: [...SUPPORTED_LANGUAGES],
    // RFC 9700 §2.1.1: S256 only; `plain` offers no protection against a leaked authorization request.
    code_challenge_methods_supported: ['S256'],
    ...authenticationMetadata(),
    // RFC 9701 §7: JWT-secured introspection responses are signed with ES256.
    introspection_signing_alg_values_supported: ['ES256'],
    // RFC 9207: the authorization response carries `iss`, against mix-up attacks.
    authorization_response_iss_parameter_supported: true,
    prompt_values_supported: [...PROMPT_VALUES_SUPPORTED],
    // OIDC Discovery §3: the authentication levels `acr_values` may ask for (README "Authentication levels").
    acr_values_supported: [...ACR_VALUES_SUPPORTED],
    claims_parameter_supported: false,
    // RFC 9101: request objects by value, at /authorize and at the PAR endpoint; `request_uri`
    // as the PAR endpoint's reference (RFC 9126) or a URL the client registered (§5.2, OIDC
    // Discovery §3 `require_request_uri_registration`), fetched under the SSRF guards.
    request_parameter_supported: true,
    request_uri_parameter_supported: true,
    require_request_uri_registration: true,
    request_object_signing_alg_values_supported: [...CLIENT_JWT_SIGNING_ALGS],
    // RFC 9449 §5.1: the algorithms accepted in DPoP proofs.
    dpop_signing_alg_values_supported: [...DPOP_SIGNING_ALGS],
    // OIDC Front-Channel Logout 1.0 §3 and Back-Channel Logout 1.0 §2.1: both are offered, and
    // both always carry `iss` and `sid`.
    frontchannel_logout_supported: true,
    frontchannel_logout_session_supported: true,
    backchannel_logout_supported: true,
    backchannel_logout_session_supported: true,
    // draft-ietf-oauth-client-id-metadata-document §5: only when such client ids are accepted.
    ...(options.metadataDocuments ? { client_id_metadata_document_supported: true } : {}),
  };

  app.get('/.well-known/openid-configuration', async (_request, reply) => {
    // Resource scopes come from the in-memory registry snapshot, so a reseed shows up here too.
    const resources = await app.stores.resources.listResources();
    const resourceScopes = resources.flatMap((resource) => resource.scopes);
    return reply.header('cache-control', cacheControl).send({
      ...staticMetadata,
      // OIDC Core §5.4 scopes (oauth-core), then the registry's resource scopes.
      scopes_supported: [...new Set([...OIDC_SCOPES, ...resourceScopes])],
    });
  });

  app.get(ENDPOINTS.jwks.path, async (_request, reply) => {
    return reply
      .header('cache-control', cacheControl)
      .type('application/json; charset=utf-8')
      .send(app.keyRing.jwks());
  });
};
