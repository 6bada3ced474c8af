/**
 * What an operator's action can fail with, whatever asked for it (the admin API answers them as
 * RFC 9457 problem details, the console as a page, the `users` command as a line).
 */

/** The user, session, grant, client… named does not exist (404). */
export class AdminNotFoundError extends Error {
  constructor(
    readonly kind: 'user' | 'session' | 'grant' | 'client' | 'resource' | 'provider',
    readonly id: string,
  ) {
    super(`no ${kind} ${JSON.stringify(id)}`);
    this.name = 'AdminNotFoundError';
  }
}

/** The action cannot apply to this entry as it is (409): a reset mail to a user without an address… */
export class AdminActionRefusedError extends Error {
  constructor(
    /** A stable reason a program can switch on. */
    readonly reason: 'no_email' | 'no_local_password' | 'mail_off' | 'mail_failed' | 'no_seed',
    message: string,
  ) {
    super(message);
    this.name = 'AdminActionRefusedError';
  }
}
