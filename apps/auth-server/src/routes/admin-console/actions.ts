import type { AdminActor } from '../../admin/admin-audit.js';
import { AdminActionRefusedError } from '../../admin/admin-errors.js';
import type { UserDetail } from '../../admin/users-admin.js';
import type { AdminOperations } from '../../plugins/admin.js';

interface UserAction {
  /** Shown on the user's page only when it applies (Disable for an enabled user, …). */
  appliesTo(user: UserDetail, mailOn: boolean): boolean;
  /** A red confirm button: the action takes something away. */
  danger: boolean;
  /** The admin operation (src/admin/users-admin.ts `changes`), which writes the audit event naming `by`. */
  run(users: AdminOperations['users'], sub: string, by: AdminActor): Promise<unknown>;
}

/**
 * The actions the console takes on a user, one row each: the page lists the rows that apply, the
 * confirm page and the POST read the same row. Each runs the admin operation the admin API runs,
 * so sessions end with back-channel logout (OIDC Back-Channel Logout 1.0 §2.5) and each change is
 * one audit event naming the acting operator.
 */
export const USER_ACTIONS = {
  disable: {
    appliesTo: (user) => user.status === 'enabled',
    danger: true,
    run: (users, sub, by) => users.changes.disable(sub, by),
  },
  enable: {
    appliesTo: (user) => user.status === 'disabled',
    danger: false,
    run: (users, sub, by) => users.changes.enable(sub, by),
  },
  'reset-mfa': {
    appliesTo: () => true,
    danger: true,
    run: (users, sub, by) => users.changes.resetMfa(sub, by),
  },
  'send-reset': {
    // Only an account with a local password and an address has a reset mail to send.
    appliesTo: (user, mailOn) =>
      mailOn && user.email !== null && (user.source === 'seed' || user.source === 'operator'),
    danger: false,
    run: (users, sub, by) => users.changes.sendResetMail(sub, by),
  },
  'end-sessions': {
    appliesTo: () => true,
    danger: true,
    run: (users, sub, by) => users.changes.endSessions(sub, by),
  },
} as const satisfies Record<string, UserAction>;

export type UserActionName = keyof typeof USER_ACTIONS;

export const isUserActionName = (name: string): name is UserActionName => Object.hasOwn(USER_ACTIONS, name);

/** Runs one action; `false` when the operation refused (no address, mail off: nothing changed). */
export async function runUserAction(
  name: UserActionName,
  users: AdminOperations['users'],
  sub: string,
  by: AdminActor,
): Promise<boolean> {
  try {
    await (USER_ACTIONS[name] as UserAction).run(users, sub, by);
    return true;
  } catch (error) {
    if (error instanceof AdminActionRefusedError) return false;
    throw error;
  }
}

/** The actions listed on a user's page, in the table's order. */
export const applicableActions = (user: UserDetail, mailOn: boolean): UserActionName[] =>
  (Object.keys(USER_ACTIONS) as UserActionName[]).filter((name) =>
    (USER_ACTIONS[name] as UserAction).appliesTo(user, mailOn),
  );
