import type { Tracing, TracingOptions } from './start-tracing.js';

/**
 * Tracing only when OTEL_EXPORTER_OTLP_ENDPOINT is set: otherwise nothing of OpenTelemetry is
 * imported (the import below is dynamic) and no request pays for it. Called by each server before
 * it builds the app, so that the app's first request is traced.
 */
export async function startTracingWhenConfigured(options: TracingOptions): Promise<Tracing | undefined> {
  if (!options.env.OTEL_EXPORTER_OTLP_ENDPOINT) return undefined;
  const { startTracing } = await import('./start-tracing.js');
  return startTracing(options);
}
