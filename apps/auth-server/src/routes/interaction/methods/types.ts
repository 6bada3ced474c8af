import type { FastifyInstance, FastifyReply } from 'fastify';
import type { LoginPageInput } from '../../../pages/login.js';
import type { PageContext } from '../../authorization-reply.js';
import type { InteractionRoutesOptions, LoginAttemptGuard } from '../options.js';
import type { InteractionSteps, LoadedInteraction } from '../steps.js';

/**
 * A first-factor way in (README "Where does my change go"): one file under this folder, one line in
 * ./index.ts. Shaped like oauth-core's `GrantHandler<Deps>`: `Deps` is the slice of
 * `SignInServices` the method reads, and the list's type requires every method's `Deps` at once
 * (`SignInMethodDependencies`), so a method needing a service the app does not supply does not
 * compile.
 */
export interface SignInMethod<Deps, Enabled = Deps> {
  /** Its name in logs and tests. */
  readonly name: string;
  /**
   * Whether this app has it: what the routes and the login page need when it is configured, else
   * `null`. A property, not a method: TypeScript then checks `deps` contravariantly, as for grants.
   */
  readonly enabledWith: (deps: Deps) => Enabled | null;
  /** What it shows on the login page of this interaction (merged with the other methods'). */
  loginPage?(enabled: Enabled, loaded: LoadedInteraction, area: InteractionArea): Promise<LoginPageParts>;
  /** Registers its routes inside the interaction area (the area's guard applies to them). */
  register(enabled: Enabled, app: FastifyInstance, area: InteractionArea): Promise<void> | void;
}

/** Any method, whatever it needs: for code that only lists and registers them. */
// biome-ignore lint/suspicious/noExplicitAny: the enabled value stays each method's own.
export type AnySignInMethod = SignInMethod<never, any>;

/** The `Deps` one method declares. */
export type SignInMethodDependenciesOf<Method> =
  Method extends SignInMethod<infer Deps, unknown> ? Deps : never;

/**
 * What a list of methods needs together: every method's `Deps` at once (their intersection), the
 * way oauth-core's `RegistryDependencies` reads a list of grants.
 */
export type SignInMethodDependencies<Methods extends readonly AnySignInMethod[]> = (
  Methods[number] extends infer Method
    ? Method extends AnySignInMethod
      ? (deps: SignInMethodDependenciesOf<Method>) => void
      : never
    : never
) extends (deps: infer All) => void
  ? All
  : never;

/** The parts of the login page a method fills in (src/pages/login.ts); lists are joined. */
export type LoginPageParts = Partial<
  Pick<LoginPageInput, 'formAction' | 'passkey' | 'forgotPasswordHref' | 'identityProviders' | 'signInLinks'>
>;

/** What the interaction area lends every method: its steps, pages and limits. */
export interface InteractionArea {
  steps: InteractionSteps;
  options: InteractionRoutesOptions;
  pageContext: PageContext;
  loginAttemptGuard: LoginAttemptGuard | undefined;
  /** The login page (every method's part of it) with `message` above the form, pre-filled with `username`. */
  showLoginPage(
    reply: FastifyReply,
    loaded: LoadedInteraction,
    status: number,
    message?: string,
    username?: string,
  ): Promise<FastifyReply>;
}
