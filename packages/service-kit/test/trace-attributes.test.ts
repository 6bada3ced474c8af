import { context, type Span, trace } from '@opentelemetry/api';
import { InMemorySpanExporter, SimpleSpanProcessor, TracerProvider } from '@opentelemetry/sdk-trace';
import { describe, expect, it } from 'vitest';
import { TraceAttributesSpanProcessor } from '../src/tracing/trace-attributes.js';

/** A provider whose spans go through the processor under test into memory. */
function recordingTracer() {
  const exported = new InMemorySpanExporter();
  const processor = new TraceAttributesSpanProcessor(new SimpleSpanProcessor({ exporter: exported }));
  const tracer = new TracerProvider({ spanProcessors: [processor] }).getTracer('test');
  const childOf = (parent: Span, name: string) =>
    tracer.startSpan(name, {}, trace.setSpan(context.active(), parent));
  return { tracer, processor, exported, childOf };
}

describe('trace-wide attributes (interaction.id on every span of a request)', () => {
  it('a span ended before the attribute was set carries it too: spans wait for the request span', async () => {
    const { tracer, processor, exported, childOf } = recordingTracer();
    const request = tracer.startSpan('GET /authorize');
    const clientLookup = childOf(request, 'pg.query');
    clientLookup.end();
    // Held back while the request is open.
    await processor.forceFlush();
    expect(exported.getFinishedSpans()).toEqual([]);

    processor.setTraceAttribute(request.spanContext().traceId, 'interaction.id', 'i-123');
    const afterwards = childOf(request, 'pg.query:INSERT');
    afterwards.end();
    request.end();

    await processor.forceFlush();
    const spans = exported.getFinishedSpans();
    expect(spans.map((span) => span.name)).toEqual(['pg.query', 'pg.query:INSERT', 'GET /authorize']);
    for (const span of spans) expect(span.attributes['interaction.id']).toBe('i-123');
  });

  it('another trace is left alone, and a trace without the attribute passes unchanged', async () => {
    const { tracer, processor, exported } = recordingTracer();
    const tagged = tracer.startSpan('POST /interaction/:id/login');
    const other = tracer.startSpan('GET /health/live');
    processor.setTraceAttribute(tagged.spanContext().traceId, 'interaction.id', 'i-456');
    other.end();
    tagged.end();
    await processor.forceFlush();
    const byName = Object.fromEntries(
      exported.getFinishedSpans().map((span) => [span.name, span.attributes]),
    );
    expect(byName['POST /interaction/:id/login']).toEqual({ 'interaction.id': 'i-456' });
    expect(byName['GET /health/live']).toEqual({});
  });

  it('a request span that never ends holds its trace only until too many are open', async () => {
    const { tracer, exported, childOf } = recordingTracer();
    const leaked = tracer.startSpan('leaked request');
    childOf(leaked, 'pg.query').end();
    for (let open = 0; open < 10_000; open++) tracer.startSpan(`open request ${open}`);
    await new Promise((done) => setImmediate(done));
    expect(exported.getFinishedSpans().map((span) => span.name)).toEqual(['pg.query']);
  });
});
