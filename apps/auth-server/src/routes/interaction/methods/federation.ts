import type { FederationSignIn } from '../../../plugins/federation.js';
import type { LoadedInteraction } from '../steps.js';
import { upstreamButtons, upstreamSignInRoutes } from '../upstream.js';
import type { SignInMethod } from './types.js';

/**
 * Upstream OpenID providers as ways in (README "Upstream identity providers"): one button each on
 * the login page, the code flow and its callback in ../upstream.ts. Configured by the seed's
 * `identity_providers` (src/plugins/federation.ts).
 */
export const federationMethod = {
  name: 'federation',
  enabledWith: ({ federation }) => federation,
  async loginPage(federation, loaded, { pageContext }) {
    return {
      identityProviders: await upstreamButtons(federation, loaded.interaction.id, pageContext.basePath),
    };
  },
  async register(federation, app, { steps, options, pageContext, showLoginPage }) {
    await app.register(upstreamSignInRoutes<LoadedInteraction>(), {
      ...federation,
      pageContext,
      nowSeconds: options.nowSeconds,
      finishAccountLink: options.finishAccountLink,
      steps: {
        loaded: steps.loaded,
        load: steps.load,
        interactionIdOf: (loaded) => loaded.interaction.id,
        browserKeyOf: (loaded) => loaded.browserKey,
        requestBrowserKey: (request) => app.ssoSessions.browserKey(request),
        checkCsrf: (request, reply, loaded) => steps.checkCsrf(request, reply, loaded, 'login'),
        formActionSourcesOf: (loaded) => loaded.purpose.formActionSources,
        clientIdOf: (loaded) => loaded.purpose.client.clientId,
        showLoginPage: (reply, loaded, status, message) => showLoginPage(reply, loaded, status, message),
        signedIn: (request, reply, loaded, user, details, onSessionStarted) =>
          steps.signedIn(request, reply, loaded, user, 'federated', details, onSessionStarted),
      },
    });
  },
} satisfies SignInMethod<{ federation: FederationSignIn | null }, FederationSignIn>;
