import type { FrontChannelLogoutTarget } from '@oidc-orders/oauth-core';
import type { FastifyRequest } from 'fastify';
import fp from 'fastify-plugin';
import {
  type BackchannelLogoutSender,
  type BackchannelLogoutSenderOptions,
  createBackchannelLogoutSender,
  DEFAULT_BACKCHANNEL_LOGOUT_OPTIONS,
} from '../logout/backchannel-sender.js';
import {
  createUserSignOut,
  endSessionsOfDisabledUsers,
  notifySessionEnded,
  type UserSignOut,
} from '../logout/user-sign-out.js';

/** How long closing the app waits for back-channel deliveries still running. */
export const BACKCHANNEL_LOGOUT_CLOSE_GRACE_MS = 5_000;

/**
 * What happens when an SSO session ends (README "Logout"): the grants obtained in it are revoked
 * (unless the client keeps offline access), every participating client with a back-channel URI gets
 * a logout token in the background, and the front-channel URIs are kept for the signed-out page.
 */
export interface SessionLogoutService {
  /** The `onSessionEnded` listener of the SSO session manager. */
  sessionEnded(session: { id: string; sub: string }, request: FastifyRequest): Promise<void>;
  /** Front-channel URIs of the session ended during `request` (empty when none ended). */
  frontChannelTargets(request: FastifyRequest): readonly FrontChannelLogoutTarget[];
  readonly backchannel: BackchannelLogoutSender;
}

declare module 'fastify' {
  interface FastifyInstance {
    sessionLogout: SessionLogoutService;
    /** Signs a user out of every session and grant (password change, reset, disabled user). */
    userSignOut: UserSignOut;
  }
}

export interface LogoutPluginOptions {
  /** Overrides of the delivery settings (tests shorten the retry delays). */
  backchannel?: Partial<Omit<BackchannelLogoutSenderOptions, 'log'>> | undefined;
}

export const logoutPlugin = fp<LogoutPluginOptions>(
  async (app, options) => {
    const { stores, signer, clock, random, config } = app.protocol;
    const context = { stores, signer, clock, random, config };
    const backchannel = createBackchannelLogoutSender({
      ...DEFAULT_BACKCHANNEL_LOGOUT_OPTIONS,
      fetch: globalThis.fetch,
      ...options.backchannel,
      log: app.log.child({ component: 'backchannel-logout' }),
    });
    const frontChannelByRequest = new WeakMap<FastifyRequest, FrontChannelLogoutTarget[]>();

    const service: SessionLogoutService = {
      backchannel,
      async sessionEnded(session, request) {
        // Fire and forget inside: the browser's response never waits for relying parties.
        const ended = await notifySessionEnded(session, { context, backchannel });
        if (ended.revokedGrantIds.length > 0) {
          request.log.info(
            { sid: session.id, grants: ended.revokedGrantIds.length },
            'session grants revoked at logout',
          );
        }
        frontChannelByRequest.set(request, [
          ...(frontChannelByRequest.get(request) ?? []),
          ...ended.frontChannel,
        ]);
      },
      frontChannelTargets(request) {
        return frontChannelByRequest.get(request) ?? [];
      },
    };
    app.decorate('sessionLogout', service);
    const userSignOut = createUserSignOut({ db: app.database.db, context, backchannel });
    app.decorate('userSignOut', userSignOut);
    // The seed applied at start (plugins/stores.ts) may have disabled users: their sessions end
    // here, now that logout tokens can be signed, and their relying parties are told.
    await endSessionsOfDisabledUsers(app.log, userSignOut);
    app.addHook('onClose', async () => backchannel.close(BACKCHANNEL_LOGOUT_CLOSE_GRACE_MS));
  },
  { name: 'logout', fastify: '5.x', dependencies: ['protocol', 'db'] },
);
