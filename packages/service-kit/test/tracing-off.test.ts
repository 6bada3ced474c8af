import { describe, expect, it } from 'vitest';
import {
  type ActiveSpanAccess,
  activeTraceIds,
  annotateActiveSpan,
  annotateActiveTrace,
  inClientSpan,
  isTracingOn,
  startTracingWhenConfigured,
} from '../src/index.js';
import { installActiveSpanAccess } from '../src/tracing/active-span.js';

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
    expect(() => annotateActiveSpan('oauth.client_id', 'web')).not.toThrow();
    expect(() => annotateActiveTrace('interaction.id', 'abc')).not.toThrow();
    // A client span off: the operation runs, its attributes are never built.
    let built = false;
    const result = await inClientSpan(
      'ldap.bind',
      () => {
        built = true;
        return {};
      },
      async () => 'done',
    );
    expect(result).toBe('done');
    expect(built).toBe(false);
  });

  it('annotating takes a name and a value (nothing to build at the call site) and returns at once while tracing is off', () => {
    const annotated: unknown[][] = [];
    const recording: ActiveSpanAccess = {
      ids: () => undefined,
      setAttribute: (...call) => annotated.push(call),
      setTraceAttribute: (...call) => annotated.push(call),
      inClientSpan: (_name, _attributes, operation) => operation({ setAttribute() {} }),
    };
    try {
      installActiveSpanAccess(recording);
      annotateActiveSpan('oauth.grant_type', 'refresh_token');
      expect(annotated).toEqual([['oauth.grant_type', 'refresh_token']]);

      installActiveSpanAccess(undefined);
      annotateActiveSpan('oauth.client_id', 'web');
      expect(annotated).toHaveLength(1);
      expect(annotateActiveSpan.length).toBe(2);
    } finally {
      installActiveSpanAccess(undefined);
    }
  });
});
