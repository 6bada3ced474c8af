import type { User } from '@oidc-orders/oauth-core';
import fp from 'fastify-plugin';
import { createSpnegoAcceptor, type SpnegoAcceptor } from '../kerberos/gssapi-acceptor.js';
import { userForPrincipal } from '../kerberos/principal-mapping.js';
import { findSubByKerberosPrincipal } from '../kerberos/principal-repository.js';
import { createJtiReplayStore } from '../storage/drizzle/jti-replay.js';

/** Verbatim replays across instances (a shared, conditional insert; see README "Several instances"). */
export interface SpnegoReplayGuard {
  markUsed(key: string, expiresAt: number): Promise<boolean>;
}

/** Kerberos at the login step: the acceptor, the principal → user mapping, the shared replay record. */
export interface KerberosSignIn {
  acceptor: SpnegoAcceptor;
  /** `unavailable`: the directory, which might know the principal, did not answer. */
  userForPrincipal(principal: string): Promise<User | null | 'unavailable'>;
  replay: SpnegoReplayGuard;
  nowSeconds(): number;
}

declare module 'fastify' {
  interface FastifyInstance {
    /** Kerberos single sign-on (README "Kerberos"); `null` when KRB5_KTNAME is not set. */
    kerberos: KerberosSignIn | null;
  }
}

/**
 * Kerberos when KRB5_KTNAME is set: a setup that cannot work (keytab, binding, pinned principal)
 * fails the start with one line. A principal no seed user claims may be a directory user's
 * (userPrincipalName, krbPrincipalName), so the directory plugin comes first.
 */
export const kerberosPlugin = fp(
  async (app) => {
    const settings = app.config.kerberos;
    if (settings === null) {
      app.decorate('kerberos', null);
      return;
    }
    const acceptor = await createSpnegoAcceptor(settings);
    const db = app.database.db;
    const usernameRealm = settings.usernameRealm ?? null;
    app.log.info(
      { servicePrincipals: acceptor.servicePrincipals, usernameRealm },
      `kerberos: accepting tickets for ${acceptor.servicePrincipals.join(', ')}`,
    );
    app.decorate('kerberos', {
      acceptor,
      // The jti replay table is a generic "seen once" record (key, expiry), shared by every instance.
      replay: createJtiReplayStore(db),
      nowSeconds: () => app.protocol.clock.nowSeconds(),
      userForPrincipal: async (principal: string) =>
        (await userForPrincipal(principal, {
          users: app.protocol.stores.users,
          findSubByPrincipal: (name) => findSubByKerberosPrincipal(db, name),
          usernameRealm,
        })) ?? (app.directorySignIn ? app.directorySignIn.userForKerberosPrincipal(principal) : null),
    });
  },
  { name: 'kerberos', fastify: '5.x', dependencies: ['config', 'db', 'protocol', 'directory'] },
);
