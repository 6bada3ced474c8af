import type { FastifyRequest } from 'fastify';
import fp from 'fastify-plugin';
import { InvalidCharactersError } from '../errors.js';

/** C0 controls and DEL (tab is legal inside header values, RFC 9110 §5.5). */
// biome-ignore lint/suspicious/noControlCharactersInRegex: finding control characters is the point.
const CONTROL = /[\u0000-\u001F\u007F]/;
// biome-ignore lint/suspicious/noControlCharactersInRegex: finding control characters is the point.
const HEADER_CONTROL = /[\u0000-\u0008\u000A-\u001F\u007F]/;
/** Header bytes are Latin-1 on the wire; a code point above U+00FF can only be a forged value. */
const BEYOND_LATIN1 = /[^\t -\u00FF]/;
/** A UTF-16 surrogate without its pair: not a Unicode scalar value, not encodable as UTF-8. */
const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;
/** Deeper JSON than any body here has is left to the schema; this bounds the walk. */
const MAX_BODY_DEPTH = 8;

const isClean = (value: string, control: RegExp = CONTROL) =>
  !control.test(value) && !LONE_SURROGATE.test(value);

/** Percent-decodes strictly: invalid UTF-8 (an encoded surrogate, a cut sequence) is `undefined`. */
function decodeStrictly(encoded: string): string | undefined {
  try {
    return decodeURIComponent(encoded);
  } catch {
    return undefined;
  }
}

function isCleanEncoded(encoded: string): boolean {
  const decoded = decodeStrictly(encoded);
  return decoded !== undefined && isClean(decoded);
}

/** Path segments and every query name and value, decoded as the routes and the parsers will. */
function checkUrl(url: string): void {
  const queryStart = url.indexOf('?');
  const path = queryStart === -1 ? url : url.slice(0, queryStart);
  if (!path.split('/').every(isCleanEncoded)) throw new InvalidCharactersError('path');
  if (queryStart === -1) return;
  const parts = url
    .slice(queryStart + 1)
    .replace(/\+/g, ' ')
    .split(/[&=]/);
  if (!parts.every(isCleanEncoded)) throw new InvalidCharactersError('query');
}

function checkHeaders(request: FastifyRequest): void {
  for (const value of Object.values(request.headers)) {
    const values = Array.isArray(value) ? value : value === undefined ? [] : [value];
    if (!values.every((item) => isClean(item, HEADER_CONTROL) && !BEYOND_LATIN1.test(item))) {
      throw new InvalidCharactersError('header');
    }
  }
}

/**
 * `@fastify/formbody`'s parser for this app: like URLSearchParams, but a name or value that is not
 * valid percent-encoded UTF-8 is a 400 instead of silently becoming U+FFFD.
 */
export function parseFormStrictly(body: string): Record<string, string | string[]> {
  if (
    !body
      .replace(/\+/g, ' ')
      .split(/[&=]/)
      .every((part) => decodeStrictly(part) !== undefined)
  ) {
    throw new InvalidCharactersError('body');
  }
  const fields: Record<string, string | string[]> = {};
  for (const [name, value] of new URLSearchParams(body)) {
    const previous = fields[name];
    fields[name] =
      previous === undefined ? value : [...(Array.isArray(previous) ? previous : [previous]), value];
  }
  return fields;
}

/** Every string (names included) of a parsed form or JSON body. */
function isCleanValue(value: unknown, depth: number): boolean {
  if (typeof value === 'string') return isClean(value);
  if (value === null || typeof value !== 'object' || depth > MAX_BODY_DEPTH) return true;
  if (Array.isArray(value)) return value.every((item) => isCleanValue(item, depth + 1));
  return Object.entries(value).every(([name, item]) => isClean(name) && isCleanValue(item, depth + 1));
}

/**
 * One guard for the whole app: the URL and headers in `onRequest`, before any
 * route hook or handler; parsed bodies (forms, JSON) in `preValidation`, before the schema and the
 * handler. A control character, invalid UTF-8 or a lone surrogate anywhere is 400 with the usual
 * `{statusCode, message}` body, never a 5xx from the database or a broken page.
 */
export const inputGuardPlugin = fp(
  async (app) => {
    app.addHook('onRequest', async (request) => {
      checkUrl(request.url);
      checkHeaders(request);
    });
    app.addHook('preValidation', async (request) => {
      if (!isCleanValue(request.body, 0)) throw new InvalidCharactersError('body');
    });
  },
  { name: 'input-guard', dependencies: ['error-handler'], fastify: '5.x' },
);
