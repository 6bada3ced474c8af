/**
 * What the apps ask of the active span, without importing OpenTelemetry: while tracing is off
 * (OTEL_EXPORTER_OTLP_ENDPOINT unset) nothing is installed here, every call is a no-op and no
 * OpenTelemetry module is ever loaded. `startTracing` installs the real access.
 */
export interface TraceIds {
  trace_id: string;
  span_id: string;
}

export interface ActiveSpanAccess {
  ids(): TraceIds | undefined;
  setAttribute(name: string, value: string): void;
}

let access: ActiveSpanAccess | undefined;

export function installActiveSpanAccess(installed: ActiveSpanAccess | undefined): void {
  access = installed;
}

export function isTracingOn(): boolean {
  return access !== undefined;
}

/** The trace and span of the request being handled, for log lines and error pages. */
export function activeTraceIds(): TraceIds | undefined {
  return access?.ids();
}

/**
 * Adds one attribute (client id, grant type…) to the span of the request being handled. A name and
 * a value, not an object: the token endpoint calls this on every request, and with tracing off a
 * call must cost nothing, not even an object literal built at the call site to be thrown away.
 */
export function annotateActiveSpan(name: string, value: string): void {
  if (access === undefined) return;
  access.setAttribute(name, value);
}
