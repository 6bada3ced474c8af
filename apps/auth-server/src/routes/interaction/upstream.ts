import type { FastifyPluginAsync, FastifyReply, FastifyRequest } from 'fastify';
import { decideUpstreamSignIn } from '../../accounts/first-sign-in.js';
import { AUDIT_EVENTS, audit } from '../../audit.js';
import { PAGES } from '../../endpoints.js';
import { signInFederatedIdentity, upstreamSubject } from '../../federation/accounts.js';
import { type StartedAuthorization, takeStartedAuthorization } from '../../federation/authorizations.js';
import { classifyUpstreamFailure, FAILURE_PAGES } from '../../federation/callback-errors.js';
import { upstreamArrival } from '../../federation/email-linking.js';
import { recordFederatedSession } from '../../federation/federated-sessions.js';
import { enabledProviderIds, isProviderEnabled, type UpstreamProvider } from '../../federation/registry.js';
import { upstreamMethodDetails } from '../../federation/upstream-assurance.js';
import { redeemUpstreamCode, startUpstreamAuthorization } from '../../federation/upstream-code-flow.js';
import { hashCookieValue } from '../../interaction/cookie-hash.js';
import { sendErrorPage } from '../authorization-reply.js';
import {
  PENDING_LINK_INVALID_PAGE,
  registerLinkProofRoutes,
  UNKNOWN_PROVIDER_PAGE,
} from './upstream-link-proof.js';
import type { UpstreamSignInOptions } from './upstream-options.js';

/**
 * Signing in at an upstream OpenID provider (README "Upstream identity providers"). The login
 * page's `data-sign-in="idp:<id>"` link is `GET /interaction/:id/idp/<id>`: it records a started
 * authorization (PKCE S256 verifier, `state`, `nonce`; RFC 7636, OIDC Core §3.1.2.1) bound to this
 * browser, this interaction and this provider in the database, so any instance can finish it, and
 * sends the browser to the provider. The provider returns to `/idp/<id>/callback`: one callback
 * per provider, the provider bound into `state` and `iss` checked when the provider advertises
 * RFC 9207, the mix-up defences of RFC 9700 §4.4. A link started on the account page (purpose
 * `account_link`, no interaction) returns there too; ../account/account-identity-links.ts finishes it.
 */
export type { AccountLinkFinisher } from './options.js';
export type { UpstreamInteractionSteps, UpstreamSignInOptions } from './upstream-options.js';

export const upstreamCallbackPath = (providerId: string) => `/idp/${providerId}/callback`;

export const UPSTREAM_CANCELLED_MESSAGE =
  'Signing in with the other service was cancelled or refused. Sign in another way, or try again.';

export const upstreamSignInRoutes = <Loaded>(): FastifyPluginAsync<UpstreamSignInOptions<Loaded>> =>
  async function upstreamRoutes(app, options) {
    const { steps, pageContext } = options;
    const redirectUri = (provider: UpstreamProvider) =>
      `${pageContext.issuer}${upstreamCallbackPath(provider.id)}`;

    async function enabledProvider(id: string): Promise<UpstreamProvider | null> {
      const provider = options.providers.get(id);
      return provider !== undefined && (await isProviderEnabled(options.db, id)) ? provider : null;
    }

    function sendFailure(reply: FastifyReply, failure: keyof typeof FAILURE_PAGES) {
      const { status, ...page } = FAILURE_PAGES[failure];
      return sendErrorPage(reply, status, page, pageContext);
    }

    app.get<{ Params: { id: string; provider: string } }>(
      PAGES.upstreamSignIn.path,
      { config: { interaction: {} } },
      async (request, reply) => {
        const loaded = steps.loaded(request);
        reply.header('cache-control', 'no-store');
        const provider = await enabledProvider(request.params.provider);
        if (provider === null) return sendErrorPage(reply, 404, UNKNOWN_PROVIDER_PAGE, pageContext);
        let target: URL;
        try {
          target = await startUpstreamAuthorization(options, provider, redirectUri(provider), {
            browserHash: hashCookieValue(steps.browserKeyOf(loaded)),
            interactionId: steps.interactionIdOf(loaded),
            purpose: 'sign_in',
            linkSub: null,
          });
        } catch (error) {
          request.log.warn({ provider: provider.id, err: error }, 'upstream discovery failed');
          return sendFailure(reply, classifyUpstreamFailure(error) === 'timeout' ? 'timeout' : 'unavailable');
        }
        return reply.redirect(target.href, 303);
      },
    );

    const { offerLink } = registerLinkProofRoutes(app, options, enabledProvider);

    const finishSignIn = signInFinisher(options, { redirectUri, sendFailure, offerLink });

    // One callback per provider; what it finishes is the started authorization's `purpose`.
    app.get<CallbackRequest>(
      PAGES.upstreamCallback.path,
      { config: { interaction: { loadedBy: 'state' } } },
      async (request, reply) => {
        reply.header('cache-control', 'no-store');
        const provider = await enabledProvider(request.params.provider);
        if (provider === null) return sendErrorPage(reply, 404, UNKNOWN_PROVIDER_PAGE, pageContext);
        const state = typeof request.query.state === 'string' ? request.query.state : '';
        // The state must be this provider's, unused and unexpired.
        const started =
          state === ''
            ? null
            : await takeStartedAuthorization(options.db, state, provider.id, options.nowSeconds());
        if (started?.purpose === 'sign_in') return finishSignIn(request, reply, provider, started, state);
        if (started?.purpose === 'account_link' && options.finishAccountLink !== undefined) {
          const redeem = () =>
            redeemUpstreamCode(options.clients, provider, redirectUri(provider), request.query, {
              ...started,
              state,
            });
          return options.finishAccountLink(request, reply, { provider, started, redeem });
        }
        return sendErrorPage(reply, 400, PENDING_LINK_INVALID_PAGE, pageContext);
      },
    );
  };

type CallbackRequest = { Params: { provider: string }; Querystring: Record<string, string> };

/**
 * The return of a sign-in started on the login page (purpose `sign_in`): its interaction, live and
 * this browser's; the provider's answer (OIDC Core §3.1.2.6 errors, then the code); the local user
 * (or the e-mail link proof first); the interaction continues signed in.
 */
function signInFinisher<Loaded>(
  options: UpstreamSignInOptions<Loaded>,
  parts: {
    redirectUri(provider: UpstreamProvider): string;
    sendFailure(reply: FastifyReply, failure: keyof typeof FAILURE_PAGES): FastifyReply;
    offerLink: ReturnType<typeof registerLinkProofRoutes<Loaded>>['offerLink'];
  },
) {
  const { steps, pageContext } = options;
  const { redirectUri, sendFailure, offerLink } = parts;

  /** The callback of a started sign-in: its interaction, live and this browser's, or `null` (a page was sent). */
  async function loadSignInInteraction(
    request: FastifyRequest<CallbackRequest>,
    reply: FastifyReply,
    started: StartedAuthorization,
  ): Promise<Loaded | null> {
    if (started.interactionId === null) {
      sendErrorPage(reply, 400, PENDING_LINK_INVALID_PAGE, pageContext);
      return null;
    }
    // Its interaction live and this browser's (load checks the interaction's browser binding)…
    request.params = { ...request.params, id: started.interactionId } as typeof request.params;
    const loaded = await steps.load(request as unknown as FastifyRequest<{ Params: { id: string } }>, reply);
    if (loaded === null) return null;
    // …and started by this very browser.
    if (hashCookieValue(steps.browserKeyOf(loaded)) !== started.browserHash) {
      sendErrorPage(reply, 400, PENDING_LINK_INVALID_PAGE, pageContext);
      return null;
    }
    return loaded;
  }

  /** Redeems the code (./federation/upstream-code-flow.ts), or `null` after the failure page. */
  async function redeemOrFail(
    request: FastifyRequest<CallbackRequest>,
    reply: FastifyReply,
    provider: UpstreamProvider,
    started: StartedAuthorization,
    state: string,
  ) {
    try {
      return await redeemUpstreamCode(options.clients, provider, redirectUri(provider), request.query, {
        ...started,
        state,
      });
    } catch (error) {
      const failure = classifyUpstreamFailure(error);
      request.log.warn(
        {
          provider: provider.id,
          failure,
          code: (error as { code?: string }).code,
          reason: (error as Error).message,
        },
        'upstream sign-in refused',
      );
      sendFailure(reply, failure);
      return null;
    }
  }

  /** The return of a sign-in started on the login page (purpose `sign_in`). */
  async function finishSignIn(
    request: FastifyRequest<CallbackRequest>,
    reply: FastifyReply,
    provider: UpstreamProvider,
    started: StartedAuthorization,
    state: string,
  ) {
    const loaded = await loadSignInInteraction(request, reply, started);
    if (loaded === null) return reply;
    if (typeof request.query.error === 'string') {
      // OIDC Core §3.1.2.6 (access_denied, login_required, …): the other ways in stay open.
      audit(request.log, AUDIT_EVENTS.loginFailed, {
        reason: `upstream_${request.query.error}`.slice(0, 64),
        client_id: steps.clientIdOf(loaded),
        ip: request.ip,
        method: `idp:${provider.id}`,
      });
      return steps.showLoginPage(reply, loaded, 401, UPSTREAM_CANCELLED_MESSAGE);
    }
    const redeemed = await redeemOrFail(request, reply, provider, started, state);
    if (redeemed === null) return reply;
    const { tokens, claims } = redeemed;
    const subject = upstreamSubject(provider, claims);
    const decision = decideUpstreamSignIn(await upstreamArrival(options.db, provider, subject, claims));
    if (subject === null || decision.kind === 'refuse') return sendFailure(reply, 'refused');
    // A first sign-in whose verified address is an existing account's: that account proves it first.
    if (decision.kind === 'offer_link')
      return offerLink(reply, loaded, provider, subject, decision.sub, claims);
    const sub = await signInFederatedIdentity(options.db, provider, subject, claims, options.nowSeconds());
    const user = await options.findUser(sub);
    // A linked local user an operator disabled: the upstream cannot bring them back.
    if (user === null) return sendErrorPage(reply, 403, disabledUserPage, pageContext);
    audit(request.log, AUDIT_EVENTS.loginSucceeded, {
      sub: user.sub,
      client_id: steps.clientIdOf(loaded),
      ip: request.ip,
      method: `idp:${provider.id}`,
    });
    return steps.signedIn(request, reply, loaded, user, upstreamMethodDetails(provider, claims), (session) =>
      recordFederatedSession(options.db, {
        sessionId: session.id,
        providerId: provider.id,
        upstreamSubject: subject,
        upstreamSid: typeof claims.sid === 'string' ? claims.sid : null,
        idToken: tokens.id_token ?? '',
        now: options.nowSeconds(),
      }),
    );
  }

  return finishSignIn;
}

const disabledUserPage = {
  title: 'This account cannot sign in',
  message: 'The account linked to this sign-in is disabled here.',
  code: 'account_disabled',
} as const;

/** The login page's buttons: the providers this instance knows and the shared table has enabled. */
export async function upstreamButtons(
  federation: Pick<UpstreamSignInOptions<unknown>, 'providers' | 'db'> | undefined,
  interactionId: string,
  basePath: string,
): Promise<{ id: string; displayName: string; href: string }[]> {
  if (federation === undefined || federation.providers.size === 0) return [];
  const enabled = await enabledProviderIds(federation.db);
  return [...federation.providers.values()]
    .filter((provider) => enabled.has(provider.id))
    .map((provider) => ({
      id: provider.id,
      displayName: provider.displayName,
      href: `${basePath}/interaction/${encodeURIComponent(interactionId)}/idp/${provider.id}`,
    }));
}
