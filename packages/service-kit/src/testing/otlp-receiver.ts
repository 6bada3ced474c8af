import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { gunzipSync } from 'node:zlib';

/**
 * A real OTLP/HTTP trace receiver on a free loopback port: it accepts `POST /v1/traces` in the
 * JSON encoding (OTLP spec, "OTLP/HTTP": ids as hex strings), answers 200 with an empty
 * `ExportTraceServiceResponse`, and keeps every span it decoded, with its service name.
 */
export interface ReceivedSpan {
  service: string;
  traceId: string;
  spanId: string;
  parentSpanId: string;
  name: string;
  /** 1 internal, 2 server, 3 client (OTLP `SpanKind`). */
  kind: number;
  attributes: Record<string, unknown>;
  /** Every string the exporter sent for this span: attribute values, event attributes, status. */
  strings: string[];
}

export interface OtlpReceiver {
  /** For OTEL_EXPORTER_OTLP_ENDPOINT (the exporter appends `/v1/traces`). */
  endpoint: string;
  spans: ReceivedSpan[];
  /** Requests that were not a decodable trace export (should stay empty). */
  rejected: string[];
  close(): Promise<void>;
}

interface OtlpAttribute {
  key: string;
  value: Record<string, unknown>;
}

interface OtlpSpan {
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  name: string;
  kind: number;
  attributes?: OtlpAttribute[];
  events?: Array<{ name: string; attributes?: OtlpAttribute[] }>;
  status?: { message?: string };
}

interface OtlpExport {
  resourceSpans?: Array<{
    resource?: { attributes?: OtlpAttribute[] };
    scopeSpans?: Array<{ spans?: OtlpSpan[] }>;
  }>;
}

/** `AnyValue` → a plain value (strings, numbers, booleans, arrays). */
function anyValue(value: Record<string, unknown>): unknown {
  if ('stringValue' in value) return value.stringValue;
  if ('intValue' in value) return Number(value.intValue);
  if ('doubleValue' in value) return value.doubleValue;
  if ('boolValue' in value) return value.boolValue;
  const array = value.arrayValue as { values?: Array<Record<string, unknown>> } | undefined;
  if (array) return (array.values ?? []).map(anyValue);
  return JSON.stringify(value);
}

function attributeMap(attributes: OtlpAttribute[] = []): Record<string, unknown> {
  return Object.fromEntries(attributes.map((attribute) => [attribute.key, anyValue(attribute.value)]));
}

function stringsOf(span: OtlpSpan): string[] {
  const values = [
    span.name,
    ...Object.values(attributeMap(span.attributes)),
    ...(span.events ?? []).flatMap((event) => [event.name, ...Object.values(attributeMap(event.attributes))]),
    span.status?.message ?? '',
  ];
  return values.flat().map((value) => String(value));
}

function decode(body: OtlpExport): ReceivedSpan[] {
  return (body.resourceSpans ?? []).flatMap((resourceSpans) => {
    const service = String(attributeMap(resourceSpans.resource?.attributes)['service.name'] ?? '');
    return (resourceSpans.scopeSpans ?? []).flatMap((scope) =>
      (scope.spans ?? []).map((span) => ({
        service,
        traceId: span.traceId,
        spanId: span.spanId,
        parentSpanId: span.parentSpanId ?? '',
        name: span.name,
        kind: span.kind,
        attributes: attributeMap(span.attributes),
        strings: stringsOf(span),
      })),
    );
  });
}

export async function startOtlpReceiver(): Promise<OtlpReceiver> {
  const spans: ReceivedSpan[] = [];
  const rejected: string[] = [];
  const server: Server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      try {
        if (request.method !== 'POST' || request.url !== '/v1/traces')
          throw new Error(`${request.method} ${request.url}`);
        const raw = Buffer.concat(chunks);
        const text = (request.headers['content-encoding'] === 'gzip' ? gunzipSync(raw) : raw).toString(
          'utf8',
        );
        if (!String(request.headers['content-type']).startsWith('application/json')) {
          throw new Error(`content-type ${request.headers['content-type']}`);
        }
        spans.push(...decode(JSON.parse(text) as OtlpExport));
        response.writeHead(200, { 'content-type': 'application/json' }).end('{}');
      } catch (error) {
        rejected.push((error as Error).message);
        response.writeHead(400).end();
      }
    });
  });
  await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
  const { port } = server.address() as AddressInfo;
  return {
    endpoint: `http://127.0.0.1:${port}`,
    spans,
    rejected,
    close: () => new Promise((done) => server.close(() => done())),
  };
}
