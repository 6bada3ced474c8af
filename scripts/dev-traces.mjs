#!/usr/bin/env node
// A local trace viewer for `pnpm dev` (docs/development.md, "Traces"): an OTLP/HTTP receiver on
// http://127.0.0.1:4318 (TRACES_PORT) that writes one file per trace, <data folder>/traces/
// <trace id>.jsonl (one span per line), and prints one line per request span. Start it, then
// `OTEL_EXPORTER_OTLP_ENDPOINT=http://127.0.0.1:4318 pnpm dev`. Nothing to install: it accepts
// the JSON encoding the apps export (OTLP specification, "OTLP/HTTP").
import { appendFileSync, mkdirSync } from 'node:fs';
import { createServer } from 'node:http';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { gunzipSync } from 'node:zlib';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const dataDir = process.env.DEV_DATA_DIR
  ? resolve(process.env.INIT_CWD ?? process.cwd(), process.env.DEV_DATA_DIR)
  : join(root, '.data');
const tracesDir = join(dataDir, 'traces');
const PORT = Number(process.env.TRACES_PORT || 4318);
const SERVER = 2;

/** OTLP `AnyValue` → a plain value. */
function plain(value = {}) {
  if ('stringValue' in value) return value.stringValue;
  if ('intValue' in value) return Number(value.intValue);
  if ('doubleValue' in value) return value.doubleValue;
  if ('boolValue' in value) return value.boolValue;
  if (value.arrayValue) return (value.arrayValue.values ?? []).map(plain);
  return JSON.stringify(value);
}
const attributesOf = (list = []) => Object.fromEntries(list.map(({ key, value }) => [key, plain(value)]));

/** Every span of an export request, flattened with its service name and duration. */
function spansOf(body) {
  return (body.resourceSpans ?? []).flatMap((resourceSpans) => {
    const service = attributesOf(resourceSpans.resource?.attributes)['service.name'] ?? '';
    return (resourceSpans.scopeSpans ?? []).flatMap((scope) =>
      (scope.spans ?? []).map((span) => ({
        service,
        traceId: span.traceId,
        spanId: span.spanId,
        parentSpanId: span.parentSpanId || undefined,
        name: span.name,
        kind: span.kind,
        start: new Date(Number(BigInt(span.startTimeUnixNano) / 1_000_000n)).toISOString(),
        durationMs: Number(BigInt(span.endTimeUnixNano) - BigInt(span.startTimeUnixNano)) / 1e6,
        attributes: attributesOf(span.attributes),
      })),
    );
  });
}

function record(span) {
  appendFileSync(join(tracesDir, `${span.traceId}.jsonl`), `${JSON.stringify(span)}\n`);
  if (span.kind !== SERVER) return;
  const status = span.attributes['http.response.status_code'] ?? '';
  const interaction = span.attributes['interaction.id'];
  process.stdout.write(
    `${span.service.padEnd(12)} ${span.name} ${status} ${span.durationMs.toFixed(1)} ms  trace ${span.traceId}` +
      `${interaction ? `  interaction ${interaction}` : ''}\n`,
  );
}

mkdirSync(tracesDir, { recursive: true });
const server = createServer((request, response) => {
  const chunks = [];
  request.on('data', (chunk) => chunks.push(chunk));
  request.on('end', () => {
    try {
      if (request.method !== 'POST' || request.url !== '/v1/traces') throw new Error('not a trace export');
      const raw = Buffer.concat(chunks);
      const text = (request.headers['content-encoding'] === 'gzip' ? gunzipSync(raw) : raw).toString('utf8');
      for (const span of spansOf(JSON.parse(text))) record(span);
      response.writeHead(200, { 'content-type': 'application/json' }).end('{}');
    } catch (error) {
      process.stderr.write(`[dev:traces] refused ${request.method} ${request.url}: ${error.message}\n`);
      response.writeHead(400).end();
    }
  });
});
server.listen(PORT, '127.0.0.1', () => {
  const folder = tracesDir.startsWith(`${root}/`) ? relative(root, tracesDir) : tracesDir;
  process.stdout.write(
    `[dev:traces] receiving OTLP/HTTP traces on http://127.0.0.1:${PORT} (one file per trace in ${folder}/).\n` +
      `[dev:traces] Start pnpm dev with OTEL_EXPORTER_OTLP_ENDPOINT=http://127.0.0.1:${PORT}. Ctrl+C stops.\n`,
  );
});
for (const signal of ['SIGINT', 'SIGTERM']) process.on(signal, () => server.close(() => process.exit(0)));
