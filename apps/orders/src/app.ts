import { randomUUID } from 'node:crypto';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { toFastifyTrustProxy } from '@oidc-orders/service-kit';
import Fastify, { type FastifyInstance, type FastifyReply } from 'fastify';
import type { Config } from './config.js';
import type { DatabaseHandle } from './db/client.js';
import { REDACTED, serializeError, serializeRequest } from './logging.js';
import type { DiscoveryRetryOptions } from './oidc/provider.js';
import apiCors from './plugins/api-cors.js';
import apiKeyGuard from './plugins/api-key-guard.js';
import bearerAuth from './plugins/bearer-auth.js';
import canonicalHost from './plugins/canonical-host.js';
import configPlugin from './plugins/config.js';
import dbPlugin from './plugins/db.js';
import errorHandler, { toErrorReply } from './plugins/error-handler.js';
import inputGuard from './plugins/input-guard.js';
import lifecycle from './plugins/lifecycle.js';
import oidcPlugin from './plugins/oidc.js';
import sessionPlugin from './plugins/session.js';
import appRoutes from './routes/app.js';
import bffRoutes, { type BffRoutesOptions } from './routes/bff.js';
import healthRoutes from './routes/health.js';
import orderRoutes, { type OrderRoutesOptions } from './routes/orders.js';
import signInRoutes from './routes/signin.js';
import userRoutes from './routes/users.js';

export interface AppDeps {
  /** Use this opened, migrated database instead of opening DATABASE_URL; the app will not close it. */
  database?: DatabaseHandle;
  /** Where the JSON log lines go (default stdout); tests read them to check redaction. */
  logStream?: { write(line: string): void };
  /** Readable log lines (pino-pretty) for a person at a terminal; server.ts decides (TTY, development, not CI). */
  prettyLogs?: boolean;
  /** Test seams inside request handling; never set by server.ts. */
  orderRoutes?: OrderRoutesOptions;
  bffRoutes?: BffRoutesOptions;
  /** Test seam: backoff of the background OIDC discovery retries. */
  discoveryRetry?: DiscoveryRetryOptions;
  /** Test seam: how often a request waiting for another instance's token refresh looks again. */
  refreshPollIntervalMs?: number;
}

/** Largest request body accepted, bytes (Fastify's default is 1 MiB). */
export const BODY_LIMIT_BYTES = 64 * 1024;

/**
 * Headers whose values must never reach a log line. The request serializer logs no header at all;
 * this list is the second line of defence for any code that logs a `req.headers` or `res.headers`.
 */
export const REDACTED_HEADERS = ['authorization', 'cookie', 'set-cookie', 'x-api-key', 'dpop'];

/**
 * Builds the application without listening and without reading process.env. `ready()` loads every
 * plugin (so a missing dependency or an unreachable database fails there, not on a request).
 */
export function buildApp(config: Config, deps: AppDeps = {}): FastifyInstance {
  const app = Fastify({
    logger: {
      level: config.logLevel,
      serializers: { req: serializeRequest, err: serializeError },
      redact: {
        paths: [...REDACTED_HEADERS.map((header) => `req.headers["${header}"]`), 'res.headers["set-cookie"]'],
        censor: REDACTED,
      },
      ...(deps.logStream ? { stream: deps.logStream } : {}),
      ...(deps.prettyLogs && !deps.logStream
        ? {
            transport: {
              target: 'pino-pretty',
              options: {
                ignore: 'pid,hostname',
                translateTime: 'SYS:HH:MM:ss',
                messageFormat: 'orders | {msg}',
              },
            },
          }
        : {}),
    },
    genReqId: () => randomUUID(),
    // The router's own refusals (a path that is not valid percent-encoded UTF-8: FST_ERR_BAD_URL)
    // get the app's usual `{statusCode, message}` body too, not Fastify's default shape.
    frameworkErrors: (error, _request, reply: FastifyReply) => {
      const { body } = toErrorReply(error);
      void reply.code(body.statusCode).send(body);
    },
    // Every body here is small (orders, form_post callbacks, logout tokens); larger ones are 413
    // before they are read into memory.
    bodyLimit: BODY_LIMIT_BYTES,
    trustProxy: toFastifyTrustProxy(config.trustProxy),
    // Opening the database, pinging it and migrating must fit; its own connect timeout is shorter.
    pluginTimeout: config.databaseConnectTimeoutMs + 60_000,
    ajv: {
      customOptions: {
        // Fastify's default strips unknown members silently; the contract is to reject them (400).
        removeAdditional: false,
        // Default 'array' coercion would turn quantity "2" or true into a number; params are
        // strings matched by pattern instead.
        coerceTypes: false,
        // So a 400 lists every violated rule, not only the first.
        allErrors: true,
      },
    },
  }).withTypeProvider<TypeBoxTypeProvider>();

  app.addHook('onRequest', async (request, reply) => {
    reply.header('x-request-id', request.id);
  });

  // Order matters only for the error handler, which must be on the root before the route plugins
  // so they inherit it; `dependencies` on each plugin make a wrong order fail ready().
  app.register(errorHandler);
  app.register(inputGuard);
  app.register(configPlugin, { config });
  app.register(canonicalHost);
  app.register(dbPlugin, deps.database ? { database: deps.database } : {});
  app.register(lifecycle);
  app.register(apiKeyGuard);
  app.register(apiCors);
  app.register(oidcPlugin, deps.discoveryRetry ? { discoveryRetry: deps.discoveryRetry } : {});
  app.register(
    sessionPlugin,
    deps.refreshPollIntervalMs ? { refreshPollIntervalMs: deps.refreshPollIntervalMs } : {},
  );
  app.register(bearerAuth);
  app.register(healthRoutes);
  app.register(orderRoutes, deps.orderRoutes ?? {});
  app.register(userRoutes);
  app.register(signInRoutes);
  app.register(bffRoutes, deps.bffRoutes ?? {});
  app.register(appRoutes);

  return app;
}
