/**
 * The sign-in methods registry (src/routes/interaction/methods/): one list, each method saying what
 * it needs, the app supplying it. Like oauth-core's grants (its grant-dependencies test), the
 * `@ts-expect-error` lines are checked by `tsc` (the package's typecheck covers test/): if a method
 * could be listed without the service it reads, they would compile and be errors themselves.
 */
import { describe, expect, expectTypeOf, it } from 'vitest';
import type { DirectorySignIn } from '../src/directory/directory-sign-in.js';
import { translatorFor } from '../src/i18n/translator.js';
import { renderLoginPage } from '../src/pages/login.js';
import type { FederationSignIn } from '../src/plugins/federation.js';
import type { KerberosSignIn } from '../src/plugins/kerberos.js';
import {
  enabledSignInMethods,
  mergeLoginPageParts,
  SIGN_IN_METHODS,
  type SignInMethod,
  type SignInServices,
} from '../src/routes/interaction/methods/index.js';
import { KERBEROS_LINK_LABEL, kerberosMethod } from '../src/routes/interaction/methods/kerberos.js';
import { passwordMethod } from '../src/routes/interaction/methods/password.js';

const users = { findUserByUsername: async () => null };
const none: SignInServices = {
  users,
  directory: null,
  passwordRecovery: null,
  kerberos: null,
  federation: null,
};

describe('the sign-in methods this app has', () => {
  it('without Kerberos, providers or a directory: the password and passkeys, in list order', () => {
    expect(enabledSignInMethods(none, SIGN_IN_METHODS).map((method) => method.name)).toEqual([
      'password',
      'passkey',
    ]);
  });

  it('each configured system adds its way in', () => {
    const services: SignInServices = {
      ...none,
      kerberos: {} as KerberosSignIn,
      federation: {} as FederationSignIn,
      directory: {} as DirectorySignIn,
    };
    expect(enabledSignInMethods(services, SIGN_IN_METHODS).map((method) => method.name)).toEqual([
      'password',
      'passkey',
      'federation',
      'kerberos',
    ]);
  });

  it('a method needing a service the app does not supply does not compile', () => {
    const { kerberos: _kerberos, ...withoutKerberos } = none;
    // @ts-expect-error: the Kerberos method reads `kerberos`.
    const listed = () => enabledSignInMethods(withoutKerberos, [passwordMethod, kerberosMethod]);
    expect(listed).toBeTypeOf('function');
    // Without the Kerberos method in the list, the same services are enough.
    expect(enabledSignInMethods(withoutKerberos, [passwordMethod]).map((method) => method.name)).toEqual([
      'password',
    ]);
    expectTypeOf(withoutKerberos).not.toExtend<SignInServices>();
  });

  it('a sixth method is one object of the shape, and the list requires what it needs', () => {
    const mailedLink = {
      name: 'mailed-link',
      enabledWith: ({ mailer }) => mailer,
      register() {},
    } satisfies SignInMethod<{ mailer: { send(): void } | null }, { send(): void }>;
    // @ts-expect-error: `mailer` is not among this app's services.
    const listed = () => enabledSignInMethods(none, [...SIGN_IN_METHODS, mailedLink]);
    expect(listed).toBeTypeOf('function');
    const withMailer = { ...none, mailer: { send() {} } };
    expect(enabledSignInMethods(withMailer, [...SIGN_IN_METHODS, mailedLink]).map((m) => m.name)).toContain(
      'mailed-link',
    );
  });
});

describe('the login page from every method', () => {
  it('joins the lists (provider buttons, links) and keeps the other parts', () => {
    const link = (signIn: string) => ({ signIn, href: `/${signIn}`, label: 'login.withKerberos' as const });
    const provider = (id: string) => ({ id, displayName: id, href: `/idp/${id}` });
    expect(
      mergeLoginPageParts([
        { forgotPasswordHref: '/forgot-password' },
        { identityProviders: [provider('a')] },
        { signInLinks: [link('kerberos')], formAction: '/login' },
        { identityProviders: [provider('b')], signInLinks: [link('other')] },
      ]),
    ).toEqual({
      forgotPasswordHref: '/forgot-password',
      identityProviders: [provider('a'), provider('b')],
      signInLinks: [link('kerberos'), link('other')],
      formAction: '/login',
    });
  });
});

describe('a sign-in link in the page language', () => {
  it('reads the Kerberos link from the catalogue, so a German page says it in German', () => {
    const page = (language: 'en' | 'de') =>
      renderLoginPage({
        clientName: 'Orders',
        csrfToken: 'token',
        basePath: '',
        signInLinks: [{ signIn: 'kerberos', href: '/interaction/i/kerberos', label: KERBEROS_LINK_LABEL }],
        language: { t: translatorFor(language) },
      });
    expect(page('de')).toContain(
      '<a href="/interaction/i/kerberos" data-sign-in="kerberos">Mit dem Konto Ihrer Organisation anmelden (Kerberos)</a>',
    );
    expect(page('en')).toContain(
      'data-sign-in="kerberos">Sign in with your organisation account (Kerberos)</a>',
    );
  });
});
