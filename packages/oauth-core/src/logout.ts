import type { ProtocolConfig } from './config.js';
import { generateUuid } from './ids.js';
import type { Client } from './model.js';
import type { Clock, RandomSource } from './runtime.js';
import type { ClientStore, GrantStore } from './storage/index.js';
import type { TokenSigner, TokenVerifier } from './tokens/signer.js';

/** OIDC Back-Channel Logout 1.0 §2.4: the event that makes a JWT a logout token. */
export const BACKCHANNEL_LOGOUT_EVENT = 'http://schemas.openid.net/event/backchannel-logout';

/** How long a logout token is valid; it is delivered (and retried) within seconds of the logout. */
export const LOGOUT_TOKEN_TTL_SECONDS = 120;

/** An ended SSO session: its `sid` and the user. */
export interface EndedSession {
  sid: string;
  sub: string;
}

export interface FrontChannelLogoutTarget {
  clientId: string;
  /** The client's `frontchannel_logout_uri` with `iss` and `sid` added (Front-Channel Logout 1.0 §2). */
  uri: string;
}

export interface BackChannelLogoutDelivery {
  clientId: string;
  /** The client's `backchannel_logout_uri`. */
  uri: string;
  /** Signed logout token to POST as `logout_token` (Back-Channel Logout 1.0 §2.5). */
  logoutToken: string;
}

export interface SessionLogout {
  frontChannel: FrontChannelLogoutTarget[];
  backChannel: BackChannelLogoutDelivery[];
  /** Grants revoked by this logout (those of clients without `keepOfflineAccessOnLogout`). */
  revokedGrantIds: string[];
}

export interface LogoutContext {
  stores: { grants: GrantStore; clients: ClientStore };
  signer: TokenSigner;
  clock: Clock;
  random: RandomSource;
  config: ProtocolConfig;
}

/**
 * OIDC Back-Channel Logout 1.0 §2.4: iss, aud (the client), iat, exp, jti, `events` with the
 * back-channel-logout member (an empty object), `sid` and `sub`, and never a `nonce` (so a logout
 * token cannot pass as an ID token, nor the other way round). `typ: logout+jwt` (explicit typing,
 * §2.4 and RFC 8725 §3.11), signed with the client's ID token algorithm, which it already verifies.
 */
export async function createLogoutToken(
  input: { client: Pick<Client, 'clientId' | 'idTokenSigningAlg'>; session: EndedSession },
  context: Pick<LogoutContext, 'signer' | 'clock' | 'random' | 'config'>,
): Promise<string> {
  const now = context.clock.nowSeconds();
  return context.signer.sign(
    {
      iss: context.config.issuer,
      aud: input.client.clientId,
      iat: now,
      exp: now + LOGOUT_TOKEN_TTL_SECONDS,
      jti: generateUuid(context.random),
      sub: input.session.sub,
      sid: input.session.sid,
      events: { [BACKCHANNEL_LOGOUT_EVENT]: {} },
    },
    { alg: input.client.idTokenSigningAlg, typ: 'logout+jwt' },
  );
}

/** Front-Channel Logout 1.0 §2: `iss` and `sid` as query parameters, keeping any query of its own. */
export function frontChannelLogoutUri(registered: string, issuer: string, sid: string): string {
  const url = new URL(registered);
  url.searchParams.append('iss', issuer);
  url.searchParams.append('sid', sid);
  return url.toString();
}

/**
 * What ending an SSO session means for the clients that took part in it (the clients of the grants
 * carrying its `sid`):
 * - their grants are revoked (refresh tokens and every access token of the grant stop working),
 *   unless the client keeps offline access across logouts (`keepOfflineAccessOnLogout`);
 * - each client with a `frontchannelLogoutUri` gets a target for the signed-out page's iframes;
 * - each client with a `backchannelLogoutUri` gets a signed logout token to be POSTed to it.
 * Clients are notified once each, whatever the number of their grants in the session.
 */
export async function endSessionGrants(
  session: EndedSession,
  context: LogoutContext,
): Promise<SessionLogout> {
  const now = context.clock.nowSeconds();
  const grants = await context.stores.grants.findGrantsBySid(session.sid);
  const result: SessionLogout = { frontChannel: [], backChannel: [], revokedGrantIds: [] };
  const clientIds = [...new Set(grants.map((grant) => grant.clientId))].sort();
  for (const clientId of clientIds) {
    const client = await context.stores.clients.findClient(clientId);
    if (client === null) continue;
    if (client.keepOfflineAccessOnLogout !== true) {
      for (const grant of grants) {
        if (grant.clientId !== clientId || grant.revokedAt !== null) continue;
        await context.stores.grants.revokeGrant(grant.id, now);
        result.revokedGrantIds.push(grant.id);
      }
    }
    if (client.frontchannelLogoutUri !== null) {
      result.frontChannel.push({
        clientId,
        uri: frontChannelLogoutUri(client.frontchannelLogoutUri, context.config.issuer, session.sid),
      });
    }
    if (client.backchannelLogoutUri !== null) {
      result.backChannel.push({
        clientId,
        uri: client.backchannelLogoutUri,
        logoutToken: await createLogoutToken({ client, session }, context),
      });
    }
  }
  return result;
}

/** The RP-Initiated Logout 1.0 §2 request parameters this server reads. */
export interface LogoutRequestParams {
  id_token_hint?: string;
  client_id?: string;
  post_logout_redirect_uri?: string;
  state?: string;
}

/**
 * Why a logout request is refused: the hint is not an ID token of this server or not for the named
 * client; or the post-logout redirect URI is not one the client registered (§3).
 */
export type LogoutRequestProblem = 'id_token_hint' | 'post_logout_redirect_uri';

/** A logout request checked against the ID token hint and the client's registration. */
export type LogoutRequestDecision =
  | { valid: false; problem: LogoutRequestProblem }
  | {
      valid: true;
      /** The client the request named, or the hint's single audience; null when unknown. */
      client: Client | null;
      /** The hint's `sid`: when it is the current session, no confirmation is asked (§2). */
      hintSid: string | undefined;
      /** The requested post-logout redirect URI (it exactly matches a registered one), or null. */
      redirectUri: string | null;
      /** Where to continue after the logout (`redirectUri` with state appended), or null. */
      continueUrl: string | null;
    };

/**
 * OIDC RP-Initiated Logout 1.0 §2 and §3. The hint must be an ID token this server issued (its
 * signature and issuer; an expired one is still a valid hint, as relying parties log out long after
 * it expired); with both, `client_id` must be one of the hint's audiences; the post-logout redirect
 * URI is used only when it exactly matches one the client registered (§3), with `state` appended.
 * When the client is known and the requested URI matches none of its registered ones, the whole
 * request is refused (nothing is ended): §3 "MUST NOT perform post-logout redirection" leaves the OP
 * to show an error or ask, and signing the user out silently would be neither. Without a known
 * client no URI can be registered, so the request goes on without redirection (the user is asked).
 */
export async function validateLogoutRequest(
  params: LogoutRequestParams,
  deps: { verifier: TokenVerifier; clients: Pick<ClientStore, 'findClient'> },
): Promise<LogoutRequestDecision> {
  let hintAudience: string[] = [];
  let hintSid: string | undefined;
  if (params.id_token_hint !== undefined) {
    try {
      const claims = await deps.verifier.verify(params.id_token_hint, { typ: 'JWT', ignoreExpiration: true });
      hintAudience = typeof claims.aud === 'string' ? [claims.aud] : (claims.aud ?? []);
      hintSid = typeof claims.sid === 'string' ? claims.sid : undefined;
    } catch {
      return { valid: false, problem: 'id_token_hint' };
    }
  }
  if (params.client_id !== undefined && hintAudience.length > 0 && !hintAudience.includes(params.client_id)) {
    return { valid: false, problem: 'id_token_hint' };
  }
  const clientId = params.client_id ?? (hintAudience.length === 1 ? hintAudience[0] : undefined);
  const client = clientId === undefined ? null : await deps.clients.findClient(clientId);
  const requested = params.post_logout_redirect_uri;
  if (requested !== undefined && client !== null && !client.postLogoutRedirectUris.includes(requested)) {
    return { valid: false, problem: 'post_logout_redirect_uri' };
  }
  const redirectUri = requested !== undefined && client !== null ? requested : null;
  return {
    valid: true,
    client,
    hintSid,
    redirectUri,
    continueUrl: redirectUri === null ? null : postLogoutContinueUrl(redirectUri, params.state),
  };
}

/** The registered post-logout redirect URI with the request's `state` (§3). */
export function postLogoutContinueUrl(redirectUri: string, state: string | undefined): string {
  const url = new URL(redirectUri);
  if (state !== undefined) url.searchParams.append('state', state);
  return url.toString();
}
