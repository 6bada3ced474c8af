import { AUDIT_EVENTS } from '../audit.js';
import type { UserSignOutResult } from '../logout/user-sign-out.js';
import { type AdminActor, type AdminAuditRecorder, actorFields } from './admin-audit.js';

/** The user operations the changes are made of (src/admin/users-admin.ts), by `sub`. */
export interface UserOperationsBySub {
  findBySub(sub: string): Promise<unknown>;
  disableBySub(sub: string): Promise<UserSignOutResult & { sub: string; changed: boolean }>;
  enableBySub(sub: string): Promise<{ sub: string; changed: boolean }>;
  resetMfaBySub(
    sub: string,
  ): Promise<
    UserSignOutResult & { sub: string; authenticatorApps: number; passkeys: number; recoveryCodes: number }
  >;
  sendResetMailBySub(sub: string): Promise<{ sub: string }>;
  endEverything(sub: string): Promise<UserSignOutResult>;
}

/**
 * The changes an operator makes through the admin API or console: each is written as an audit
 * event naming the actor (who did it) and the user it was done to.
 */
export function createUserChanges(operations: UserOperationsBySub, record: AdminAuditRecorder) {
  return {
    async disable(sub: string, by: AdminActor) {
      const result = await operations.disableBySub(sub);
      await record(AUDIT_EVENTS.adminUserDisabled, { sub, ...actorFields(by), count: result.sessions });
      return result;
    },
    async enable(sub: string, by: AdminActor) {
      const result = await operations.enableBySub(sub);
      await record(AUDIT_EVENTS.adminUserEnabled, { sub, ...actorFields(by) });
      return result;
    },
    async resetMfa(sub: string, by: AdminActor) {
      const result = await operations.resetMfaBySub(sub);
      const count = result.authenticatorApps + result.passkeys;
      await record(AUDIT_EVENTS.adminMfaReset, { sub, ...actorFields(by), count });
      return result;
    },
    async sendResetMail(sub: string, by: AdminActor) {
      const result = await operations.sendResetMailBySub(sub);
      await record(AUDIT_EVENTS.adminResetMailSent, { sub, ...actorFields(by) });
      return result;
    },
    /** Every SSO session ends (each relying party told over the back channel) and every grant is revoked. */
    async endSessions(sub: string, by: AdminActor) {
      await operations.findBySub(sub);
      const result = await operations.endEverything(sub);
      await record(AUDIT_EVENTS.adminSessionsEnded, { sub, ...actorFields(by), count: result.sessions });
      return { sub, ...result };
    },
  };
}
