import type { FastifyRequest } from 'fastify';

/**
 * Query parameters whose value may be logged: a local return path. Every other value is replaced,
 * because a query string can carry anything a caller puts there (an `id_token_hint` with a name and
 * an e-mail, a `client_secret`, a `code`, `state`, `nonce`, a token…), and a list of names to hide
 * would miss the next one (an allow-list, not a deny-list).
 */
const LOGGABLE_QUERY_PARAMETERS = new Set(['returnUrl']);

export const REDACTED = '[Redacted]';

/**
 * The request URL as it may appear in a log line: the path as sent, each query value replaced by
 * `[Redacted]` unless its name is on the allow-list. The names stay, so a log still tells which
 * parameters a request carried.
 */
export function redactUrl(url: string): string {
  const queryStart = url.indexOf('?');
  if (queryStart === -1) return url;
  const path = url.slice(0, queryStart);
  const pairs = url
    .slice(queryStart + 1)
    .split('&')
    .filter((pair) => pair !== '')
    .map((pair) => {
      const separator = pair.indexOf('=');
      const name = separator === -1 ? pair : pair.slice(0, separator);
      if (separator === -1) return name;
      return isLoggable(name) ? pair : `${name}=${REDACTED}`;
    });
  return `${path}?${pairs.join('&')}`;
}

function isLoggable(encodedName: string): boolean {
  try {
    return LOGGABLE_QUERY_PARAMETERS.has(decodeURIComponent(encodedName));
  } catch {
    return false;
  }
}

/**
 * pino's `req` serializer: method, redacted URL, host and address; no headers at all (they carry
 * `Authorization`, `DPoP` proofs, cookies and API keys, and an allow-list of "safe" headers buys
 * little an access log needs). The request id is on every line already.
 */
export function serializeRequest(request: FastifyRequest) {
  return {
    method: request.method,
    url: redactUrl(request.url),
    host: request.host,
    remoteAddress: request.ip,
  };
}

/**
 * pino's `err` serializer: name, message, code, stack and the cause chain, nothing else. pino's
 * standard one copies every enumerable member, and Drizzle's query errors carry the bound `params`
 * (e-mail addresses, session ids), also appended to their message, which is cut here.
 */
export interface SerializedError {
  [key: string]: unknown;
  type: string;
  message: string;
  stack: string;
}

export function serializeError(error: Error, depth = 0): SerializedError {
  const serialized: SerializedError = {
    type: error.name,
    message: error.message.replace(/\nparams: [\s\S]*$/, `\nparams: ${REDACTED}`),
    stack: (error.stack ?? '').replace(/\nparams: [\s\S]*?(\n\s+at )/, `\nparams: ${REDACTED}$1`),
  };
  const code = (error as { code?: unknown }).code;
  if (typeof code === 'string' || typeof code === 'number') serialized.code = code;
  const { cause } = error;
  if (cause !== undefined && depth < 5) {
    serialized.cause = cause instanceof Error ? serializeError(cause, depth + 1) : { message: String(cause) };
  }
  return serialized;
}
