import type {
  Clock,
  ProtocolConfig,
  RandomSource,
  SecretHasher,
  TokenSigner,
  TokenVerifier,
} from '@oidc-orders/oauth-core';
import fp from 'fastify-plugin';
import type { DrizzleStores } from '../storage/drizzle/stores.js';

/**
 * Everything oauth-core functions take as their context, assembled once: stores, clock, randomness,
 * signer/verifier and the protocol configuration. Routes pass this object (or a slice of it) to
 * oauth-core; nothing in the protocol layer reads globals.
 */
export interface ProtocolServices {
  stores: DrizzleStores;
  clock: Clock;
  random: RandomSource;
  signer: TokenSigner;
  verifier: TokenVerifier;
  config: ProtocolConfig;
  secrets: SecretHasher;
}

declare module 'fastify' {
  interface FastifyInstance {
    protocol: ProtocolServices;
  }
}

export const protocolPlugin = fp<{ clock: Clock; random: RandomSource }>(
  async (app, { clock, random }) => {
    app.decorate('protocol', {
      stores: app.stores,
      clock,
      random,
      signer: app.keyRing,
      verifier: app.keyRing,
      config: app.config.protocol,
      secrets: app.secretHasher,
    });
  },
  { name: 'protocol', fastify: '5.x', dependencies: ['config', 'stores', 'keys'] },
);
