import { randomUUID } from 'node:crypto';
import formbody from '@fastify/formbody';
import {
  type Clock,
  type RandomSource,
  type ScryptCost,
  systemClock,
  systemRandom,
} from '@oidc-orders/oauth-core';
import { activeTraceIds, isTracingOn, prettyTransport, toFastifyTrustProxy } from '@oidc-orders/service-kit';
import Fastify, {
  type FastifyBaseLogger,
  type FastifyPluginCallback,
  type FastifyServerOptions,
  type RouteOptions,
} from 'fastify';
import type { AppConfig } from './config.js';
import type { DatabaseHandle } from './db/client.js';
import type { Directory } from './directory/types.js';
import type { EnabledFeatures } from './endpoints.js';
import type { UpstreamClients } from './federation/upstream-client.js';
import { scrubText, scrubValue, serializeError, serializeRequest } from './http/log-redaction.js';
import { parseFormBody, requestTextGuardPlugin } from './http/request-text-guard.js';
import { createLoginAttemptLimiter } from './interaction/login-attempt-limiter.js';
import type { DevelopmentSeedSummary } from './pages/home.js';
import { adminPlugin } from './plugins/admin.js';
import { auditEventsPlugin } from './plugins/audit-events.js';
import { type ClientKeyOptions, clientAuthenticationPlugin } from './plugins/client-authentication.js';
import { configPlugin } from './plugins/config.js';
import { corsPlugin } from './plugins/cors.js';
import { databasePlugin } from './plugins/db.js';
import { directoryPlugin } from './plugins/directory.js';
import { dpopPlugin } from './plugins/dpop.js';
import { answerFrameworkError, errorHandlerPlugin } from './plugins/error-handler.js';
import { expirySweeperPlugin } from './plugins/expiry-sweeper.js';
import { federationPlugin } from './plugins/federation.js';
import { healthPlugin } from './plugins/health.js';
import { kerberosPlugin } from './plugins/kerberos.js';
import { keysPlugin } from './plugins/keys.js';
import { type LogoutPluginOptions, logoutPlugin } from './plugins/logout.js';
import { type MailPluginOptions, mailPlugin } from './plugins/mail.js';
import { metricsPlugin } from './plugins/metrics.js';
import { openApiPlugin } from './plugins/openapi.js';
import { protocolPlugin } from './plugins/protocol.js';
import { type StoresPluginOptions, storesPlugin } from './plugins/stores.js';
import { adminApiRoutes } from './routes/admin-api/index.js';
import { adminApiMetadataRoutes } from './routes/admin-api-metadata.js';
import { discoveryRoutes } from './routes/discovery.js';
import { upstreamLogoutRoutes } from './routes/idp-logout.js';
import { oauthRoutes } from './routes/oauth/index.js';
import { signInRoutes } from './routes/sign-in.js';
import type { SeedDocument } from './schemas/seed.js';
import { readSeedFile } from './seed.js';
import type { SeedPlan } from './seed-plan/plan.js';
import { planSeed, planSeedFile, seedPlanContext } from './seed-plan/plan-seed.js';

/** What tests (or an embedding program) may supply instead of the defaults. */
export interface AppDependencies {
  /** An open database to use instead of opening `config.database`; the caller closes it. */
  database?: DatabaseHandle;
  clock?: Clock;
  random?: RandomSource;
  /** Upstream provider clients (tests shorten their timeouts); default createUpstreamClients(). */
  upstreamClients?: UpstreamClients;
  /** A seed applied at start instead of reading `config.seedFile`. */
  seed?: SeedDocument;
  /**
   * scrypt cost for the seed's plain-text passwords; default oauth-core's DEFAULT_SCRYPT_COST.
   * Tests that are not about password hashing pass a cheaper one (each sign-in verifies at it).
   */
  seedPasswordCost?: ScryptCost;
  /** Fastify/pino logger options (e.g. `false`, or a `stream` to capture logs in tests). */
  logger?: FastifyServerOptions['logger'];
  /** Readable log lines (pino-pretty) for a person at a terminal; server.ts decides (TTY, development, not CI). */
  prettyLogs?: boolean;
  /** Back-channel logout delivery settings (tests shorten the retry delays). */
  backchannelLogout?: LogoutPluginOptions['backchannel'];
  /** How clients' `jwks_uri` are fetched and cached (tests shorten the re-read cooldown). */
  clientKeys?: ClientKeyOptions;
  /** Test seam: limits and DNS answers for fetching Client ID Metadata Documents. */
  metadataDocumentFetch?: StoresPluginOptions['metadataDocumentFetch'];
  /** Mail timings and rate limits (tests shorten the SMTP timeouts and lower the limits). */
  mail?: MailPluginOptions;
  /** Test seam: sees every route as it is registered (test/openapi.test.ts walks them). */
  onRoute?: (route: RouteOptions) => void;
  /** OpenTelemetry's Fastify plugin when tracing is on (server.ts): spans named by route. */
  tracingPlugin?: FastifyPluginCallback;
  /** An opened directory to use instead of the one `LDAP_URL` configures; the caller closes it. */
  directory?: Directory;
}

/** The seed members that turn optional endpoints on (src/endpoints.ts `enabledBy`). */
function enabledFeatures(seed: SeedDocument | undefined): EnabledFeatures {
  return new Set(seed?.client_registration ? (['client_registration'] as const) : []);
}

/** Global default; OAuth endpoints set a tighter limit per route (src/http/oauth-form.ts). */
const DEFAULT_BODY_LIMIT_BYTES = 64 * 1024;

/**
 * Builds the authorization server. Never reads `process.env` and never listens (src/server.ts does
 * both); start-up failures (database, migrations, seed, keys) reject `app.ready()`.
 */
export async function buildApp(config: AppConfig, deps: AppDependencies = {}) {
  const clock = deps.clock ?? systemClock;
  const random = deps.random ?? systemRandom;
  // Read and validated before anything else, so a broken seed file fails the start at once.
  const seed = deps.seed ?? (config.seedFile ? await readSeedFile(config.seedFile) : undefined);
  const app = await createServer(config, deps);
  warnWhenNoClientIsRegistered(app.log, seed, config.seedFile);
  const start: StartParts = { config, deps, seed, clock, random };
  await registerInfrastructure(app, start);
  await registerRoutes(app, start);
  return app;
}

/** What buildApp starts from: the configuration, the caller's parts, the seed, time and randomness. */
interface StartParts {
  config: AppConfig;
  deps: AppDependencies;
  seed: SeedDocument | undefined;
  clock: Clock;
  random: RandomSource;
}

/** Fastify with the server-wide options and hooks, before any plugin. */
async function createServer(config: AppConfig, deps: AppDependencies) {
  const app = Fastify({
    logger: withLogRedaction(config, deps.logger, deps.prettyLogs === true),
    trustProxy: toFastifyTrustProxy(config.trustProxy),
    bodyLimit: DEFAULT_BODY_LIMIT_BYTES,
    genReqId: () => randomUUID(),
    // Only a trusted proxy may name the request id; otherwise a client could forge log correlation.
    requestIdHeader: config.trustProxy === false ? false : 'x-request-id',
    routerOptions: { ignoreTrailingSlash: false },
    frameworkErrors: answerFrameworkError(issuerBasePath(config.issuer)),
    // The first start on an embedded database runs initdb and every migration inside the db plugin:
    // seconds, more on a busy machine, where Fastify's default of 10 s stopped `pnpm dev`.
    pluginTimeout: 120_000,
  });
  if (deps.onRoute) app.addHook('onRoute', deps.onRoute);
  // First, so that it sees every route as it is registered.
  if (deps.tracingPlugin) await app.register(deps.tracingPlugin);
  // A callback hook: every request runs it and it does no I/O, so no promise is made for it.
  app.addHook('onRequest', (request, reply, done) => {
    reply.header('x-request-id', request.id);
    done();
  });
  for (const warning of config.warnings) app.log.warn(warning);
  return app;
}

type App = Awaited<ReturnType<typeof createServer>>;

/** The named plugins (src/plugins/), each system the app talks to among them, in dependency order. */
async function registerInfrastructure(app: App, { config, deps, seed, clock, random }: StartParts) {
  await app.register(configPlugin, { config });
  await app.register(errorHandlerPlugin);
  // Control characters, lone surrogates, non-UTF-8 escapes → 400 before any other hook or route.
  await app.register(requestTextGuardPlugin);
  // Before every route (it collects them as they are registered), after the error handler and the
  // guard so that GET /openapi.json answers errors like every other route.
  await app.register(openApiPlugin);
  await app.register(databasePlugin, { database: deps.database });
  // Right after the database: an audit event of any later plugin or route is stored too.
  await app.register(auditEventsPlugin, { clock });
  // Before every route: each request is counted and timed by its route (GET /metrics).
  await app.register(metricsPlugin);
  await app.register(storesPlugin, {
    clock,
    seed,
    seedPasswordCost: deps.seedPasswordCost,
    metadataDocumentFetch: deps.metadataDocumentFetch,
  });
  await app.register(keysPlugin, { clock });
  await app.register(protocolPlugin, { clock, random });
  await app.register(dpopPlugin, { clock });
  // Expired interactions, SSO sessions and WebAuthn challenges, deleted once a minute.
  await app.register(expirySweeperPlugin, { clock });
  const fetchOrigins = seed?.client_registration?.fetch_origins;
  await app.register(clientAuthenticationPlugin, {
    clock,
    keys: { ...(fetchOrigins ? { registeredClientFetchOrigins: fetchOrigins } : {}), ...deps.clientKeys },
  });
  await app.register(logoutPlugin, { backchannel: deps.backchannelLogout });
  // A test's own directory, or the one LDAP_URL configures (ldapts is loaded only then).
  await app.register(directoryPlugin, deps.directory ? { directory: deps.directory } : {});
  await app.register(mailPlugin, deps.mail ?? {});
  // Sign-in through other systems: Kerberos (KRB5_KTNAME), upstream providers (the seed's).
  await app.register(kerberosPlugin);
  await app.register(federationPlugin, {
    providers: seed?.identity_providers,
    clients: deps.upstreamClients,
  });
  // The operator's operations (src/admin/), for the admin API and the console.
  await app.register(adminPlugin);
  await app.register(healthPlugin);
  await app.register(corsPlugin);
  // application/x-www-form-urlencoded for every route (OAuth endpoints and HTML forms). Repeated
  // parameters arrive as arrays, which the OAuth endpoints reject (RFC 6749 §3.1, §3.2).
  await app.register(formbody, { parser: parseFormBody });
}

/** The route areas: discovery, the OAuth endpoints, then everything a browser sees. */
async function registerRoutes(app: App, { config, deps, seed, clock, random }: StartParts) {
  await app.register(discoveryRoutes, {
    enabled: enabledFeatures(seed),
    metadataDocuments: seed?.client_id_metadata_documents !== undefined,
  });
  await app.register(oauthRoutes, {
    registration: seed?.client_registration && { settings: seed.client_registration, clock, random },
  });
  // The seed plan compares with the file on disk (SEED_FILE), else with the seed given in code.
  await app.register(adminApiRoutes, { seed: deps.seed });
  await app.register(adminApiMetadataRoutes);
  // Interaction: /authorize, login (each sign-in method), consent, SSO session, account pages.
  await app.register(signInRoutes, {
    db: app.database.db,
    protocol: app.protocol,
    deviceUserCodeAttemptsPerMinute: config.device.userCodeAttemptsPerMinute,
    keyEncryptionKey: config.keyEncryptionKey,
    ...(config.nodeEnv === 'development' && seed
      ? { developmentSeed: summariseSeedForDevelopment(seed, config.seedFile) }
      : {}),
    loginAttemptGuard: loginAttemptLimiterOf(app, clock),
    admins: seed?.admins ?? [],
    seedPlan: currentSeedPlan(app, config.seedFile ? undefined : seed),
  });
  await app.register(upstreamLogoutRoutes, { basePath: issuerBasePath(config.issuer) });
}

/** Failed sign-ins per username and per IP, counted in the shared rate_limit_counters table. */
function loginAttemptLimiterOf(app: App, clock: Clock) {
  const limits = app.config.rateLimits;
  return createLoginAttemptLimiter(
    app.database.db,
    {
      maxFailuresPerUsername: limits.loginMaxFailuresPerUsername,
      maxFailuresPerIp: limits.loginMaxFailuresPerIp,
      windowSeconds: limits.loginFailureWindowSeconds,
    },
    { nowMs: () => clock.nowSeconds() * 1000 },
  );
}

/**
 * What applying the seed now would change: SEED_FILE read again each time (an edit shows before
 * the restart), else the seed given in code; `null` without either.
 */
function currentSeedPlan(app: App, seed: SeedDocument | undefined): () => Promise<SeedPlan | null> {
  const context = seedPlanContext(app.config);
  const seedFile = app.config.seedFile;
  return async () => {
    if (seedFile !== undefined) return planSeedFile(app.database.db, seedFile, context);
    return seed === undefined ? null : planSeed(app.database.db, seed, context);
  };
}

/** A server nobody can sign in to is almost always a forgotten SEED_FILE: say so at start. */
function warnWhenNoClientIsRegistered(
  log: FastifyBaseLogger,
  seed: SeedDocument | undefined,
  seedFile: string | undefined,
): void {
  if (seed === undefined) {
    log.warn(
      'SEED_FILE is not set: no client is registered from a seed, so no application can sign in yet (README "Seed file")',
    );
  } else if ((seed.clients ?? []).length === 0) {
    log.warn(`the seed${seedFile ? ` ${seedFile}` : ''} registers no client: no application can sign in`);
  }
}

/** Names only, never secrets: what the development landing page lists. */
function summariseSeedForDevelopment(
  seed: SeedDocument,
  seedFile: string | undefined,
): DevelopmentSeedSummary {
  return {
    clients: (seed.clients ?? []).map((client) => ({
      clientId: client.client_id,
      name: client.client_name,
      redirectUris: client.redirect_uris ?? [],
    })),
    usernames: (seed.users ?? []).map((user) => user.username),
    seedFile,
  };
}

/** The issuer's path ('' at the root): where the pages find their assets. */
function issuerBasePath(issuer: string): string {
  const { pathname } = new URL(issuer);
  return pathname === '/' ? '' : pathname;
}

/**
 * The logger of the app; a caller's options (a test's stream and level) are merged into it, so the
 * redaction below is always in place (no token, secret or personal data in any line, at any
 * level).
 */
function withLogRedaction(
  config: AppConfig,
  override: FastifyServerOptions['logger'] | undefined,
  pretty = false,
): FastifyServerOptions['logger'] {
  // Silent rather than off: Fastify's "off" is one no-op logger shared by every app in the
  // process, and the app's own logger carries its audit event sink (src/audit.ts `attachAuditSink`).
  if (override === false) return { ...loggerOptions(config), level: 'silent' };
  const base = loggerOptions(config, pretty && override === undefined);
  return typeof override === 'object' && override !== null ? { ...base, ...override } : base;
}

type LoggerOptions = Exclude<FastifyServerOptions['logger'], boolean | undefined>;

function loggerOptions(config: AppConfig, pretty = false): LoggerOptions {
  return {
    level: config.logLevel,
    ...(pretty ? { transport: prettyTransport('auth-server') } : {}),
    // With tracing on, each line names its trace and span, so a log line leads to the trace.
    ...(isTracingOn() ? { mixin: () => activeTraceIds() ?? {} } : {}),
    // Request URLs with sensitive query values replaced; errors and every logged string scrubbed
    // of sensitive `name=value` pairs and JWTs (src/http/log-redaction.ts).
    serializers: { req: serializeRequest as never, err: serializeError as never },
    formatters: { log: (object: Record<string, unknown>) => scrubValue(object) as Record<string, unknown> },
    hooks: {
      logMethod(args: unknown[], method: (...args: unknown[]) => void) {
        return method.apply(
          this,
          args.map((arg) => (typeof arg === 'string' ? scrubText(arg) : arg)),
        );
      },
    },
    // Fastify's request serializer logs no headers or bodies; these paths guard against anyone
    // adding them to a log line later (credentials, session cookies).
    redact: {
      paths: [
        'req.headers.authorization',
        'req.headers.cookie',
        'res.headers["set-cookie"]',
        'headers.authorization',
        'headers.cookie',
        'headers["set-cookie"]',
      ],
      censor: '[redacted]',
    },
  };
}
