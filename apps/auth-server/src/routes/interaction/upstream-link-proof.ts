import { type User, verifyPassword } from '@oidc-orders/oauth-core';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import * as oidc from 'openid-client';
import { AUDIT_EVENTS, audit } from '../../audit.js';
import { PAGES } from '../../endpoints.js';
import { mappedProfile } from '../../federation/accounts.js';
import { UPSTREAM_AUTHORIZATION_TTL_SECONDS } from '../../federation/authorizations.js';
import { linkIdentity } from '../../federation/email-linking.js';
import { recordPendingLink, takePendingLink as takePendingLinkRow } from '../../federation/pending-links.js';
import type { UpstreamProvider } from '../../federation/registry.js';
import { pageLanguageOf } from '../../i18n/request-language.js';
import { hashCookieValue } from '../../interaction/cookie-hash.js';
import { csrfTokenFor } from '../../interaction/csrf.js';
import { mailedLinkPath, maskedAddress, UPSTREAM_LINK_TTL_SECONDS } from '../../mail/upstream-link.js';
import {
  renderLinkAccountPage,
  renderLinkMailSentPage,
  renderMailedLinkPage,
} from '../../pages/link-account.js';
import { sendHtml } from '../../pages/respond.js';
import { sendErrorPage } from '../authorization-reply.js';
import { readLinkOfferCookie, setLinkOfferCookie } from './link-offer-cookie.js';
import type { UpstreamSignInOptions } from './upstream-options.js';
import { interactionPageUrl } from './url.js';

/**
 * The proofs of a link by verified address (README "Upstream identity providers"): a first
 * federated sign-in whose address is an existing account's links to it only once that account's
 * owner proves it, with the account's password or with a link mailed to the account's own address.
 * Both start from the pending link `offerLink` records (bound to the provider, the upstream
 * subject, the candidate account, this interaction and this browser) and take it, so one upstream
 * sign-in gets one proof; both end in `completeLink`.
 */
type ProviderParams = { Params: { id: string; provider: string }; Body: Record<string, unknown> };
type MailedLinkParams = { Params: { provider: string }; Querystring: Record<string, unknown> };

export const PENDING_LINK_INVALID_PAGE = {
  title: 'This sign-in link is not valid',
  message:
    'The answer from the other sign-in service does not belong to a sign-in started here, in this browser.',
  advice: 'Please start signing in again from the application.',
  code: 'upstream_state_invalid',
  accountLink: true,
} as const;

const field = (body: unknown, name: string) => {
  const value = (body as Record<string, unknown> | null | undefined)?.[name];
  return typeof value === 'string' ? value : '';
};

/** Only a real local password proves anything: passkey-only, directory and federated accounts have none. */
const hasLocalPassword = (user: User) => user.passwordHash.startsWith('scrypt$');

/** Registers both proofs and the mailed link's page; the callback offers the link with `offerLink`. */
export function registerLinkProofRoutes<Loaded>(
  app: FastifyInstance,
  options: UpstreamSignInOptions<Loaded>,
  enabledProvider: (id: string) => Promise<UpstreamProvider | null>,
) {
  const proofs = linkProofSteps(options);
  registerProofRoutes(app, options, enabledProvider, proofs);
  registerMailedLinkRoutes(app, options, enabledProvider, proofs.completeLink);
  return { offerLink: proofs.offerLink };
}

/** The pending link's life: offered (recorded), taken by one proof, completed once proven. */
function linkProofSteps<Loaded>(options: UpstreamSignInOptions<Loaded>) {
  const { steps, pageContext } = options;
  const linkMail = options.linkMail ?? null;
  const linkPath = (interactionId: string, provider: UpstreamProvider) =>
    `${pageContext.basePath}/interaction/${encodeURIComponent(interactionId)}/idp/${provider.id}/link`;
  const offerBinding = (interactionId: string, provider: UpstreamProvider) =>
    `${interactionId}:${provider.id}`;
  const sendPage = (reply: FastifyReply, loaded: Loaded, page: string) =>
    sendHtml(reply, 200, page, { formActionSources: steps.formActionSourcesOf(loaded) });

  /** The link page: the proofs this account can give, recorded as one pending link. */
  async function offerLink(
    reply: FastifyReply,
    loaded: Loaded,
    provider: UpstreamProvider,
    subject: string,
    candidateSub: string,
    claims: Record<string, unknown>,
  ) {
    const user = await options.findUser(candidateSub);
    const byPassword = user !== null && hasLocalPassword(user);
    const byMail = user !== null && linkMail !== null && !!user.email;
    const browserKey = steps.browserKeyOf(loaded);
    const interactionId = steps.interactionIdOf(loaded);
    const linkToken = byPassword || byMail ? oidc.randomState() : '';
    if (linkToken !== '') {
      const pending = {
        providerId: provider.id,
        upstreamSubject: subject,
        sub: candidateSub,
        browserHash: hashCookieValue(browserKey),
        interactionId,
      };
      await recordPendingLink(options.db, linkToken, pending, options.nowSeconds());
    }
    const offer = { linkToken, email: mappedProfile(provider, claims).email ?? '', byPassword, byMail };
    // The page at its own address, not at the callback's (which carries `code` and `state`).
    setLinkOfferCookie(reply, offer, {
      browserKey,
      boundTo: offerBinding(interactionId, provider),
      path: linkPath(interactionId, provider),
      secure: new URL(pageContext.issuer).protocol === 'https:',
      maxAgeSeconds: UPSTREAM_AUTHORIZATION_TTL_SECONDS,
    });
    return reply.header('cache-control', 'no-store').redirect(linkPath(interactionId, provider), 303);
  }

  /** The link page of the offer the callback made in this browser, for this interaction and provider. */
  function sendLinkPage(
    request: FastifyRequest,
    reply: FastifyReply,
    loaded: Loaded,
    provider: UpstreamProvider,
  ) {
    const browserKey = steps.browserKeyOf(loaded);
    const interactionId = steps.interactionIdOf(loaded);
    const offer = readLinkOfferCookie(request, browserKey, offerBinding(interactionId, provider));
    if (offer === null) return sendErrorPage(reply, 400, PENDING_LINK_INVALID_PAGE, pageContext);
    const page = renderLinkAccountPage({
      providerName: provider.displayName,
      email: offer.email,
      csrfToken: csrfTokenFor(browserKey, 'login', interactionId),
      linkToken: offer.linkToken,
      passwordAction: offer.byPassword ? linkPath(interactionId, provider) : null,
      mailAction: offer.byMail ? `${linkPath(interactionId, provider)}/mail` : null,
      loginUrl: interactionPageUrl(pageContext, interactionId, 'login', steps.clientIdOf(loaded)),
      basePath: pageContext.basePath,
      language: pageLanguageOf(request),
    });
    return sendPage(reply, loaded, page);
  }

  /** The pending link of this form, if it is this browser's and this interaction's, unused (taken now). */
  async function takePendingLink(loaded: Loaded, provider: UpstreamProvider, token: string) {
    const pending =
      token === '' ? null : await takePendingLinkRow(options.db, token, provider.id, options.nowSeconds());
    const valid =
      pending !== null &&
      pending.interactionId === steps.interactionIdOf(loaded) &&
      pending.browserHash === hashCookieValue(steps.browserKeyOf(loaded));
    return valid ? { sub: pending.sub, subject: pending.upstreamSubject } : null;
  }

  /** A proven link: record it, then continue the sign-in as the existing account. */
  async function completeLink(
    request: FastifyRequest,
    reply: FastifyReply,
    loaded: Loaded,
    proven: ProvenLink,
  ) {
    const { provider, subject, user } = proven;
    await linkIdentity(options.db, provider, subject, user.sub, options.nowSeconds());
    audit(request.log, AUDIT_EVENTS.loginSucceeded, {
      sub: user.sub,
      client_id: steps.clientIdOf(loaded),
      ip: request.ip,
      method: `idp:${provider.id}`,
      reason: proven.reason,
    });
    request.server.securityNotices?.notify(request, user.sub, 'identity_linked', provider.displayName);
    // amr: `fed` for the upstream's assertion, plus the proof made here (RFC 8176 §2).
    const details = { upstreamAmr: [], localAmr: proven.localAmr ?? [] };
    return steps.signedIn(request, reply, loaded, user, details, async () => {});
  }
  return { offerLink, sendLinkPage, takePendingLink, completeLink, sendPage };
}

type LinkProofSteps<Loaded> = ReturnType<typeof linkProofSteps<Loaded>>;

/** The link page's two forms: the password (checked at once) and "E-mail me a link". */
function registerProofRoutes<Loaded>(
  app: FastifyInstance,
  options: UpstreamSignInOptions<Loaded>,
  enabledProvider: (id: string) => Promise<UpstreamProvider | null>,
  { sendLinkPage, takePendingLink, completeLink, sendPage }: LinkProofSteps<Loaded>,
) {
  const { steps, pageContext } = options;
  const linkMail = options.linkMail ?? null;

  /** The form's provider and pending link (taken: one proof per upstream sign-in), or `null` after a page. */
  async function takeFormsPendingLink(
    request: FastifyRequest<ProviderParams>,
    reply: FastifyReply,
    loaded: Loaded,
  ) {
    const provider = await enabledProvider(request.params.provider);
    if (provider === null) {
      sendErrorPage(reply, 404, UNKNOWN_PROVIDER_PAGE, pageContext);
      return null;
    }
    const pending = await takePendingLink(loaded, provider, field(request.body, 'link'));
    if (pending === null) {
      sendErrorPage(reply, 400, PENDING_LINK_INVALID_PAGE, pageContext);
      return null;
    }
    return { provider, pending, user: await options.findUser(pending.sub) };
  }

  // The page the callback redirects to; a reload shows it again (the pending link is taken by a form only).
  app.get<ProviderParams>(
    PAGES.upstreamLink.path,
    { config: { interaction: {} } },
    async (request, reply) => {
      reply.header('cache-control', 'no-store');
      const provider = await enabledProvider(request.params.provider);
      if (provider === null) return sendErrorPage(reply, 404, UNKNOWN_PROVIDER_PAGE, pageContext);
      return sendLinkPage(request, reply, steps.loaded(request), provider);
    },
  );

  app.post<ProviderParams>(
    PAGES.upstreamLink.path,
    { config: { interaction: { csrf: 'login' } } },
    async (request, reply) => {
      const loaded = steps.loaded(request);
      const taken = await takeFormsPendingLink(request, reply, loaded);
      if (taken === null) return reply;
      const { provider, pending, user } = taken;
      // One try per upstream sign-in: a wrong password ends it, so guessing needs the upstream each time.
      if (user === null || !(await verifyPassword(field(request.body, 'password'), user.passwordHash))) {
        audit(request.log, AUDIT_EVENTS.loginFailed, {
          reason: 'link_proof_refused',
          sub: pending.sub,
          client_id: steps.clientIdOf(loaded),
          ip: request.ip,
          method: `idp:${provider.id}`,
        });
        return sendErrorPage(reply, 401, LINK_REFUSED_PAGE, pageContext);
      }
      const proven = {
        provider,
        subject: pending.subject,
        user,
        reason: 'linked_by_verified_email',
        localAmr: ['pwd'],
      };
      return completeLink(request, reply, loaded, proven);
    },
  );

  app.post<ProviderParams>(
    PAGES.upstreamLinkMail.path,
    { config: { interaction: { csrf: 'login' } } },
    async (request, reply) => {
      const loaded = steps.loaded(request);
      const taken = await takeFormsPendingLink(request, reply, loaded);
      if (taken === null) return reply;
      const { provider, pending, user } = taken;
      if (linkMail === null || !user?.email) {
        return sendErrorPage(reply, 400, PENDING_LINK_INVALID_PAGE, pageContext);
      }
      // To the address the account has here, never the one the upstream sent.
      const binding = {
        providerId: provider.id,
        subject: pending.subject,
        sub: user.sub,
        interactionId: steps.interactionIdOf(loaded),
        browserHash: hashCookieValue(steps.browserKeyOf(loaded)),
      };
      const outcome = await linkMail.send(binding, user.email, provider.displayName);
      if (!outcome.sent) return sendErrorPage(reply, 503, MAIL_NOT_SENT_PAGE, pageContext);
      const page = renderLinkMailSentPage({
        providerName: provider.displayName,
        maskedEmail: maskedAddress(user.email),
        minutes: UPSTREAM_LINK_TTL_SECONDS / 60,
        basePath: pageContext.basePath,
        language: pageLanguageOf(request),
      });
      return sendPage(reply, loaded, page);
    },
  );
}

/** What a proof established: this upstream subject at this provider is the account `user`. */
interface ProvenLink {
  provider: UpstreamProvider;
  subject: string;
  user: User;
  reason: string;
  /** RFC 8176 values of the proof made here (`pwd` for the account's password). */
  localAmr?: string[];
}

type CompleteLink<Loaded> = (
  request: FastifyRequest,
  reply: FastifyReply,
  loaded: Loaded,
  proven: ProvenLink,
) => Promise<FastifyReply>;

/**
 * The mailed link (`/idp/<id>/link?token=`): its GET only shows a button (mail scanners open
 * links), its POST uses the token up and links. Either checks first, using nothing up: a live
 * token of this provider, opened in the browser the sign-in started in, whose interaction is live.
 */
function registerMailedLinkRoutes<Loaded>(
  app: FastifyInstance,
  options: UpstreamSignInOptions<Loaded>,
  enabledProvider: (id: string) => Promise<UpstreamProvider | null>,
  completeLink: CompleteLink<Loaded>,
) {
  const { steps, pageContext } = options;
  const linkMail = options.linkMail ?? null;

  /** The link and its interaction, or `null` once an error page was sent. */
  async function openMailedLink(
    request: FastifyRequest<MailedLinkParams>,
    reply: FastifyReply,
    token: string,
  ) {
    reply.header('cache-control', 'no-store');
    const provider = await enabledProvider(request.params.provider);
    if (provider === null) return void sendErrorPage(reply, 404, UNKNOWN_PROVIDER_PAGE, pageContext);
    const link = token === '' || linkMail === null ? null : await linkMail.peek(token);
    if (link === null || link.providerId !== provider.id) {
      return void sendErrorPage(reply, 400, MAILED_LINK_INVALID_PAGE, pageContext);
    }
    const browserKey = steps.requestBrowserKey(request);
    if (browserKey === null || hashCookieValue(browserKey) !== link.browserHash) {
      return void sendErrorPage(reply, 400, OTHER_BROWSER_PAGE, pageContext);
    }
    request.params = { ...request.params, id: link.interactionId } as typeof request.params;
    const loaded = await steps.load(request as unknown as FastifyRequest<{ Params: { id: string } }>, reply);
    return loaded === null ? undefined : { provider, link, loaded };
  }

  app.get<MailedLinkParams>(
    PAGES.upstreamMailedLink.path,
    { config: { interaction: { loadedBy: 'state' } } },
    async (request, reply) => {
      const token = field(request.query, 'token');
      const opened = await openMailedLink(request, reply, token);
      if (opened === undefined) return reply;
      const page = renderMailedLinkPage({
        providerName: opened.provider.displayName,
        maskedEmail: maskedAddress(opened.link.email),
        action: `${pageContext.basePath}${mailedLinkPath(opened.provider.id)}`,
        csrfToken: csrfTokenFor(steps.browserKeyOf(opened.loaded), 'login', opened.link.interactionId),
        token,
        basePath: pageContext.basePath,
        language: pageLanguageOf(request),
      });
      return sendHtml(reply, 200, page, { formActionSources: steps.formActionSourcesOf(opened.loaded) });
    },
  );

  app.post<MailedLinkParams & { Body: Record<string, unknown> }>(
    PAGES.upstreamMailedLink.path,
    { config: { interaction: { loadedBy: 'state' } } },
    async (request, reply) => {
      const token = field(request.body, 'token');
      const opened = await openMailedLink(request, reply, token);
      if (opened === undefined || !steps.checkCsrf(request, reply, opened.loaded)) return reply;
      // Used once, whichever instance gets there first (a conditional DELETE).
      const used = linkMail === null ? null : await linkMail.consume(token);
      if (used === null) return sendErrorPage(reply, 400, MAILED_LINK_INVALID_PAGE, pageContext);
      const user = await options.findUser(used.sub);
      // The account's address when the link was mailed: a changed address voids it.
      if (user === null || (user.email ?? '').toLowerCase() !== used.email.toLowerCase()) {
        return sendErrorPage(reply, 400, MAILED_LINK_INVALID_PAGE, pageContext);
      }
      const proven = {
        provider: opened.provider,
        subject: used.subject,
        user,
        reason: 'linked_by_mailed_link',
      };
      return completeLink(request, reply, opened.loaded, proven);
    },
  );
}

export const UNKNOWN_PROVIDER_PAGE = {
  title: 'Unknown sign-in service',
  message: 'This sign-in service is not (or no longer) offered here.',
  code: 'upstream_provider_unknown',
} as const;

const LINK_REFUSED_PAGE = {
  title: 'The account was not linked',
  message: 'The password did not match the existing account, so nothing was linked.',
  advice: 'Please start signing in again from the application.',
  code: 'link_proof_refused',
} as const;

const MAIL_NOT_SENT_PAGE = {
  title: 'The mail could not be sent',
  message: 'The link could not be mailed just now, so nothing was linked.',
  advice: 'Please start signing in again from the application in a few minutes.',
  code: 'link_mail_not_sent',
} as const;

const MAILED_LINK_INVALID_PAGE = {
  title: 'This link is no longer valid',
  message: 'It was already used, it expired, or a newer link was sent. Nothing was linked.',
  advice: 'Please start signing in again from the application.',
  code: 'link_mail_invalid',
  accountLink: true,
} as const;

const OTHER_BROWSER_PAGE = {
  title: 'Open the link in the browser where you started signing in',
  message: 'This link works only in the browser where you started signing in. Nothing was linked.',
  advice: 'Copy the link from the mail into that browser, or start signing in again here.',
  code: 'link_mail_other_browser',
} as const;
