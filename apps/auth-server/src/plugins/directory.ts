import type { User } from '@oidc-orders/oauth-core';
import type { FastifyBaseLogger } from 'fastify';
import fp from 'fastify-plugin';
import { AUDIT_EVENTS, audit } from '../audit.js';
import {
  type AccountStanding,
  createDirectorySignIn,
  type DirectorySignIn,
} from '../directory/directory-sign-in.js';
import type { Directory } from '../directory/types.js';

declare module 'fastify' {
  interface FastifyInstance {
    /** Directory users (README "Directory users"); `null` when no directory is configured. */
    directorySignIn: DirectorySignIn | null;
    /**
     * The refresh grant's check of an account kept in the directory (oauth-core
     * `accountStanding`); an ended account's grants and sessions end here. `undefined` without a directory.
     */
    directoryAccountStanding: ((user: User, log: FastifyBaseLogger) => Promise<AccountStanding>) | undefined;
  }
}

export interface DirectoryPluginOptions {
  /** The opened directory, or `null` (LDAP_URL not set). */
  directory: Directory | null;
  /** Close it when the app closes (the app opened it; a test's own directory is the test's). */
  closeOnShutdown: boolean;
}

/** Directory users at sign-in (login form, Kerberos) and at refresh. */
export const directoryPlugin = fp<DirectoryPluginOptions>(
  async (app, { directory, closeOnShutdown }) => {
    if (directory === null) {
      app.decorate('directorySignIn', null);
      app.decorate('directoryAccountStanding', undefined);
      return;
    }
    const signIn = createDirectorySignIn({ directory, db: app.database.db, clock: app.protocol.clock });
    app.decorate('directorySignIn', signIn);
    app.decorate('directoryAccountStanding', async (user: User, log: FastifyBaseLogger) => {
      const standing = await signIn.standingOf(user);
      if (standing === 'ended') {
        // Gone or disabled in the directory: everything the user holds here ends with it.
        const ended = await app.userSignOut.endUserSessions(user.sub);
        audit(log, AUDIT_EVENTS.directoryAccountEnded, {
          sub: user.sub,
          count: ended.grants,
          source: 'ldap',
        });
      }
      return standing;
    });
    if (closeOnShutdown) app.addHook('onClose', () => directory.close());
  },
  { name: 'directory', fastify: '5.x', dependencies: ['db', 'protocol', 'logout'] },
);
