import type { User } from '@oidc-orders/oauth-core';
import type { FastifyBaseLogger } from 'fastify';
import fp from 'fastify-plugin';
import { AUDIT_EVENTS, audit } from '../audit.js';
import {
  type AccountStanding,
  createDirectorySignIn,
  type DirectorySignIn,
} from '../directory/directory-sign-in.js';
import { openDirectory } from '../directory/open-directory.js';
import type { Directory } from '../directory/types.js';

declare module 'fastify' {
  interface FastifyInstance {
    /** Directory users (README "Directory users"); `null` when LDAP_URL is not set. */
    directory: Directory | null;
    /** Directory users at sign-in (login form, Kerberos); `null` without a directory. */
    directorySignIn: DirectorySignIn | null;
    /**
     * The refresh grant's check of an account kept in the directory (oauth-core
     * `accountStanding`); an ended account's grants and sessions end here. `undefined` without a directory.
     */
    directoryAccountStanding: ((user: User, log: FastifyBaseLogger) => Promise<AccountStanding>) | undefined;
  }
}

export interface DirectoryPluginOptions {
  /** A directory opened by the caller (tests), who closes it; by default the one LDAP_URL configures. */
  directory?: Directory;
}

/**
 * Opens the directory when configured (nothing LDAP is loaded otherwise, directory/open-directory.ts)
 * and builds the directory users' sign-in and refresh check on it.
 */
export const directoryPlugin = fp<DirectoryPluginOptions>(
  async (app, options) => {
    const log = app.log.child({ component: 'directory' });
    const directory =
      options.directory ??
      (await openDirectory(app.config.directory, { warn: (fields, message) => log.warn(fields, message) }));
    app.decorate('directory', directory);
    if (options.directory === undefined) {
      app.addHook('onClose', async () => {
        await directory?.close();
      });
    }
    if (directory === null) {
      app.decorate('directorySignIn', null);
      app.decorate('directoryAccountStanding', undefined);
      return;
    }
    const signIn = createDirectorySignIn({ directory, db: app.database.db, clock: app.protocol.clock });
    app.decorate('directorySignIn', signIn);
    app.decorate('directoryAccountStanding', async (user: User, requestLog: FastifyBaseLogger) => {
      const standing = await signIn.standingOf(user);
      if (standing === 'ended') {
        // Gone or disabled in the directory: everything the user holds here ends with it.
        const ended = await app.userSignOut.endUserSessions(user.sub);
        audit(requestLog, AUDIT_EVENTS.directoryAccountEnded, {
          sub: user.sub,
          count: ended.grants,
          source: 'ldap',
        });
      }
      return standing;
    });
  },
  { name: 'directory', fastify: '5.x', dependencies: ['config', 'db', 'protocol', 'logout'] },
);
