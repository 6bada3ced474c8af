import { createRequire } from 'node:module';
import type { FastifyPluginCallback } from 'fastify';
import { installActiveSpanAccess } from './active-span.js';
import { ScrubbingSpanExporter, type SpanRedaction } from './span-scrubbing.js';
import { TraceAttributesSpanProcessor } from './trace-attributes.js';

export interface TracingOptions {
  /** `service.name` of every span: OTEL_SERVICE_NAME, else this default (`auth-server`, `orders`). */
  defaultServiceName: string;
  env: NodeJS.ProcessEnv;
  /** The app's log-redaction rules, applied to every exported attribute. */
  redaction: SpanRedaction;
}

export interface Tracing {
  /** Register before any route: names each request's span by its route template (`http.route`). */
  fastifyPlugin: FastifyPluginCallback;
  /** Exports what is buffered and stops; the server calls it after the app has closed. */
  shutdown(): Promise<void>;
}

/**
 * Starts OpenTelemetry tracing with OTLP/HTTP export (OTEL_EXPORTER_OTLP_ENDPOINT, JSON encoding).
 * Every OpenTelemetry module is imported here, dynamically, so the server loads none of them
 * unless it calls this (which it does only when the endpoint is set).
 */
export async function startTracing(options: TracingOptions): Promise<Tracing> {
  const [api, core, asyncHooks, resources, sdk, exporter] = await Promise.all([
    import('@opentelemetry/api'),
    import('@opentelemetry/core'),
    import('@opentelemetry/context-async-hooks'),
    import('@opentelemetry/resources'),
    import('@opentelemetry/sdk-trace'),
    import('@opentelemetry/exporter-trace-otlp-http'),
  ]);
  const serviceName = options.env.OTEL_SERVICE_NAME?.trim() || options.defaultServiceName;
  const traceAttributes = new TraceAttributesSpanProcessor(
    new sdk.BatchSpanProcessor({
      exporter: new ScrubbingSpanExporter(new exporter.OTLPTraceExporter(), options.redaction),
      scheduledDelayMillis: scheduleDelay(options.env),
    }),
  );
  const provider = new sdk.TracerProvider({
    resource: resources.resourceFromAttributes({ 'service.name': serviceName }),
    spanProcessors: [traceAttributes],
  });
  api.context.setGlobalContextManager(new asyncHooks.AsyncLocalStorageContextManager().enable());
  // W3C Trace Context: an incoming `traceparent` is continued, outgoing requests carry it on.
  api.propagation.setGlobalPropagator(new core.W3CTraceContextPropagator());
  api.trace.setGlobalTracerProvider(provider);

  const fastifyPlugin = await registerInstrumentations();
  installActiveSpanAccess({
    ids() {
      const span = api.trace.getActiveSpan();
      if (span === undefined) return undefined;
      const { traceId, spanId } = span.spanContext();
      return { trace_id: traceId, span_id: spanId };
    },
    setAttribute(name, value) {
      api.trace.getActiveSpan()?.setAttribute(name, value);
    },
    setTraceAttribute(name, value) {
      const span = api.trace.getActiveSpan();
      if (span === undefined) return;
      span.setAttribute(name, value);
      traceAttributes.setTraceAttribute(span.spanContext().traceId, name, value);
    },
    inClientSpan(name, attributes, operation) {
      // As the pg instrumentation's requireParentSpan: only inside a request.
      if (api.trace.getActiveSpan() === undefined) return operation({ setAttribute() {} });
      const tracer = api.trace.getTracer('@oidc-orders/service-kit');
      return tracer.startActiveSpan(
        name,
        { kind: api.SpanKind.CLIENT, attributes: attributes() },
        async (span) => {
          try {
            return await operation(span);
          } catch (error) {
            // The type only: a message can quote a value (a DN, a statement's parameter).
            span.setAttribute('error.type', (error as Error)?.constructor?.name ?? 'Error');
            span.setStatus({ code: api.SpanStatusCode.ERROR });
            throw error;
          } finally {
            span.end();
          }
        },
      );
    },
  });
  return {
    fastifyPlugin,
    async shutdown() {
      installActiveSpanAccess(undefined);
      await provider.shutdown();
    },
  };
}

/** OTEL_BSP_SCHEDULE_DELAY, the standard variable: how long spans wait to be sent in a batch (ms). */
function scheduleDelay(env: NodeJS.ProcessEnv): number {
  const delay = Number(env.OTEL_BSP_SCHEDULE_DELAY);
  return Number.isInteger(delay) && delay > 0 ? delay : DEFAULT_SCHEDULE_DELAY_MS;
}

const DEFAULT_SCHEDULE_DELAY_MS = 5000;

/**
 * Incoming and outgoing HTTP (node:http), fetch (undici, which openid-client uses), PostgreSQL
 * (pg: statements with their `$n` placeholders, never the bound values) and Fastify's routes.
 */
async function registerInstrumentations(): Promise<FastifyPluginCallback> {
  const [instrumentation, http, undici, pg, fastifyOtel] = await Promise.all([
    import('@opentelemetry/instrumentation'),
    import('@opentelemetry/instrumentation-http'),
    import('@opentelemetry/instrumentation-undici'),
    import('@opentelemetry/instrumentation-pg'),
    import('@fastify/otel'),
  ]);
  const fastify = new fastifyOtel.FastifyOtelInstrumentation({
    instrumentHooks: false,
    instrumentHandler: false,
  });
  instrumentation.registerInstrumentations({
    instrumentations: [
      new http.HttpInstrumentation(),
      new undici.UndiciInstrumentation(),
      // Statements only inside a request (start-up migrations stay out of traces); no pool-checkout
      // spans (one more span per statement; the pool metrics show waiting).
      new pg.PgInstrumentation({
        requireParentSpan: true,
        enhancedDatabaseReporting: false,
        ignoreConnectSpans: true,
      }),
      fastify,
    ],
  });
  patchModulesLoadedBefore();
  return fastify.plugin() as FastifyPluginCallback;
}

/**
 * The instrumentations patch a module when it is required after they are registered. The bundled
 * server has imported node:http and pg already (its imports are hoisted above this code), so they
 * are required once more here: the hook then patches the shared prototypes the app already uses.
 */
function patchModulesLoadedBefore(): void {
  const require = createRequire(import.meta.url);
  require('node:http');
  require('node:https');
  const pgEntry = require.resolve('pg');
  require(pgEntry);
  createRequire(pgEntry)('pg-pool');
}
