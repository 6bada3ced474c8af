/**
 * What the apps ask of the active span, without importing OpenTelemetry: while tracing is off
 * (OTEL_EXPORTER_OTLP_ENDPOINT unset) nothing is installed here, every call is a no-op and no
 * OpenTelemetry module is ever loaded. `startTracing` installs the real access.
 */
export interface TraceIds {
  trace_id: string;
  span_id: string;
}

export type SpanAttributeValue = string | number | boolean;

/** What an operation may add to its own span once it knows (a row count, a result code). */
export interface OperationSpan {
  setAttribute(name: string, value: SpanAttributeValue): void;
}

export interface ActiveSpanAccess {
  ids(): TraceIds | undefined;
  setAttribute(name: string, value: string): void;
  setTraceAttribute(name: string, value: string): void;
  inClientSpan<T>(
    name: string,
    attributes: () => Record<string, SpanAttributeValue>,
    operation: (span: OperationSpan) => Promise<T>,
  ): Promise<T>;
}

const UNTRACED: OperationSpan = { setAttribute() {} };

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

/**
 * Adds one attribute to every span of the request being handled in this process, those started
 * before this call included (the request's own span, statements already run): the auth server
 * names the sign-in interaction a request belongs to, so that one search finds every span of it.
 * Never a secret: what is set here is exported as it is (after the scrubbing of every attribute).
 */
export function annotateActiveTrace(name: string, value: string): void {
  if (access === undefined) return;
  access.setTraceAttribute(name, value);
}

/**
 * Runs `operation` in a client span (an LDAP bind, a PGlite statement), child of the span of the
 * request being handled. Outside a request (start-up, migrations) and with tracing off it runs
 * untraced; `attributes` is a function so that nothing is built for a span that is not made.
 */
export function inClientSpan<T>(
  name: string,
  attributes: () => Record<string, SpanAttributeValue>,
  operation: (span: OperationSpan) => Promise<T>,
): Promise<T> {
  if (access === undefined) return operation(UNTRACED);
  return access.inClientSpan(name, attributes, operation);
}
