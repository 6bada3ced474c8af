import type { FastifyInstance } from 'fastify';
import { interactionPagePath } from '../../endpoints.js';
import { pageLanguageOf } from '../../i18n/request-language.js';
import { csrfTokenFor } from '../../interaction/csrf.js';
import { renderLoginPage } from '../../pages/login.js';
import { sendHtml } from '../../pages/respond.js';
import {
  type EnabledSignInMethod,
  enabledSignInMethods,
  type InteractionArea,
  mergeLoginPageParts,
  SIGN_IN_METHODS,
  type SignInServices,
} from './methods/index.js';
import type { InteractionRoutesOptions } from './options.js';
import type { InteractionSteps } from './steps.js';

/** What this app supplies the sign-in methods (src/plugins/: directory, mail, Kerberos, federation). */
function signInServicesOf(app: FastifyInstance, options: InteractionRoutesOptions): SignInServices {
  return {
    users: options.stores.users,
    directory: app.directorySignIn,
    passwordRecovery: app.passwordRecovery,
    kerberos: app.kerberos,
    federation: app.federation,
  };
}

/**
 * The login page (CONTRACT "Pages"): each sign-in method this app has (./methods/) shows its part
 * of it and registers its own routes; the username and password form posts to the password method.
 */
export async function registerLoginRoutes(
  app: FastifyInstance,
  steps: InteractionSteps,
  options: InteractionRoutesOptions,
): Promise<void> {
  const { pageContext } = options;
  const methods: EnabledSignInMethod[] = enabledSignInMethods(
    signInServicesOf(app, options),
    SIGN_IN_METHODS,
  );

  const area: InteractionArea = {
    steps,
    options,
    pageContext,
    loginAttemptGuard: options.loginAttemptGuard,
    async showLoginPage(reply, loaded, status, errorMessage, username) {
      const parts: Awaited<ReturnType<EnabledSignInMethod['loginPage']>>[] = [];
      for (const method of methods) parts.push(await method.loginPage(loaded, area));
      const page = renderLoginPage({
        ...mergeLoginPageParts(parts),
        clientName: loaded.purpose.client.clientName,
        csrfToken: csrfTokenFor(loaded.browserKey, 'login', loaded.interaction.id),
        // OIDC Core §3.1.2.1 login_hint pre-fills the username.
        username: username ?? loaded.purpose.loginHint,
        errorMessage,
        basePath: pageContext.basePath,
        language: pageLanguageOf(reply.request),
      });
      return sendHtml(reply, status, page, { formActionSources: loaded.purpose.formActionSources });
    },
  };

  app.get<{ Params: { id: string } }>(
    interactionPagePath('login'),
    { config: { interaction: {} } },
    async (request, reply) => area.showLoginPage(reply, steps.loaded(request), 200),
  );

  for (const method of methods) await method.register(app, area);
}
