import type { Attributes, AttributeValue } from '@opentelemetry/api';
import type { ExportResult } from '@opentelemetry/core';
import type { ReadableSpan, SpanExporter, TimedEvent } from '@opentelemetry/sdk-trace';

/** The app's log-redaction rules, applied to span attributes before they leave the process. */
export interface SpanRedaction {
  /** For attributes holding a URL or path (`url.full`, `url.path`, `http.target`…). */
  redactUrl(url: string): string;
  /** For every other string attribute. */
  scrubText(text: string): string;
}

const URL_ATTRIBUTES = new Set(['url.full', 'url.path', 'url.query', 'http.url', 'http.target']);

/**
 * Exception events and error statuses keep their type only: a message can quote a value (a
 * database error names the input it rejected; a query error carries its bound parameters).
 */
const EXCEPTION_KEPT_ATTRIBUTES = new Set(['exception.type']);

function scrubAttributeValue(key: string, value: AttributeValue, redaction: SpanRedaction): AttributeValue {
  if (typeof value === 'string') {
    return URL_ATTRIBUTES.has(key) ? redaction.redactUrl(value) : redaction.scrubText(value);
  }
  if (Array.isArray(value)) {
    return value.map((item) =>
      typeof item === 'string' ? redaction.scrubText(item) : item,
    ) as AttributeValue;
  }
  return value;
}

export function scrubAttributes(attributes: Attributes, redaction: SpanRedaction): Attributes {
  const scrubbed: Attributes = {};
  for (const [key, value] of Object.entries(attributes)) {
    if (value !== undefined) scrubbed[key] = scrubAttributeValue(key, value, redaction);
  }
  return scrubbed;
}

function scrubEvent(event: TimedEvent, redaction: SpanRedaction): TimedEvent {
  if (event.name !== 'exception') {
    return { ...event, attributes: scrubAttributes(event.attributes ?? {}, redaction) };
  }
  const kept = Object.entries(event.attributes ?? {}).filter(([key]) => EXCEPTION_KEPT_ATTRIBUTES.has(key));
  return { ...event, attributes: Object.fromEntries(kept) };
}

/**
 * The span as exported: the same span (its context, times, links and resource read through the
 * prototype), with scrubbed attributes, events and status message.
 */
export function scrubSpan(span: ReadableSpan, redaction: SpanRedaction): ReadableSpan {
  return Object.create(span, {
    name: { value: redaction.scrubText(span.name) },
    attributes: { value: scrubAttributes(span.attributes, redaction) },
    events: { value: span.events.map((event) => scrubEvent(event, redaction)) },
    status: { value: { code: span.status.code } },
  }) as ReadableSpan;
}

/** Wraps the OTLP exporter: no span leaves the process unscrubbed, whatever set its attributes. */
export class ScrubbingSpanExporter implements SpanExporter {
  constructor(
    private readonly inner: SpanExporter,
    private readonly redaction: SpanRedaction,
  ) {}

  export(spans: ReadableSpan[], resultCallback: (result: ExportResult) => void): void {
    this.inner.export(
      spans.map((span) => scrubSpan(span, this.redaction)),
      resultCallback,
    );
  }

  shutdown(): Promise<void> {
    return this.inner.shutdown();
  }

  forceFlush(): Promise<void> {
    return this.inner.forceFlush?.() ?? Promise.resolve();
  }
}
