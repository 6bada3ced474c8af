import { parse as parseQueryString } from 'fast-querystring';
import type { FastifyRequest } from 'fastify';
import fp from 'fastify-plugin';

/**
 * Text from the network is checked once, before any route, page or SQL statement sees it: path
 * parameters, query values (and their raw percent-encoding), headers, cookies and form or JSON
 * bodies. A control character, a lone surrogate or percent-encoded bytes that are not UTF-8 →
 * 400 with the answering area's usual error body (RFC 6749 §5.2 JSON at the protocol endpoints, the
 * error page in the browser area), because PostgreSQL refuses NUL and such text has no meaning in
 * any OAuth parameter (RFC 6749 Appendix A: every parameter is printable characters). Without this
 * `GET /interaction/%00/login` reached PostgreSQL and answered 500.
 */

/** C0 controls (tab, CR and LF included: no parameter or form field here spans lines), DEL, C1. */
// biome-ignore lint/suspicious/noControlCharactersInRegex: finding them is this regex's purpose
const CONTROL_CHARACTER = /[\u0000-\u001F\u007F-\u009F]/;
/** A high surrogate not followed by a low one, or a low one not preceded by a high one. */
const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;
/** Header values are Latin-1 strings: bytes 0x80–0x9F of UTF-8 text are normal there. */
// biome-ignore lint/suspicious/noControlCharactersInRegex: finding them is this regex's purpose
const HEADER_CONTROL_CHARACTER = /[\u0000-\u0008\u000A-\u001F\u007F]/;

/** The 400 both error handlers map to their area's body (`statusCode` is what they read). */
export class UnsafeRequestTextError extends Error {
  readonly statusCode = 400;
  readonly code = 'ERR_UNSAFE_REQUEST_TEXT';
  constructor(where: string) {
    super(`${where} holds a control character, a lone surrogate or bytes that are not UTF-8`);
    this.name = 'UnsafeRequestTextError';
  }
}

/** Whether a decoded string is safe to show and store. */
export function isSafeText(value: string): boolean {
  return !CONTROL_CHARACTER.test(value) && !LONE_SURROGATE.test(value);
}

/**
 * Whether the `%XX` sequences of a raw query or form string decode to UTF-8. A `%` that starts no
 * escape stays literal (the parsers keep it as it is), so only real escapes are judged.
 */
export function isUtf8PercentEncoding(raw: string): boolean {
  // Most requests carry no escape at all: nothing to decode (a hot-path saving).
  if (!raw.includes('%')) return true;
  try {
    decodeURIComponent(raw.replace(/%(?![0-9A-Fa-f]{2})/g, '%25'));
    return true;
  } catch {
    return false;
  }
}

/** The first unsafe place in a parsed value (names included), or `null`. */
export function findUnsafeText(value: unknown, where: string, depth = 0): string | null {
  if (typeof value === 'string') return isSafeText(value) ? null : where;
  if (value === null || typeof value !== 'object' || depth > 8) return null;
  for (const [name, item] of Object.entries(value)) {
    if (!isSafeText(name)) return `${where} name`;
    const found = findUnsafeText(item, `${where}.${name.slice(0, 40)}`, depth + 1);
    if (found !== null) return found;
  }
  return null;
}

function findUnsafeHeader(request: FastifyRequest): string | null {
  // rawHeaders is [name, value, name, value, …] as received: every value, repeated ones included,
  // without building the entries of the parsed headers object on every request.
  const raw = request.raw.rawHeaders;
  for (let index = 1; index < raw.length; index += 2) {
    if (HEADER_CONTROL_CHARACTER.test(raw[index] as string)) return `header ${raw[index - 1]?.toLowerCase()}`;
  }
  // Cookie values are percent-decoded before the session and CSRF checks read them.
  const cookie = request.headers.cookie ?? '';
  for (const pair of cookie.split(';')) {
    const value = pair.slice(pair.indexOf('=') + 1).trim();
    if (!isUtf8PercentEncoding(value) || !isSafeText(safeDecode(value))) return 'cookie';
  }
  return null;
}

function safeDecode(value: string): string {
  return decodeURIComponent(value.replace(/%(?![0-9A-Fa-f]{2})/g, '%25'));
}

/** URL and headers: everything known before the body is read. */
export function findUnsafeRequestHead(request: FastifyRequest): string | null {
  const rawQuery = request.url.includes('?') ? request.url.slice(request.url.indexOf('?') + 1) : '';
  if (!isUtf8PercentEncoding(rawQuery)) return 'query';
  return (
    findUnsafeText(request.params, 'path') ??
    findUnsafeText(request.query, 'query') ??
    findUnsafeHeader(request)
  );
}

/**
 * The `application/x-www-form-urlencoded` parser for @fastify/formbody: refuses escapes that are
 * not UTF-8 (which the parser would otherwise keep as literal `%FF` text), then parses as usual.
 */
export function parseFormBody(body: string): Record<string, unknown> {
  if (!isUtf8PercentEncoding(body) || body.includes('\uFFFD')) {
    // U+FFFD in the raw text: the body held raw bytes that are not UTF-8.
    throw new UnsafeRequestTextError('body');
  }
  return parseQueryString(body);
}

export const requestTextGuardPlugin = fp(
  async (app) => {
    // Callback hooks: these run on every request and do no I/O, so no promise is made for them.
    // onRequest: before any route hook reads the session cookie or a parameter.
    app.addHook('onRequest', (request, _reply, done) => {
      const unsafe = findUnsafeRequestHead(request);
      done(unsafe === null ? undefined : new UnsafeRequestTextError(unsafe));
    });
    // preValidation: the parsed body, before any schema, handler or SQL statement sees it.
    app.addHook('preValidation', (request, _reply, done) => {
      const unsafe = findUnsafeText(request.body, 'body');
      done(unsafe === null ? undefined : new UnsafeRequestTextError(unsafe));
    });
  },
  { name: 'request-text-guard', fastify: '5.x' },
);
