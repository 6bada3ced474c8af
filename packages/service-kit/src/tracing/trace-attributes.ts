import type { Context } from '@opentelemetry/api';
import type { ReadableSpan, Span, SpanProcessor } from '@opentelemetry/sdk-trace';

/**
 * Attributes that belong to a whole trace in this process rather than to one span: the auth server
 * learns a request's sign-in interaction (`interaction.id`) while handling it, after the request's
 * span and some statements have started, and every span of the request should carry it so that
 * one search finds the whole sign-in (docs/security-and-operations.md, "One sign-in, one story").
 *
 * Spans of a trace whose local root (the request's server span) is still open are held back and
 * passed on when it ends, each with the trace's attributes added; spans started after an attribute
 * was set carry it from their start. Memory is bounded by the requests in flight.
 */
export class TraceAttributesSpanProcessor implements SpanProcessor {
  /** Per trace id: the attributes set so far. Bounded: the oldest trace is forgotten first. */
  private readonly attributesOfTrace = new Map<string, Record<string, string>>();
  /** Per trace id whose local root is open: that root's span id and the spans ended meanwhile. */
  private readonly openTraces = new Map<string, { rootSpanId: string; ended: ReadableSpan[] }>();

  constructor(private readonly inner: SpanProcessor) {}

  /** Sets `name` on every span of trace `traceId` recorded in this process, before and after now. */
  setTraceAttribute(traceId: string, name: string, value: string): void {
    const attributes = this.attributesOfTrace.get(traceId) ?? {};
    attributes[name] = value;
    this.attributesOfTrace.delete(traceId);
    this.attributesOfTrace.set(traceId, attributes);
    if (this.attributesOfTrace.size > MAX_TRACES) {
      this.attributesOfTrace.delete(this.attributesOfTrace.keys().next().value as string);
    }
  }

  onStart(span: Span, parentContext: Context): void {
    const { traceId, spanId } = span.spanContext();
    const attributes = this.attributesOfTrace.get(traceId);
    if (attributes) span.setAttributes(attributes);
    const parent = span.parentSpanContext;
    if ((parent === undefined || parent.isRemote === true) && !this.openTraces.has(traceId)) {
      this.openTraces.set(traceId, { rootSpanId: spanId, ended: [] });
      // A root that never ends (a leaked span) must not hold its trace forever: the oldest open
      // trace passes its spans on once too many are open.
      if (this.openTraces.size > MAX_TRACES) this.releaseOldestOpenTrace();
    }
    this.inner.onStart(span, parentContext);
  }

  onEnd(span: ReadableSpan): void {
    const { traceId, spanId } = span.spanContext();
    const open = this.openTraces.get(traceId);
    if (open !== undefined && open.rootSpanId !== spanId && open.ended.length < MAX_HELD_SPANS) {
      open.ended.push(span);
      return;
    }
    const held = open?.rootSpanId === spanId ? open.ended : [];
    if (open?.rootSpanId === spanId) this.openTraces.delete(traceId);
    for (const ended of [...held, span]) this.inner.onEnd(this.withTraceAttributes(ended));
  }

  private releaseOldestOpenTrace(): void {
    const [oldest, open] = this.openTraces.entries().next().value as [string, { ended: ReadableSpan[] }];
    this.openTraces.delete(oldest);
    for (const span of open.ended) this.inner.onEnd(this.withTraceAttributes(span));
  }

  private withTraceAttributes(span: ReadableSpan): ReadableSpan {
    const attributes = this.attributesOfTrace.get(span.spanContext().traceId);
    if (attributes === undefined) return span;
    // The same span (context, times, resource through the prototype) with the trace's attributes.
    return Object.create(span, { attributes: { value: { ...attributes, ...span.attributes } } });
  }

  forceFlush(): Promise<void> {
    return this.inner.forceFlush();
  }

  shutdown(): Promise<void> {
    for (const { ended } of this.openTraces.values()) {
      for (const span of ended) this.inner.onEnd(this.withTraceAttributes(span));
    }
    this.openTraces.clear();
    return this.inner.shutdown();
  }
}

const MAX_TRACES = 10_000;
/** A request holding more spans than this passes the rest on at once (nothing grows unbounded). */
const MAX_HELD_SPANS = 1_000;
