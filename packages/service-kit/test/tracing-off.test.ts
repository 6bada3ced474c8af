import { describe, expect, it } from 'vitest';
import { activeTraceIds, annotateActiveSpan, isTracingOn, startTracingWhenConfigured } from '../src/index.js';

describe('tracing without OTEL_EXPORTER_OTLP_ENDPOINT', () => {
  it('starts nothing: no tracing handle, no active-span access, every call a no-op', async () => {
    const tracing = await startTracingWhenConfigured({
      defaultServiceName: 'auth-server',
      env: { OTEL_SERVICE_NAME: 'ignored-without-an-endpoint' },
      redaction: { redactUrl: (url) => url, scrubText: (text) => text },
    });
    expect(tracing).toBeUndefined();
    expect(isTracingOn()).toBe(false);
    expect(activeTraceIds()).toBeUndefined();
    expect(() => annotateActiveSpan({ 'oauth.client_id': 'web' })).not.toThrow();
  });
});
