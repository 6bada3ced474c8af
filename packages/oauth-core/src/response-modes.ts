import type { ProtocolConfig } from './config.js';
import type { Client, SigningAlg } from './model.js';
import type { Clock } from './runtime.js';
import type { TokenSigner } from './tokens/signer.js';

/** How an authorization response travels to the client's redirect URI. */
export type ResponseDelivery = 'query' | 'form_post';

interface ResponseModeRule {
  delivery: ResponseDelivery;
  /** JARM: the parameters go inside one JWT signed by the server, sent as `response`. */
  signed: boolean;
}

/**
 * The one table of `response_mode` values (validation and discovery read it):
 * - `query` (OAuth 2.0 Multiple Response Types §2.1) and `form_post` (Form Post Response Mode §2);
 * - JARM (JWT Secured Authorization Response Mode for OAuth 2.0, OpenID final), "Response
 *   Encoding": `query.jwt`, `form_post.jwt`, and `jwt`, the response type's default transport
 *   ("Response Mode jwt"), which for `code` is `query.jwt`.
 * `fragment` and `fragment.jwt` are not offered: this server answers only `response_type=code`
 * (RFC 9700 §2.1.2) and never in a fragment, so asking for them is an unsupported response mode.
 */
export const RESPONSE_MODES = {
  query: { delivery: 'query', signed: false },
  form_post: { delivery: 'form_post', signed: false },
  jwt: { delivery: 'query', signed: true },
  'query.jwt': { delivery: 'query', signed: true },
  'form_post.jwt': { delivery: 'form_post', signed: true },
} as const satisfies Record<string, ResponseModeRule>;

export type ResponseMode = keyof typeof RESPONSE_MODES;

/** Discovery `response_modes_supported`: exactly the table. */
export const RESPONSE_MODES_SUPPORTED = Object.keys(RESPONSE_MODES) as readonly ResponseMode[];

/** The signed mode of each delivery, for a client that must receive signed responses. */
const SIGNED_MODE_OF: Record<ResponseDelivery, ResponseMode> = {
  query: 'query.jwt',
  form_post: 'form_post.jwt',
};

export function responseModeRule(mode: ResponseMode): ResponseModeRule {
  return RESPONSE_MODES[mode];
}

/** Whether this client must receive signed authorization responses (JARM). */
export function requiresSignedAuthorizationResponse(
  client: Pick<Client, 'requireSignedAuthorizationResponse'>,
): boolean {
  return client.requireSignedAuthorizationResponse === true;
}

/**
 * The mode a request is answered in, and what is wrong with the `response_mode` it asked for
 * (`problem`, an `invalid_request` detail) or `null`. Even a refused mode yields the mode the error
 * travels in: the code flow's default transport (`query`), signed when the client asked for a JWT
 * mode or must receive signed responses, so a JARM client still reads a JWT it can verify.
 */
export function decideResponseMode(
  requested: string | undefined,
  client: Pick<Client, 'requireSignedAuthorizationResponse'>,
): { mode: ResponseMode; problem: string | null } {
  const signedRequired = requiresSignedAuthorizationResponse(client);
  if (requested === undefined) return { mode: signedRequired ? 'query.jwt' : 'query', problem: null };
  if (!Object.hasOwn(RESPONSE_MODES, requested)) {
    const signed = signedRequired || requested.endsWith('.jwt');
    return { mode: signed ? 'query.jwt' : 'query', problem: 'unsupported response_mode' };
  }
  const mode = requested as ResponseMode;
  const rule = RESPONSE_MODES[mode];
  if (signedRequired && !rule.signed) {
    return {
      mode: SIGNED_MODE_OF[rule.delivery],
      problem: 'this client must use a JWT response mode (JARM)',
    };
  }
  return { mode, problem: null };
}

/** JARM, "The JWT Response Document": a short lifetime (at most 10 minutes recommended); the browser carries it at once. */
export const AUTHORIZATION_RESPONSE_JWT_TTL_SECONDS = 300;

/** The client a signed response is for: its `aud` and the algorithm it registered (JARM client metadata). */
export type ResponseSigningClient = Pick<Client, 'clientId' | 'authorizationSignedResponseAlg' | 'profile'>;

/** JARM client metadata `authorization_signed_response_alg`: RS256 by default; ES256 for FAPI 2.0 (SP §5.4.1). */
export function authorizationResponseAlg(client: ResponseSigningClient): SigningAlg {
  return client.authorizationSignedResponseAlg ?? (client.profile === 'fapi2' ? 'ES256' : 'RS256');
}

/**
 * JARM, "The JWT Response Document": the response parameters (the code or the error, `state`) as the claims of a JWT with
 * `iss` (the issuer), `aud` (the client) and `exp`, signed with the server's keys (the same as ID
 * tokens) in the client's algorithm. `iat` is added for the client's freshness checks.
 */
export async function signAuthorizationResponse(
  params: Readonly<Record<string, string>>,
  client: ResponseSigningClient,
  context: { signer: TokenSigner; clock: Clock; config: Pick<ProtocolConfig, 'issuer'> },
): Promise<string> {
  const now = context.clock.nowSeconds();
  return context.signer.sign(
    {
      ...params,
      iss: context.config.issuer,
      aud: client.clientId,
      iat: now,
      exp: now + AUTHORIZATION_RESPONSE_JWT_TTL_SECONDS,
    },
    { alg: authorizationResponseAlg(client), typ: 'JWT' },
  );
}
