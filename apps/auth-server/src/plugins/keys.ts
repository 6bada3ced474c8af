import type { Clock } from '@oidc-orders/oauth-core';
import fp from 'fastify-plugin';
import { KeyRing } from '../keys/key-ring.js';
import { KEY_REFRESH_INTERVAL_MS } from '../keys/rotation.js';
import { ensureSigningKeys } from '../keys/signing-key-bootstrap.js';
import { createKeyStore } from '../storage/drizzle/stores.js';

declare module 'fastify' {
  interface FastifyInstance {
    /** Signing keys decrypted once at start: oauth-core `TokenSigner` and `TokenVerifier`, and the JWKS. */
    keyRing: KeyRing;
  }
}

/**
 * Loads (or, on an empty database, creates) the RS256 and ES256 signing keys. A wrong
 * KEY_ENCRYPTION_KEY fails the start with `KeyDecryptionError`; it never creates replacement keys,
 * which would silently change the JWKS under every relying party.
 */
export const keysPlugin = fp<{ clock: Clock }>(
  async (app, { clock }) => {
    if (app.config.keyEncryptionKeyIsDevelopmentOnly) {
      app.log.warn(
        'KEY_ENCRYPTION_KEY is not set: signing keys are encrypted with a fixed DEVELOPMENT-ONLY key; ' +
          'set KEY_ENCRYPTION_KEY (32 random bytes, base64url) for any real deployment',
      );
    }
    const records = await ensureSigningKeys(app.database.db, app.config.keyEncryptionKey, clock);
    const keyRing = await KeyRing.load(records, app.config.keyEncryptionKey, {
      clock,
      issuer: app.config.issuer,
    });
    app.log.info({ kids: keyRing.jwks().keys.map((key) => key.kid) }, 'signing keys loaded');
    app.decorate('keyRing', keyRing);

    // Rotation (`pnpm --filter auth-server keys rotate`) writes a new key that activates later; every
    // instance picks it up here, publishes it at once and signs with it from its activation time.
    const keyStore = createKeyStore(app.database.db);
    keyRing.setReloader(() => keyStore.listSigningKeys());
    const timer = setInterval(() => {
      keyRing
        .reloadKeys()
        .catch((error) =>
          app.log.warn({ err: error }, 'signing key refresh failed; keeping the loaded keys'),
        );
    }, KEY_REFRESH_INTERVAL_MS);
    timer.unref();
    app.addHook('onClose', async () => clearInterval(timer));
  },
  { name: 'keys', fastify: '5.x', dependencies: ['config', 'db'] },
);
