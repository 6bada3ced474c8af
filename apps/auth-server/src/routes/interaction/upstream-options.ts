import type { User } from '@oidc-orders/oauth-core';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { SsoSession } from '../../interaction/sso-session-repository.js';
import type { FederationSignIn } from '../../plugins/federation.js';
import type { PageContext } from '../authorization-reply.js';
import type { AccountLinkFinisher } from './options.js';
import type { MethodDetails } from './steps.js';

/**
 * What the upstream providers' routes (./upstream.ts, ./upstream-link-proof.ts) are given: the
 * federation (src/plugins/federation.ts) and the interaction steps the sign-in method lends them
 * (./methods/federation.ts).
 */
export interface UpstreamInteractionSteps<Loaded> {
  /** The interaction of the URL for this browser, as the interaction area's guard loaded it. */
  loaded(request: FastifyRequest): Loaded;
  /** Loads the interaction the callback's state names (the same browser binding as the guard's). */
  load(request: FastifyRequest<{ Params: { id: string } }>, reply: FastifyReply): Promise<Loaded | null>;
  interactionIdOf(loaded: Loaded): string;
  /** The browser's key the interaction was loaded with (its cookie; the interaction is bound to it). */
  browserKeyOf(loaded: Loaded): string;
  clientIdOf(loaded: Loaded): string;
  showLoginPage(reply: FastifyReply, loaded: Loaded, status: number, message: string): Promise<FastifyReply>;
  /** The browser's key of a request whose URL names no interaction (a mailed link), or `null`. */
  requestBrowserKey(request: FastifyRequest): string | null;
  /** The form's CSRF token (purpose `login`) for this interaction and browser; else a page was sent. */
  checkCsrf(request: FastifyRequest, reply: FastifyReply, loaded: Loaded): boolean;
  /** CSP `form-action` sources of the interaction's pages (its client's redirect URI origin). */
  formActionSourcesOf(loaded: Loaded): string[];
  signedIn(
    request: FastifyRequest,
    reply: FastifyReply,
    loaded: Loaded,
    user: User,
    details: MethodDetails,
    onSessionStarted: (session: SsoSession) => Promise<void>,
  ): Promise<FastifyReply>;
}

export interface UpstreamSignInOptions<Loaded> extends FederationSignIn {
  nowSeconds(): number;
  pageContext: PageContext;
  steps: UpstreamInteractionSteps<Loaded>;
  /** Finishes a link started on the account page (../account/account-identity-links.ts). */
  finishAccountLink?: AccountLinkFinisher | undefined;
}
