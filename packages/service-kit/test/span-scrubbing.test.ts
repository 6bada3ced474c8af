import { InMemorySpanExporter, SimpleSpanProcessor, TracerProvider } from '@opentelemetry/sdk-trace';
import { describe, expect, it } from 'vitest';
import { ScrubbingSpanExporter, type SpanRedaction } from '../src/tracing/span-scrubbing.js';

/** A redaction in the shape the apps pass: every query value replaced, `secret=` pairs in text. */
const redaction: SpanRedaction = {
  redactUrl: (url) => url.replace(/=([^&]*)/g, '=[redacted]'),
  scrubText: (text) => text.replace(/secret=\S+/g, 'secret=[redacted]'),
};

async function exportThroughScrubber(record: (tracer: ReturnType<TracerProvider['getTracer']>) => void) {
  const memory = new InMemorySpanExporter();
  const provider = new TracerProvider({
    spanProcessors: [new SimpleSpanProcessor({ exporter: new ScrubbingSpanExporter(memory, redaction) })],
  });
  record(provider.getTracer('test'));
  await provider.forceFlush();
  return memory.getFinishedSpans();
}

describe('ScrubbingSpanExporter', () => {
  it('replaces query values in URL attributes and scrubs every other string', async () => {
    const [span] = await exportThroughScrubber((tracer) => {
      const span = tracer.startSpan('GET /authorize');
      span.setAttributes({
        'url.path': '/authorize?client_id=web&state=s3cr3t-state',
        'url.full': 'http://localhost/logout?id_token_hint=eyJhbGciOi.x.y',
        'http.route': '/authorize',
        'http.response.status_code': 302,
        note: 'the client sent secret=hunter2',
      });
      span.end();
    });
    expect(span?.attributes).toEqual({
      'url.path': '/authorize?client_id=[redacted]&state=[redacted]',
      'url.full': 'http://localhost/logout?id_token_hint=[redacted]',
      'http.route': '/authorize',
      'http.response.status_code': 302,
      note: 'the client sent secret=[redacted]',
    });
    // The exported span is still the span: same ids, name and times.
    expect(span?.name).toBe('GET /authorize');
    expect(span?.spanContext().traceId).toMatch(/^[0-9a-f]{32}$/);
  });

  it('keeps only the type of an exception and drops error status messages (they can quote values)', async () => {
    const [span] = await exportThroughScrubber((tracer) => {
      const span = tracer.startSpan('pg.query:SELECT');
      const error = new Error('invalid input syntax for type uuid: "alice@example.com"');
      span.recordException(error);
      span.setStatus({ code: 2, message: error.message });
      span.end();
    });
    expect(span?.events).toHaveLength(1);
    expect(span?.events[0]?.attributes).toEqual({ 'exception.type': 'Error' });
    expect(span?.status).toEqual({ code: 2 });
    expect(JSON.stringify(span?.attributes)).not.toContain('alice@example.com');
  });
});
