import { createHash } from 'node:crypto';
import type { User } from '@oidc-orders/oauth-core';
import type { FastifyPluginAsync, FastifyReply, FastifyRequest } from 'fastify';
import { AUDIT_EVENTS, audit } from '../../../audit.js';
import { interactionPagePath } from '../../../endpoints.js';
import type { MessageKey } from '../../../i18n/catalogues/en.js';
import { type SpnegoAcceptor, SpnegoRejectedError } from '../../../kerberos/gssapi-acceptor.js';
import type { KerberosSignIn } from '../../../plugins/kerberos.js';
import type { PageContext } from '../../authorization-reply.js';
import { sendErrorPage } from '../../authorization-reply.js';
import type { LoadedInteraction } from '../steps.js';
import { DIRECTORY_UNAVAILABLE_MESSAGE } from './directory-password.js';
import type { SignInMethod } from './types.js';

/**
 * Kerberos single sign-on at the login step (README "Kerberos"): the login page's
 * `data-sign-in="kerberos"` link leads here, and the browser answers the HTTP Negotiate challenge
 * (RFC 4559) with a Kerberos ticket for this service, wrapped in SPNEGO (RFC 4178).
 *
 *   no `Authorization: Negotiate` → 401 + `WWW-Authenticate: Negotiate`, whose body is the login
 *     form with a short explanation: a browser without a ticket (or not configured to send one)
 *     simply shows it, so there is nothing to loop on;
 *   a token GSSAPI rejects (bad, expired, replayed, for another service) → 403 with the login form
 *     and no new challenge (RFC 9110 §15.5.4: the credentials were understood and refused);
 *   a valid token for an unknown principal → 403 "not registered here", audited;
 *   a valid token whose principal only the directory could map, while the directory is down →
 *     503 with the login form and the directory-unavailable message (as a password sign-in);
 *   a valid token for a user → the sign-in step completes as with a password (303 onward), with
 *     the server's mutual-authentication token when GSSAPI made one (RFC 4559 §5).
 *
 * The route exists only inside an interaction, so `prompt=none` (which never starts one) never
 * attempts Kerberos.
 */

/** What the interaction routes lend this one: loading the interaction and its pages. */
export interface KerberosInteractionSteps<Loaded> {
  /** The interaction of the URL for this browser, as the interaction area's guard loaded it. */
  loaded(request: FastifyRequest): Loaded;
  clientIdOf(loaded: Loaded): string;
  /** The login form (posting to the login URL) with `message` above it. */
  showLoginPage(reply: FastifyReply, loaded: Loaded, status: number, message: string): Promise<FastifyReply>;
  /** The sign-in step succeeded: session, then consent / second factor / code as usual. */
  signedIn(request: FastifyRequest, reply: FastifyReply, loaded: Loaded, user: User): Promise<FastifyReply>;
}

/** Kerberos (src/plugins/kerberos.ts), and what the interaction area lends the route. */
export interface KerberosSignInOptions<Loaded> extends KerberosSignIn {
  steps: KerberosInteractionSteps<Loaded>;
  pageContext: PageContext;
}

export const KERBEROS_NO_TICKET_MESSAGE =
  'Your browser did not sign you in with your organisation account. Sign in with your username and password instead.';
export const KERBEROS_REJECTED_MESSAGE =
  'Your organisation sign-in could not be verified (the ticket may have expired). Sign in with your username and password instead.';

/**
 * MIT krb5's default clock skew is 300 s, so an authenticator is acceptable for at most ±5 minutes;
 * remembering a token for 10 minutes covers that window on every instance.
 */
const REPLAY_WINDOW_SECONDS = 600;

/** RFC 4559 §4.2: `Authorization: Negotiate <base64 token>`; anything else is no token. */
export function negotiateToken(authorization: string | undefined): string | null {
  const match = /^Negotiate +([A-Za-z0-9+/]+={0,2})\s*$/i.exec(authorization ?? '');
  return match?.[1] ?? null;
}

export const kerberosSignInRoutes = <Loaded>(): FastifyPluginAsync<KerberosSignInOptions<Loaded>> =>
  async function kerberosRoutes(app, options) {
    const { acceptor, steps } = options;

    async function acceptedPrincipal(request: FastifyRequest, token: string, clientId: string) {
      const rejected = (reason: string) => {
        request.log.info({ reason }, 'kerberos: SPNEGO token rejected');
        audit(request.log, AUDIT_EVENTS.loginFailed, {
          reason: 'kerberos_ticket_rejected',
          client_id: clientId,
          ip: request.ip,
          method: 'kerberos',
        });
        return null;
      };
      let acceptance: Awaited<ReturnType<SpnegoAcceptor['accept']>>;
      try {
        acceptance = await acceptor.accept(token);
      } catch (error) {
        if (error instanceof SpnegoRejectedError) return rejected(error.reason);
        throw error;
      }
      const key = `spnego:${createHash('sha256').update(token).digest('base64url')}`;
      const fresh = await options.replay.markUsed(key, options.nowSeconds() + REPLAY_WINDOW_SECONDS);
      return fresh ? acceptance : rejected('token replayed (seen by another request or instance)');
    }

    app.get<{ Params: { id: string } }>(
      interactionPagePath('kerberos'),
      { config: { interaction: {} } },
      async (request, reply) => {
        const loaded = steps.loaded(request);
        reply.header('cache-control', 'no-store');
        const token = negotiateToken(request.headers.authorization);
        if (token === null) {
          // RFC 4559 §4.1 (RFC 9110 §11.6.1): the challenge, once per visit of the link.
          reply.header('www-authenticate', 'Negotiate');
          return steps.showLoginPage(reply, loaded, 401, KERBEROS_NO_TICKET_MESSAGE);
        }
        const clientId = steps.clientIdOf(loaded);
        const acceptance = await acceptedPrincipal(request, token, clientId);
        if (acceptance === null) return steps.showLoginPage(reply, loaded, 403, KERBEROS_REJECTED_MESSAGE);

        const user = await options.userForPrincipal(acceptance.principal);
        if (user === 'unavailable') {
          audit(request.log, AUDIT_EVENTS.loginFailed, {
            reason: 'directory_unavailable',
            kerberos_principal: acceptance.principal,
            client_id: clientId,
            ip: request.ip,
            method: 'kerberos',
          });
          // RFC 9110 §10.2.3: a 503 says when to come back.
          reply.header('retry-after', '30');
          return steps.showLoginPage(reply, loaded, 503, DIRECTORY_UNAVAILABLE_MESSAGE);
        }
        if (user === null) {
          audit(request.log, AUDIT_EVENTS.loginFailed, {
            reason: 'kerberos_principal_unknown',
            kerberos_principal: acceptance.principal,
            client_id: clientId,
            ip: request.ip,
            method: 'kerberos',
          });
          return sendErrorPage(
            reply,
            403,
            {
              title: 'Your organisation account is not registered here',
              message: `${acceptance.principal} has no account at this sign-in service. Ask your administrator to register it, or sign in with a username and password.`,
              code: 'kerberos_principal_unknown',
            },
            options.pageContext,
          );
        }
        audit(request.log, AUDIT_EVENTS.loginSucceeded, {
          sub: user.sub,
          client_id: clientId,
          ip: request.ip,
          method: 'kerberos',
        });
        // RFC 4559 §5: the final response carries the server's token for mutual authentication.
        if (acceptance.mutualToken !== null)
          reply.header('www-authenticate', `Negotiate ${acceptance.mutualToken}`);
        return steps.signedIn(request, reply, loaded, user);
      },
    );
  };

/**
 * The login page's link (CONTRACT "Kerberos": `data-sign-in="kerberos"`, a GET), its words a
 * catalogue message (src/i18n/catalogues/) so the page shows them in its language.
 */
export const KERBEROS_LINK_LABEL = 'login.withKerberos' satisfies MessageKey;

/** Kerberos single sign-on as a way in: configured by KRB5_KTNAME (src/plugins/kerberos.ts). */
export const kerberosMethod = {
  name: 'kerberos',
  enabledWith: ({ kerberos }) => kerberos,
  async loginPage(_kerberos, loaded, { steps }) {
    return {
      signInLinks: [
        {
          signIn: 'kerberos',
          href: steps.pageUrl(loaded.interaction, 'kerberos'),
          label: KERBEROS_LINK_LABEL,
        },
      ],
      // The Kerberos challenge's body is the login form too: it must post to the login URL.
      formAction: steps.pageUrl(loaded.interaction, 'login'),
    };
  },
  async register(kerberos, app, { steps, pageContext, showLoginPage }) {
    await app.register(kerberosSignInRoutes<LoadedInteraction>(), {
      ...kerberos,
      pageContext,
      steps: {
        loaded: steps.loaded,
        clientIdOf: (loaded) => loaded.purpose.client.clientId,
        showLoginPage: (reply, loaded, status, message) => showLoginPage(reply, loaded, status, message),
        signedIn: (request, reply, loaded, user) => steps.signedIn(request, reply, loaded, user, 'kerberos'),
      },
    });
  },
} satisfies SignInMethod<{ kerberos: KerberosSignIn | null }, KerberosSignIn>;
