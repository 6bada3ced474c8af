import { endSessionGrants, type FrontChannelLogoutTarget } from '@oidc-orders/oauth-core';
import type { FastifyRequest } from 'fastify';
import fp from 'fastify-plugin';
import {
  type BackchannelLogoutSender,
  type BackchannelLogoutSenderOptions,
  createBackchannelLogoutSender,
  DEFAULT_BACKCHANNEL_LOGOUT_OPTIONS,
} from '../logout/backchannel-sender.js';

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
  }
}

export interface LogoutPluginOptions {
  /** Overrides of the delivery settings (tests shorten the retry delays). */
  backchannel?: Partial<Omit<BackchannelLogoutSenderOptions, 'log'>> | undefined;
}

export const logoutPlugin = fp<LogoutPluginOptions>(
  async (app, options) => {
    const { stores, signer, clock, random, config } = app.protocol;
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
        const ended = await endSessionGrants(
          { sid: session.id, sub: session.sub },
          { stores, signer, clock, random, config },
        );
        if (ended.revokedGrantIds.length > 0) {
          request.log.info(
            { sid: session.id, grants: ended.revokedGrantIds.length },
            'session grants revoked at logout',
          );
        }
        // Fire and forget: the browser's response never waits for relying parties.
        backchannel.send(ended.backChannel);
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
    app.addHook('onClose', async () => backchannel.close(BACKCHANNEL_LOGOUT_CLOSE_GRACE_MS));
  },
  { name: 'logout', fastify: '5.x', dependencies: ['protocol'] },
);
