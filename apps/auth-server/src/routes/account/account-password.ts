import type { Clock, ProtocolStores } from '@oidc-orders/oauth-core';
import type { FastifyInstance } from 'fastify';
import { changePassword, passwordChangeAnswer, passwordChangeFields } from '../../account/password-change.js';
import type { AppDatabase } from '../../db/client.js';
import type { LoginAttemptGuard } from '../interaction/index.js';
import type { AccountPageHelpers } from './account-area.js';

export interface AccountPasswordDeps extends AccountPageHelpers {
  db: AppDatabase;
  clock: Clock;
  stores: ProtocolStores;
  /** The login form's limiter; the password change counts wrong current passwords with it. */
  loginAttemptGuard?: LoginAttemptGuard | undefined;
}

/** The account page's password change (src/account/password-change.ts holds its rules). */
export function registerAccountPasswordRoutes(app: FastifyInstance, deps: AccountPasswordDeps) {
  app.post('/account/password', { config: { account: 'change' } }, async (request, reply) => {
    const current = deps.accountHolder(request);
    // The current password is asked even in a recent session: whoever finds an unlocked browser
    // cannot lock the owner out (src/account/password-change.ts says in which order it is checked).
    const outcome = await changePassword(
      {
        user: current.user,
        sessionId: current.session.id,
        ip: request.ip,
        ...passwordChangeFields(request.body),
      },
      {
        db: deps.db,
        clock: deps.clock,
        attempts: deps.loginAttemptGuard,
        signOut: app.userSignOut,
        log: request.log,
      },
    );
    if (outcome.kind === 'changed')
      app.securityNotices?.notify(request, current.user.sub, 'password_changed');
    const answer = passwordChangeAnswer(outcome, request.language);
    if (answer.retryAfterSeconds !== undefined) reply.header('retry-after', String(answer.retryAfterSeconds));
    const user = (await deps.stores.users.findUserBySub(current.user.sub)) ?? current.user;
    return deps.sendAccountPage(reply, { ...current, user }, answer.status, answer.notice);
  });
}
