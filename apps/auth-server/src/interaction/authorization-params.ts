/**
 * The query (GET) or form body (POST) of /authorize as oauth-core's `validateAuthorizationRequest`
 * takes it: string values, arrays for repeated names (which it rejects, RFC 6749 §3.1). Anything
 * else a parser might produce is dropped.
 */
export function authorizationParamsFrom(source: unknown): Record<string, string | string[]> {
  const params: Record<string, string | string[]> = {};
  if (source === null || typeof source !== 'object') return params;
  for (const [name, value] of Object.entries(source as Record<string, unknown>)) {
    if (typeof value === 'string') params[name] = value;
    else if (Array.isArray(value))
      params[name] = value.filter((item): item is string => typeof item === 'string');
  }
  return params;
}

/**
 * Turns the parsed query string (GET) or form body (POST) of /authorize into single-valued
 * parameters. Fastify's parsers give an array for a repeated name; RFC 6749 §3.1 says request
 * and response parameters "MUST NOT be included more than once", so repeated names are reported
 * (the route answers `invalid_request`) instead of picking one silently. RFC 8707 §2 `resource`
 * is the one parameter that may repeat.
 */
export interface CollectedAuthorizationParams {
  /** Each parameter that appeared exactly once with a non-empty value. */
  params: Record<string, string>;
  /** Names that appeared more than once (never `resource`). */
  repeated: string[];
  resources: string[];
}

export function collectAuthorizationParams(source: unknown): CollectedAuthorizationParams {
  const params: Record<string, string> = {};
  const repeated: string[] = [];
  const resources: string[] = [];
  if (source === null || typeof source !== 'object') return { params, repeated, resources };

  for (const [name, raw] of Object.entries(source as Record<string, unknown>)) {
    const values = (Array.isArray(raw) ? raw : [raw]).filter(
      (value): value is string => typeof value === 'string',
    );
    if (name === 'resource') {
      resources.push(...values.filter((value) => value !== ''));
      continue;
    }
    if (values.length > 1) {
      repeated.push(name);
      continue;
    }
    // RFC 6749 §3.1: "Parameters sent without a value MUST be treated as if they were omitted."
    const [value] = values;
    if (value !== undefined && value !== '') params[name] = value;
  }
  return { params, repeated, resources };
}
