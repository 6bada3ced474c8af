import fp from 'fastify-plugin';
import type { AdminAuditRecorder } from '../admin/admin-audit.js';
import { createKeysAdmin, type KeysAdmin } from '../admin/keys-admin.js';
import { createRegistryAdmin, type RegistryAdmin } from '../admin/registry-admin.js';
import { createSessionsAdmin, type SessionsAdmin } from '../admin/sessions-admin.js';
import { createUsersAdmin, type UsersAdmin } from '../admin/users-admin.js';
import { audit } from '../audit.js';

/** The operator's operations, HTTP-free: the admin API and the console call the same ones. */
export interface AdminOperations {
  users: UsersAdmin;
  sessions: SessionsAdmin;
  registry: RegistryAdmin;
  keys: KeysAdmin;
}

declare module 'fastify' {
  interface FastifyInstance {
    admin: AdminOperations;
  }
}

/**
 * Builds the operations on this server's database, signer and mailer. Each change writes its audit
 * event (src/audit.ts) naming the actor the caller passes.
 */
export const adminPlugin = fp(
  async (app) => {
    const { stores, signer, clock, random, config } = app.protocol;
    const db = app.database.db;
    const record: AdminAuditRecorder = (event, fields) => audit(app.log, event, fields);
    app.decorate('admin', {
      users: createUsersAdmin({
        db,
        keyEncryptionKey: app.config.keyEncryptionKey,
        clock,
        random,
        issuer: config.issuer,
        signOut: app.userSignOut,
        audit: record,
        passwordRecovery: app.passwordRecovery,
      }),
      sessions: createSessionsAdmin({
        db,
        context: { stores, signer, clock, random, config },
        backchannel: app.sessionLogout.backchannel,
        audit: record,
      }),
      registry: createRegistryAdmin({ db, issuer: config.issuer }),
      keys: createKeysAdmin({
        db,
        keyEncryptionKey: app.config.keyEncryptionKey,
        clock,
        metadataMaxAgeSeconds: app.config.metadataMaxAgeSeconds,
        audit: record,
        reloadKeys: () => app.keyRing.reloadKeys(),
      }),
    });
  },
  { name: 'admin', fastify: '5.x', dependencies: ['protocol', 'db', 'logout', 'mail', 'keys'] },
);
