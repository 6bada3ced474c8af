import { createHash, timingSafeEqual } from 'node:crypto';
import type { onRequestAsyncHookHandler } from 'fastify';
import fp from 'fastify-plugin';
import { AUDIT_EVENTS, audit } from '../audit.js';
import { InvalidApiKeyError, MissingApiKeyError } from '../errors.js';

declare module 'fastify' {
  interface FastifyInstance {
    /**
     * onRequest guard for routes that need `x-api-key`: the one hook of the API-key area in
     * src/routes/guarded-areas.ts (routes do not carry guards of their own).
     */
    requireApiKey: onRequestAsyncHookHandler;
  }
}

function digest(value: string): Buffer {
  return createHash('sha256').update(value, 'utf8').digest();
}

/**
 * Runs in onRequest, before the body is even parsed, so a wrong key is 403 whatever the body is
 * and the handler never runs. Missing header → 401, wrong (or repeated) header → 403.
 */
export const apiKeyGuardPlugin = fp(
  async (app) => {
    // Comparing fixed-length digests keeps timingSafeEqual from throwing on a length mismatch
    // and keeps the key's length from leaking through timing.
    const expectedDigest = digest(app.config.apiKey);
    const requireApiKey: onRequestAsyncHookHandler = async (request) => {
      const presented = request.headers['x-api-key'];
      if (presented === undefined) {
        audit(request.log, AUDIT_EVENTS.apiKeyRejected, { reason: 'missing', ip: request.ip });
        throw new MissingApiKeyError();
      }
      if (typeof presented !== 'string' || !timingSafeEqual(digest(presented), expectedDigest)) {
        audit(request.log, AUDIT_EVENTS.apiKeyRejected, { reason: 'invalid', ip: request.ip });
        throw new InvalidApiKeyError();
      }
    };
    app.decorate('requireApiKey', requireApiKey);
  },
  { name: 'api-key-guard', dependencies: ['config'], fastify: '5.x' },
);
