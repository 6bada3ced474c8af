import type { User } from '@oidc-orders/oauth-core';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { ACCOUNT_CLIENT } from '../../account/account-interaction.js';
import { type AccountNotice, accountResultUrl } from '../../account/account-result.js';
import { unlinkIdentity } from '../../accounts/drizzle/linked-identities.js';
import { AUDIT_EVENTS, audit } from '../../audit.js';
import type { AppDatabase } from '../../db/client.js';
import { linkIdentityToAccount } from '../../federation/account-identity-links.js';
import { upstreamSubject } from '../../federation/accounts.js';
import { classifyUpstreamFailure } from '../../federation/callback-errors.js';
import { enabledProviderIds, isProviderEnabled, type UpstreamProvider } from '../../federation/registry.js';
import type { UpstreamClients } from '../../federation/upstream-client.js';
import { startUpstreamAuthorization } from '../../federation/upstream-code-flow.js';
import { pageLanguageOf } from '../../i18n/request-language.js';
import type { AuthorizationFlow } from '../../interaction/authorization-flow.js';
import { hashCookieValue } from '../../interaction/cookie-hash.js';
import type { SsoSession } from '../../interaction/sso-session-repository.js';
import { renderContinueToProviderPage } from '../../pages/continue-to-provider.js';
import { sendHtml } from '../../pages/respond.js';
import type { PageContext } from '../authorization-reply.js';
import { sendErrorPage } from '../authorization-reply.js';
import type { AccountLinkFinisher } from '../interaction/options.js';
import { upstreamCallbackPath } from '../interaction/upstream.js';

/**
 * Linking an upstream OpenID provider from the account page (README "Upstream identity
 * providers"). "Link <provider>" (a POST with a recent authentication, as adding a passkey) starts
 * the same code flow as a sign-in (PKCE S256, `state`, `nonce`), with purpose `account_link`,
 * bound to this browser and this user instead of an interaction. The provider's one callback
 * (../interaction/upstream.ts) hands such a return to `accountLinkFinisher`, which checks the
 * browser and the account session again, redeems the code as a sign-in does, and links the
 * upstream subject unless it already signs in another user.
 */

/** The federation as the account area needs it. */
export interface AccountFederation {
  db: AppDatabase;
  providers: ReadonlyMap<string, UpstreamProvider>;
  clients: UpstreamClients;
}

interface AccountHolder {
  session: SsoSession;
  user: User;
  browserKey: string;
}

type Notice = Pick<AccountNotice, 'kind' | 'text'>;

export interface AccountIdentityLinkOptions {
  federation: AccountFederation;
  pageContext: PageContext;
  nowSeconds(): number;
  accountHolder(request: FastifyRequest): AccountHolder;
  sendAccountPage(reply: FastifyReply, current: AccountHolder, status: number, notice: Notice): unknown;
}

/** The providers the account page offers to link: known here, enabled, and not linked to this user yet. */
export async function linkableProviders(
  federation: AccountFederation | undefined,
  linkedProviderIds: ReadonlySet<string>,
): Promise<{ id: string; displayName: string }[]> {
  if (federation === undefined || federation.providers.size === 0) return [];
  const enabled = await enabledProviderIds(federation.db);
  return [...federation.providers.values()]
    .filter((provider) => enabled.has(provider.id) && !linkedProviderIds.has(provider.id))
    .map((provider) => ({ id: provider.id, displayName: provider.displayName }));
}

export function registerAccountIdentityLinkRoutes(app: FastifyInstance, options: AccountIdentityLinkOptions) {
  const { federation, pageContext } = options;

  // A new way into the account: as sensitive as adding a passkey, so a recent authentication
  // (NIST SP 800-63B §4.2.3) is required, not only the CSRF token.
  app.post<{ Params: { id: string } }>(
    '/account/providers/:id/link',
    { config: { account: 'recent-change' } },
    async (request, reply) => {
      const current = options.accountHolder(request);
      const provider = federation.providers.get(request.params.id);
      if (provider === undefined || !(await isProviderEnabled(federation.db, provider.id))) {
        return options.sendAccountPage(reply, current, 404, {
          kind: 'error',
          text: request.language.text('accountNotice.providerNotOffered'),
        });
      }
      let target: URL;
      try {
        target = await startUpstreamAuthorization(
          { ...federation, nowSeconds: options.nowSeconds },
          provider,
          `${pageContext.issuer}${upstreamCallbackPath(provider.id)}`,
          {
            browserHash: hashCookieValue(current.browserKey),
            interactionId: null,
            purpose: 'account_link',
            linkSub: current.user.sub,
          },
        );
      } catch (error) {
        request.log.warn({ provider: provider.id, err: error }, 'upstream discovery failed');
        return options.sendAccountPage(reply, current, 502, {
          kind: 'error',
          text: request.language.text('accountNotice.providerUnreachable', {
            provider: provider.displayName,
          }),
        });
      }
      // A page that goes on to the provider, not a redirect: CSP form-action would block a redirect
      // to the provider's origin after this form's submission (see the page's comment).
      const page = renderContinueToProviderPage({
        providerName: provider.displayName,
        target: target.href,
        basePath: pageContext.basePath,
        language: pageLanguageOf(request),
      });
      return sendHtml(reply, 200, page);
    },
  );
}

export const ACCOUNT_LINK_INVALID_PAGE = {
  title: 'This link cannot be finished here',
  message:
    'The answer from the other sign-in service does not belong to a link started in this browser, by the account signed in here.',
  advice: 'Open your account page and choose "Link" again.',
  code: 'upstream_state_invalid',
  accountLink: true,
} as const;

export const LINKED_TO_ANOTHER_ACCOUNT_PAGE = {
  title: 'This sign-in already belongs to another account',
  message:
    'The account you chose at the other sign-in service already signs in to a different account here. Nothing was linked.',
  advice: 'Sign in with that account and unlink it there first, or choose another account at the service.',
  code: 'upstream_identity_linked_elsewhere',
} as const;

export interface AccountLinkFinisherDeps {
  app: FastifyInstance;
  flow: AuthorizationFlow;
  db: AppDatabase;
  pageContext: PageContext;
  nowSeconds(): number;
}

/** Finishes an `account_link` return at the provider's callback (see the module comment). */
export function accountLinkFinisher(deps: AccountLinkFinisherDeps): AccountLinkFinisher {
  const accountUrl = `${deps.pageContext.basePath}/account`;

  /** The account session of this browser, if it is the one that started the link (else `null`). */
  async function linkingHolder(request: FastifyRequest, browserHash: string, linkSub: string | null) {
    const browserKey = deps.app.ssoSessions.browserKey(request);
    if (browserKey === null || hashCookieValue(browserKey) !== browserHash) return null;
    const session = await deps.app.ssoSessions.current(request);
    const step = await deps.flow.nextStep(
      { client: ACCOUNT_CLIENT, scopes: ['openid'], prompt: [], maxAge: null },
      session,
      null,
    );
    if (step.kind !== 'complete' || step.user.sub !== linkSub) return null;
    return { browserKey, session: step.session, user: step.user };
  }

  /** Back to the account page with `notice` (signed for this browser, as every account result). */
  function backToAccount(
    reply: FastifyReply,
    holder: { browserKey: string; session: SsoSession },
    notice: Notice,
  ) {
    const location = accountResultUrl(accountUrl, notice, holder.browserKey, holder.session.id);
    return reply.header('cache-control', 'no-store').redirect(location, 303);
  }

  return async (request, reply, { provider, started, redeem }) => {
    const holder = await linkingHolder(request, started.browserHash, started.linkSub);
    if (holder === null) return sendErrorPage(reply, 400, ACCOUNT_LINK_INVALID_PAGE, deps.pageContext);
    const refused = (text: string) => backToAccount(reply, holder, { kind: 'error', text });
    if (typeof request.query.error === 'string') {
      // OIDC Core §3.1.2.6 (access_denied, login_required, …): the person said no, or could not sign in.
      return refused(`Linking ${provider.displayName} was cancelled or refused. Nothing was linked.`);
    }
    let redeemed: Awaited<ReturnType<typeof redeem>>;
    try {
      redeemed = await redeem();
    } catch (error) {
      const failure = classifyUpstreamFailure(error);
      request.log.warn(
        { provider: provider.id, failure, code: (error as { code?: string }).code },
        'upstream account link refused',
      );
      return refused(`${provider.displayName} could not confirm the sign-in. Nothing was linked.`);
    }
    const subject = upstreamSubject(provider, redeemed.claims);
    if (subject === null)
      return refused(`${provider.displayName} did not say who you are. Nothing was linked.`);
    const outcome = await linkIdentityToAccount(
      deps.db,
      provider,
      subject,
      holder.user.sub,
      deps.nowSeconds(),
    );
    if (outcome === 'linked_to_other') {
      const page = {
        ...LINKED_TO_ANOTHER_ACCOUNT_PAGE,
        next: { href: accountUrl, label: 'Back to your account' },
      };
      return sendErrorPage(reply, 409, page, deps.pageContext);
    }
    if (outcome === 'already_linked') {
      return backToAccount(reply, holder, {
        kind: 'ok',
        text: request.language.text('accountNotice.providerAlreadyLinked', {
          provider: provider.displayName,
        }),
      });
    }
    audit(request.log, AUDIT_EVENTS.identityLinked, { sub: holder.user.sub, method: `idp:${provider.id}` });
    // A new way into the account: its owner hears of it, as of an added passkey.
    request.server.securityNotices?.notify(request, holder.user.sub, 'identity_linked', provider.displayName);
    return backToAccount(reply, holder, {
      kind: 'ok',
      text: request.language.text('accountNotice.providerLinked', { provider: provider.displayName }),
    });
  };
}

export interface AccountUnlinkOptions {
  db: AppDatabase;
  /** Names the service in the security notice; a provider the seed dropped can still be unlinked. */
  federation: AccountFederation | undefined;
  accountHolder(request: FastifyRequest): AccountHolder;
  sendAccountPage(reply: FastifyReply, current: AccountHolder, status: number, notice: Notice): unknown;
}

/** "Unlink" of a linked sign-in service: refused when it is the account's last way in. */
export function registerAccountUnlinkRoute(app: FastifyInstance, options: AccountUnlinkOptions) {
  app.post<{ Params: { id: string } }>(
    '/account/providers/:id/unlink',
    { config: { account: 'change' } },
    async (request, reply) => {
      const current = options.accountHolder(request);
      const outcome = await unlinkIdentity(options.db, current.user.sub, request.params.id);
      if (outcome === 'unlinked') {
        audit(request.log, AUDIT_EVENTS.identityUnlinked, {
          sub: current.user.sub,
          method: `idp:${request.params.id}`,
        });
        const service = options.federation?.providers.get(request.params.id)?.displayName;
        app.securityNotices?.notify(request, current.user.sub, 'identity_unlinked', service);
      }
      const notice: Notice =
        outcome === 'unlinked'
          ? { kind: 'ok', text: request.language.text('accountNotice.providerUnlinked') }
          : outcome === 'last_way_in'
            ? { kind: 'error', text: request.language.text('accountNotice.lastWayIn') }
            : { kind: 'error', text: request.language.text('accountNotice.providerNotLinked') };
      return options.sendAccountPage(reply, current, outcome === 'unlinked' ? 200 : 409, notice);
    },
  );
}
