import type { FastifyBaseLogger } from 'fastify';
import type { UserDetail } from '../../admin/console-queries.js';
import type { UsersAdmin } from '../../admin/users-admin.js';
import { AUDIT_EVENTS, type AuditEvent, type AuditFields, audit } from '../../audit.js';
import type { PasswordRecovery } from '../../mail/password-reset.js';

/** What an action may use: the user administration the `users` command uses, and mail. */
export interface ActionServices {
  users: UsersAdmin;
  passwordRecovery: PasswordRecovery | null;
}

/** The outcome of an action, and what the audit event records beyond who did it to whom. */
type ActionOutcome = { ok: boolean; fields?: Omit<AuditFields, 'sub' | 'actor'> };

interface UserAction {
  /** Shown on the user's page only when it applies (Disable for an enabled user, …). */
  appliesTo(user: UserDetail, services: ActionServices): boolean;
  /** A red confirm button: the action takes something away. */
  danger: boolean;
  event: AuditEvent;
  run(user: UserDetail, services: ActionServices): Promise<ActionOutcome>;
}

/**
 * The actions the console takes on a user, one row each: the page lists the rows that apply, the
 * confirm page and the POST read the same row, and each run is one audit event naming the acting
 * operator (`actor`) and the user (`sub`). Sessions end through the same sign-out as the `users`
 * command: every relying party hears of it over the back channel (OIDC Back-Channel Logout 1.0 §2.5).
 */
export const USER_ACTIONS = {
  disable: {
    appliesTo: (user) => !user.disabled,
    danger: true,
    event: AUDIT_EVENTS.adminUserDisabled,
    async run(user, { users }) {
      const result = await users.disable(user.username);
      return { ok: true, fields: { count: result.sessions } };
    },
  },
  enable: {
    appliesTo: (user) => user.disabled,
    danger: false,
    event: AUDIT_EVENTS.adminUserEnabled,
    async run(user, { users }) {
      await users.enable(user.username);
      return { ok: true };
    },
  },
  'reset-mfa': {
    appliesTo: () => true,
    danger: true,
    event: AUDIT_EVENTS.adminMfaReset,
    async run(user, { users }) {
      const result = await users.resetMfa(user.username);
      return { ok: true, fields: { count: result.authenticatorApps + result.passkeys } };
    },
  },
  'send-reset': {
    // Only an account with a local password and an address has a reset mail to send.
    appliesTo: (user, { passwordRecovery }) =>
      passwordRecovery !== null &&
      user.email !== null &&
      (user.source === 'seed' || user.source === 'operator'),
    danger: false,
    event: AUDIT_EVENTS.adminResetMailSent,
    async run(user, { passwordRecovery }) {
      const outcome = await passwordRecovery?.sendResetLinkTo(user.sub);
      return { ok: outcome?.sent === true };
    },
  },
  'end-sessions': {
    appliesTo: () => true,
    danger: true,
    event: AUDIT_EVENTS.adminSessionsEnded,
    async run(user, { users }) {
      const result = await users.endEverything(user.sub);
      return { ok: true, fields: { count: result.sessions } };
    },
  },
} as const satisfies Record<string, UserAction>;

export type UserActionName = keyof typeof USER_ACTIONS;

export const isUserActionName = (name: string): name is UserActionName => Object.hasOwn(USER_ACTIONS, name);

/** Runs one action and writes its audit event (only when it did something). */
export async function runUserAction(
  name: UserActionName,
  user: UserDetail,
  services: ActionServices,
  context: { log: FastifyBaseLogger; actor: string; ip: string },
): Promise<boolean> {
  const action: UserAction = USER_ACTIONS[name];
  const outcome = await action.run(user, services);
  if (outcome.ok) {
    audit(context.log, action.event, {
      sub: user.sub,
      actor: context.actor,
      ip: context.ip,
      ...outcome.fields,
    });
  }
  return outcome.ok;
}

/** The actions listed on a user's page, in the table's order. */
export const applicableActions = (user: UserDetail, services: ActionServices): UserActionName[] =>
  (Object.keys(USER_ACTIONS) as UserActionName[]).filter((name) =>
    (USER_ACTIONS[name] as UserAction).appliesTo(user, services),
  );
