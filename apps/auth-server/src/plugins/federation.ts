import type { User } from '@oidc-orders/oauth-core';
import fp from 'fastify-plugin';
import type { AppDatabase } from '../db/client.js';
import { resolveProvider, type UpstreamProvider } from '../federation/registry.js';
import { createUpstreamClients, type UpstreamClients } from '../federation/upstream-client.js';
import { createUpstreamLinkMail, type UpstreamLinkMail } from '../mail/upstream-link.js';
import type { SeedIdentityProvider } from '../schemas/seed.js';

/** Upstream OpenID providers at the login step and on the account page (README "Upstream identity providers"). */
export interface FederationSignIn {
  db: AppDatabase;
  providers: ReadonlyMap<string, UpstreamProvider>;
  clients: UpstreamClients;
  findUser(sub: string): Promise<User | null>;
  /** Mailed proofs of an e-mail link; `null` when mail is off. */
  linkMail: UpstreamLinkMail | null;
}

declare module 'fastify' {
  interface FastifyInstance {
    /** `null` when the seed names no `identity_providers`. */
    federation: FederationSignIn | null;
  }
}

export interface FederationPluginOptions {
  /** The seed's `identity_providers`. */
  providers?: readonly SeedIdentityProvider[];
  /** Upstream provider clients (tests shorten their timeouts); default createUpstreamClients(). */
  clients?: UpstreamClients;
}

/**
 * The seed's upstream providers, resolved at start (a missing secret or key file fails it), with
 * the clients that talk to them and the mailed link proofs.
 */
export const federationPlugin = fp<FederationPluginOptions>(
  async (app, options) => {
    const entries = options.providers ?? [];
    if (entries.length === 0) {
      app.decorate('federation', null);
      return;
    }
    const providers = new Map(
      await Promise.all(entries.map(async (entry) => [entry.id, await resolveProvider(entry)] as const)),
    );
    const { clock, random, config } = app.protocol;
    const db = app.database.db;
    const federation: FederationSignIn = {
      db,
      providers,
      clients: options.clients ?? createUpstreamClients(),
      findUser: (sub) => app.protocol.stores.users.findUserBySub(sub),
      linkMail: app.mailer
        ? createUpstreamLinkMail({ db, clock, random, issuer: config.issuer, mailer: app.mailer })
        : null,
    };
    app.decorate('federation', federation);
  },
  { name: 'federation', fastify: '5.x', dependencies: ['config', 'db', 'protocol', 'mail'] },
);
