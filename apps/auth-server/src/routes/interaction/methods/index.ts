import type { FastifyInstance } from 'fastify';
import type { LoadedInteraction } from '../steps.js';
import { federationMethod } from './federation.js';
import { kerberosMethod } from './kerberos.js';
import { passkeyMethod } from './passkey.js';
import { passwordMethod } from './password.js';
import type {
  AnySignInMethod,
  InteractionArea,
  LoginPageParts,
  SignInMethod,
  SignInMethodDependencies,
} from './types.js';

export type { InteractionArea, LoginPageParts, SignInMethod } from './types.js';

/** The first-factor ways in this server ships: the one list (README "Where does my change go"). */
export const SIGN_IN_METHODS = [
  passwordMethod,
  passkeyMethod,
  federationMethod,
  kerberosMethod,
] as const satisfies readonly AnySignInMethod[];

/**
 * What the shipped methods need together, derived from `SIGN_IN_METHODS`: the interaction area
 * supplies it (./index.ts), so a method added there adds its dependencies here.
 */
export type SignInServices = SignInMethodDependencies<typeof SIGN_IN_METHODS>;

/** A method this app has, with what it was enabled with. */
export interface EnabledSignInMethod {
  readonly name: string;
  loginPage(loaded: LoadedInteraction, area: InteractionArea): Promise<LoginPageParts>;
  register(app: FastifyInstance, area: InteractionArea): Promise<void>;
}

/**
 * The methods this app has, in list order: each asked with the services the app supplies, which
 * must cover what every method of the list needs (else this does not compile).
 */
export function enabledSignInMethods<const Methods extends readonly AnySignInMethod[]>(
  services: NoInfer<SignInMethodDependencies<Methods>>,
  methods: Methods,
): EnabledSignInMethod[] {
  return methods.flatMap((method) => {
    const enabled = (method as SignInMethod<unknown, unknown>).enabledWith(services);
    if (enabled === null) return [];
    return [
      {
        name: method.name,
        loginPage: async (loaded, area) => (await method.loginPage?.(enabled, loaded, area)) ?? {},
        register: async (app, area) => {
          await method.register(enabled, app, area);
        },
      },
    ];
  });
}

/** The login page's parts from every method: lists are joined in method order, the rest merged. */
export function mergeLoginPageParts(parts: readonly LoginPageParts[]): LoginPageParts {
  const merged: LoginPageParts = {};
  for (const part of parts) {
    const { identityProviders, signInLinks, ...rest } = part;
    Object.assign(merged, rest);
    if (identityProviders)
      merged.identityProviders = [...(merged.identityProviders ?? []), ...identityProviders];
    if (signInLinks) merged.signInLinks = [...(merged.signInLinks ?? []), ...signInLinks];
  }
  return merged;
}
