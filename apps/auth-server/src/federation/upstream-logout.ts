import * as oidc from 'openid-client';
import type { AppDatabase } from '../db/client.js';
import { recordStartedAuthorization } from './authorizations.js';
import { federatedSessionOf, forgetFederatedSessions } from './federated-sessions.js';
import { isProviderEnabled, type UpstreamProvider } from './registry.js';
import type { UpstreamClients } from './upstream-client.js';

export interface UpstreamLogoutDeps {
  db: AppDatabase;
  providers: ReadonlyMap<string, UpstreamProvider>;
  clients: UpstreamClients;
  issuer: string;
  nowSeconds(): number;
}

export const upstreamSignedOutPath = (providerId: string) => `/idp/${providerId}/signed-out`;

/**
 * After our logout ended a session a provider's sign-in started: the provider's end_session_endpoint
 * with the upstream ID token as `id_token_hint` (OIDC RP-Initiated Logout 1.0 §2), when the provider
 * is configured with `logout_at_provider` and publishes that endpoint. The provider sends the browser
 * back to `/idp/<id>/signed-out` with our `state`, which remembers `continueUrl` (the client's
 * post-logout URI, if any). `null` when there is nothing to do there; a provider that cannot be
 * reached never stops our own logout.
 */
export async function upstreamLogoutTarget(
  deps: UpstreamLogoutDeps,
  sessionId: string,
  continueUrl: string | null,
): Promise<string | null> {
  const record = await federatedSessionOf(deps.db, sessionId);
  if (record === null) return null;
  await forgetFederatedSessions(deps.db, [sessionId]);
  const provider = deps.providers.get(record.providerId);
  if (provider === undefined || !provider.logoutAtProvider) return null;
  if (!(await isProviderEnabled(deps.db, provider.id))) return null;
  let configuration: oidc.Configuration;
  try {
    configuration = await deps.clients.configurationOf(provider);
  } catch {
    return null;
  }
  if (configuration.serverMetadata().end_session_endpoint === undefined) return null;
  const state = oidc.randomState();
  await recordStartedAuthorization(
    deps.db,
    state,
    {
      providerId: provider.id,
      browserHash: '',
      interactionId: null,
      purpose: 'logout',
      linkSub: null,
      returnTo: continueUrl,
      codeVerifier: '',
      nonce: '',
    },
    deps.nowSeconds(),
  );
  return oidc.buildEndSessionUrl(configuration, {
    id_token_hint: record.idToken,
    post_logout_redirect_uri: `${deps.issuer}${upstreamSignedOutPath(provider.id)}`,
    state,
  }).href;
}
