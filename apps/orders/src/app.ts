import { randomUUID } from 'node:crypto';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { activeTraceIds, isTracingOn, prettyTransport, toFastifyTrustProxy } from '@oidc-orders/service-kit';
import Fastify, {
  type FastifyInstance,
  type FastifyPluginCallback,
  type FastifyReply,
  type onRouteHookHandler,
} from 'fastify';
import type { AppConfig } from './config.js';
import type { DatabaseHandle } from './db/client.js';
import { REDACTED, serializeError, serializeRequest } from './logging.js';
import type { DiscoveryRetryOptions } from './oidc/provider.js';
import { apiCorsPlugin } from './plugins/api-cors.js';
import { apiKeyGuardPlugin } from './plugins/api-key-guard.js';
import { bearerAuthPlugin } from './plugins/bearer-auth.js';
import { canonicalHostPlugin } from './plugins/canonical-host.js';
import { configPlugin } from './plugins/config.js';
import { databasePlugin } from './plugins/db.js';
import { errorHandlerPlugin, toErrorReply } from './plugins/error-handler.js';
import { inputGuardPlugin } from './plugins/input-guard.js';
import { lifecyclePlugin } from './plugins/lifecycle.js';
import { metricsPlugin } from './plugins/metrics.js';
import { oidcPlugin } from './plugins/oidc.js';
import { openApiPlugin } from './plugins/openapi.js';
import { sessionPlugin } from './plugins/session.js';
import { appRoutes } from './routes/app.js';
import { type BffRoutesOptions, bffRoutes } from './routes/bff.js';
import { guardedRoutes } from './routes/guarded-areas.js';
import { healthRoutes } from './routes/health.js';
import type { OrderRoutesOptions } from './routes/orders.js';
import { protectedResourceRoutes } from './routes/protected-resource.js';
import { signInRoutes } from './routes/signin.js';

export interface AppDependencies {
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
  /** Test seam: sees every route as it is registered (test/route-guards.test.ts walks them). */
  onRoute?: onRouteHookHandler;
  /** OpenTelemetry's Fastify plugin when tracing is on (server.ts): spans named by route. */
  tracingPlugin?: FastifyPluginCallback;
}

/** Largest request body accepted, bytes (Fastify's default is 1 MiB). */
export const BODY_LIMIT_BYTES = 64 * 1024;

/**
 * Headers whose values must never reach a log line. The request serializer logs no header at all;
 * this list is the second line of defence for any code that logs a `req.headers` or `res.headers`.
 */
export const REDACTED_HEADERS = ['authorization', 'cookie', 'set-cookie', 'x-api-key', 'dpop'];

/**
 * Builds the application without listening and without reading process.env. Async like the auth
 * server's: awaiting it loads every plugin (a missing dependency or an unreachable database
 * rejects here, not on a request); `ready()` then runs the onReady hooks.
 */
export async function buildApp(config: AppConfig, deps: AppDependencies = {}): Promise<FastifyInstance> {
  const app = Fastify({
    logger: {
      level: config.logLevel,
      serializers: { req: serializeRequest, err: serializeError },
      redact: {
        paths: [...REDACTED_HEADERS.map((header) => `req.headers["${header}"]`), 'res.headers["set-cookie"]'],
        censor: REDACTED,
      },
      ...(deps.logStream ? { stream: deps.logStream } : {}),
      ...(deps.prettyLogs && !deps.logStream ? { transport: prettyTransport('orders') } : {}),
      // With tracing on, each line names its trace and span, so a log line leads to the trace.
      ...(isTracingOn() ? { mixin: () => activeTraceIds() ?? {} } : {}),
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

  if (deps.onRoute) app.addHook('onRoute', deps.onRoute);
  // First, so that it sees every route as it is registered.
  if (deps.tracingPlugin) app.register(deps.tracingPlugin);
  // A callback hook: every request runs it and it does no I/O, so no promise is made for it.
  app.addHook('onRequest', (request, reply, done) => {
    reply.header('x-request-id', request.id);
    done();
  });

  // Order matters only for the error handler, which must be on the root before the route plugins
  // so they inherit it; `dependencies` on each plugin make a wrong order fail ready().
  app.register(errorHandlerPlugin);
  app.register(inputGuardPlugin);
  app.register(configPlugin, { config });
  // Before every route: it collects them as they are registered (GET /openapi.json).
  app.register(openApiPlugin);
  app.register(canonicalHostPlugin);
  app.register(databasePlugin, deps.database ? { database: deps.database } : {});
  // Before every route: each request is counted and timed by its route (GET /metrics).
  app.register(metricsPlugin);
  app.register(lifecyclePlugin);
  app.register(apiKeyGuardPlugin);
  app.register(apiCorsPlugin);
  app.register(oidcPlugin, deps.discoveryRetry ? { discoveryRetry: deps.discoveryRetry } : {});
  app.register(
    sessionPlugin,
    deps.refreshPollIntervalMs ? { refreshPollIntervalMs: deps.refreshPollIntervalMs } : {},
  );
  app.register(bearerAuthPlugin);
  app.register(healthRoutes);
  app.register(protectedResourceRoutes);
  app.register(guardedRoutes, deps.orderRoutes ?? {});
  app.register(signInRoutes);
  app.register(bffRoutes, deps.bffRoutes ?? {});
  app.register(appRoutes);

  return app;
}
