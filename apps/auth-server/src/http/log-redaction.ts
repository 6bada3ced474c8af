import type { FastifyRequest } from 'fastify';

/**
 * What keeps tokens, secrets and personal data out of every log line, at every level: request
 * URLs are logged with the values of sensitive parameters replaced, and every logged error and
 * string is scrubbed of `name=value` pairs of those parameters and of anything shaped like a JWT
 * (an `id_token_hint` is a whole ID token with the user's name and e-mail). Bodies and headers are
 * never logged (the request serializer keeps neither).
 */

/** Parameters whose values are credentials, tokens, codes or personal data (RFC 6749, 7636, 8628, 8693, 9126, OIDC). */
export const SENSITIVE_PARAMETERS: ReadonlySet<string> = new Set([
  'access_token',
  'actor_token',
  'assertion',
  'client_assertion',
  'client_secret',
  'code',
  'code_verifier',
  'csrf',
  'device_code',
  'id_token',
  'id_token_hint',
  'login_hint',
  'logout_token',
  'nonce',
  'otp',
  'password',
  'recovery_code',
  'refresh_token',
  'request',
  'request_uri',
  'state',
  'subject_token',
  'token',
  'user_code',
  'username',
]);

const REDACTED = '[redacted]';
const NAMES = [...SENSITIVE_PARAMETERS].join('|');
/** `name=value` in a query, a form or free text; the value ends at a separator or quote. */
const PAIR = new RegExp(`(^|[?&;,\\s"'(])(${NAMES})=([^&\\s"',;)]*)`, 'gi');
/** Three base64url parts, the first a JSON object (`eyJ`): a JWS, whoever wrote it into the text. */
const JWT = /eyJ[A-Za-z0-9_-]*\.[A-Za-z0-9_-]*\.[A-Za-z0-9_-]*/g;

/** Replaces sensitive `name=value` pairs and JWTs in free text. */
export function scrubText(text: string): string {
  return text.replace(PAIR, `$1$2=${REDACTED}`).replace(JWT, REDACTED);
}

/** The URL as logged: path as is, each sensitive query value replaced (names kept, for debugging). */
export function redactUrl(url: string): string {
  const queryStart = url.indexOf('?');
  if (queryStart === -1) return scrubText(url);
  const pairs = url
    .slice(queryStart + 1)
    .split('&')
    .map((pair) => {
      const equals = pair.indexOf('=');
      const rawName = equals === -1 ? pair : pair.slice(0, equals);
      return SENSITIVE_PARAMETERS.has(decodeName(rawName).toLowerCase()) ? `${rawName}=${REDACTED}` : pair;
    });
  return scrubText(`${url.slice(0, queryStart)}?${pairs.join('&')}`);
}

function decodeName(raw: string): string {
  try {
    return decodeURIComponent(raw.replace(/\+/g, ' '));
  } catch {
    return raw;
  }
}

/** Fastify's request serializer, with the URL redacted. */
export function serializeRequest(request: FastifyRequest): unknown {
  // Anything else logged under `req` (not a request object) is scrubbed like any other value.
  if (request === null || typeof request !== 'object' || typeof request.url !== 'string') {
    return scrubValue(request);
  }
  return {
    method: request.method,
    url: redactUrl(request.url),
    host: request.host,
    remoteAddress: request.ip,
    remotePort: request.socket?.remotePort,
  };
}

/** Errors: type, code, status, and scrubbed message and stack (a message may quote a URL or token). */
export function serializeError(error: unknown): unknown {
  if (!(error instanceof Error)) return scrubValue(error);
  const withCode = error as Error & { code?: unknown; statusCode?: unknown; status?: unknown };
  return {
    type: error.name,
    message: scrubText(error.message),
    stack: error.stack === undefined ? undefined : scrubText(error.stack),
    ...(withCode.code !== undefined ? { code: withCode.code } : {}),
    ...(withCode.statusCode !== undefined ? { statusCode: withCode.statusCode } : {}),
    ...(withCode.status !== undefined ? { status: withCode.status } : {}),
    ...(error.cause !== undefined ? { cause: serializeError(error.cause) } : {}),
  };
}

/** Every string inside a logged object, scrubbed (depth-limited; errors via `serializeError`). */
export function scrubValue(value: unknown, depth = 0): unknown {
  if (typeof value === 'string') return scrubText(value);
  if (value instanceof Error) return serializeError(value);
  if (value === null || typeof value !== 'object' || depth > 6) return value;
  if (Array.isArray(value)) return value.map((item) => scrubValue(item, depth + 1));
  // Class instances (a request, a reply) are left to their serializer, which runs after this.
  const prototype = Object.getPrototypeOf(value);
  if (prototype !== Object.prototype && prototype !== null) return value;
  const result: Record<string, unknown> = {};
  for (const [key, item] of Object.entries(value)) {
    result[key] = SENSITIVE_PARAMETERS.has(key.toLowerCase()) ? REDACTED : scrubValue(item, depth + 1);
  }
  return result;
}
