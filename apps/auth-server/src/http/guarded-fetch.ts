import { lookup as dnsLookup } from 'node:dns';
import { request as httpRequest, type IncomingMessage } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { BlockList, isIP, type LookupFunction } from 'node:net';

/**
 * Fetches a JSON document a client named (a Client ID Metadata Document, a `jwks_uri`) without
 * letting the client point the server at its own network (server-side request forgery, RFC 9700
 * §4.11 and draft-ietf-oauth-client-id-metadata-document §6): HTTPS only; loopback, private and
 * link-local addresses refused unless the URL's origin is trusted (the seed lists it), checked on
 * the address actually connected to (the resolver below both checks and answers, so a second DNS
 * answer cannot swap it); redirects only within the same origin; a size and a time limit.
 */

export interface GuardedFetchOptions {
  /** Origins that may be plain `http` (loopback only) and may resolve to non-public addresses. */
  trustedOrigins: readonly string[];
  maxBytes: number;
  timeoutMs: number;
  /** The resolver (default: the system's, `dns.lookup`); tests give DNS answers of their own. */
  resolve?: Resolver;
}

export type Resolver = (hostname: string) => Promise<readonly { address: string; family: number }[]>;

const systemResolver: Resolver = (hostname) =>
  new Promise((resolve, reject) => {
    dnsLookup(hostname, { all: true }, (error, addresses) => (error ? reject(error) : resolve(addresses)));
  });

export class GuardedFetchError extends Error {
  constructor(
    readonly reason:
      | 'scheme'
      | 'address'
      | 'redirect'
      | 'too_large'
      | 'timeout'
      | 'status'
      | 'not_json'
      | 'network',
    message: string,
  ) {
    super(message);
    this.name = 'GuardedFetchError';
  }
}

export interface FetchedDocument {
  body: unknown;
  /** Seconds the answer may be reused (Cache-Control max-age / no-store), before any bound. */
  maxAgeSeconds: number;
}

const MAX_REDIRECTS = 3;

/**
 * RFC 6890 special-purpose ranges a public document never lives at: this host, private networks,
 * carrier-grade NAT, link-local (cloud metadata services at 169.254.169.254), multicast, and their
 * IPv6 counterparts (IPv4-mapped addresses are checked as IPv4).
 */
const NON_PUBLIC = new BlockList();
for (const [network, prefix] of [
  ['0.0.0.0', 8],
  ['10.0.0.0', 8],
  ['100.64.0.0', 10],
  ['127.0.0.0', 8],
  ['169.254.0.0', 16],
  ['172.16.0.0', 12],
  ['192.0.0.0', 24],
  ['192.168.0.0', 16],
  ['198.18.0.0', 15],
  ['224.0.0.0', 3],
] as const) {
  NON_PUBLIC.addSubnet(network, prefix, 'ipv4');
}
for (const [network, prefix] of [
  ['::', 127],
  ['fc00::', 7],
  ['fe80::', 10],
  ['ff00::', 8],
  ['64:ff9b::', 96],
] as const) {
  NON_PUBLIC.addSubnet(network, prefix, 'ipv6');
}

export function isPublicAddress(address: string): boolean {
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address)?.[1];
  if (mapped !== undefined) return isPublicAddress(mapped);
  const family = isIP(address);
  if (family === 0) return false;
  return !NON_PUBLIC.check(address, family === 4 ? 'ipv4' : 'ipv6');
}

/** A resolver that answers only with addresses the guard accepts: the connection uses what it checked. */
function guardedLookup(trusted: boolean, resolve: Resolver): LookupFunction {
  return (hostname, options, callback) => {
    resolve(hostname).then(
      (addresses) => {
        const usable = addresses.filter((entry) => trusted || isPublicAddress(entry.address));
        const first = usable[0];
        if (first === undefined) {
          return callback(
            new GuardedFetchError('address', `${hostname} resolves to no public address`),
            '',
            4,
          );
        }
        if ((options as { all?: boolean }).all) {
          return (callback as unknown as (error: null, all: typeof usable) => void)(null, usable);
        }
        return callback(null, first.address, first.family);
      },
      (error: NodeJS.ErrnoException) => callback(error, '', 4),
    );
  };
}

function checkTarget(url: URL, options: GuardedFetchOptions): boolean {
  const trusted = options.trustedOrigins.includes(url.origin);
  if (url.protocol !== 'https:' && !(url.protocol === 'http:' && trusted)) {
    throw new GuardedFetchError('scheme', `${url.origin} is not https (nor a trusted http origin)`);
  }
  // An IP literal is never looked up: check it here.
  const literal = url.hostname.replace(/^\[|\]$/g, '');
  if (isIP(literal) !== 0 && !trusted && !isPublicAddress(literal)) {
    throw new GuardedFetchError('address', `${url.hostname} is not a public address`);
  }
  return trusted;
}

/** How a body is read: JSON documents, or a JWT (an RFC 9101 §5.2 request object) as text. */
interface BodyFormat {
  accept: string;
  decode(text: string): unknown;
}

const JSON_FORMAT: BodyFormat = {
  accept: 'application/json',
  decode(text) {
    try {
      return JSON.parse(text);
    } catch {
      throw new GuardedFetchError('not_json', 'the document is not JSON');
    }
  },
};

/** RFC 9101 §10.2 media type of request objects; OIDC Core §6.2 servers often answer application/jwt. */
const JWT_FORMAT: BodyFormat = {
  accept: 'application/oauth-authz-req+jwt, application/jwt, */*;q=0.5',
  decode: (text) => text,
};

/** GETs `target` as JSON under the guards; same-origin redirects followed, up to three. */
export function guardedFetchJson(target: string, options: GuardedFetchOptions): Promise<FetchedDocument> {
  return guardedFetch(target, options, JSON_FORMAT);
}

/** GETs `target` as text (a request object by reference, RFC 9101 §5.2) under the same guards. */
export async function guardedFetchText(target: string, options: GuardedFetchOptions): Promise<string> {
  return String((await guardedFetch(target, options, JWT_FORMAT)).body);
}

async function guardedFetch(
  target: string,
  options: GuardedFetchOptions,
  format: BodyFormat,
): Promise<FetchedDocument> {
  let url = new URL(target);
  const deadline = Date.now() + options.timeoutMs;
  for (let hop = 0; hop <= MAX_REDIRECTS; hop++) {
    const response = await getOnce(url, options, deadline, format);
    if (response.redirect === undefined) return response.document;
    const next = new URL(response.redirect, url);
    // draft-ietf-oauth-client-id-metadata-document §6: a redirect elsewhere could lead the server
    // anywhere; only the same origin is followed.
    if (next.origin !== url.origin)
      throw new GuardedFetchError('redirect', `redirected to another origin (${next.origin})`);
    url = next;
  }
  throw new GuardedFetchError('redirect', 'too many redirects');
}

interface OneResponse {
  redirect?: string;
  document: FetchedDocument;
}

function getOnce(
  url: URL,
  options: GuardedFetchOptions,
  deadline: number,
  format: BodyFormat,
): Promise<OneResponse> {
  const trusted = checkTarget(url, options);
  const send = url.protocol === 'https:' ? httpsRequest : httpRequest;
  return new Promise((resolve, reject) => {
    const request = send(url, {
      method: 'GET',
      headers: { accept: format.accept },
      lookup: guardedLookup(trusted, options.resolve ?? systemResolver),
      timeout: Math.max(1, deadline - Date.now()),
    });
    const timer = setTimeout(
      () => request.destroy(new GuardedFetchError('timeout', 'the document did not arrive in time')),
      Math.max(1, deadline - Date.now()),
    );
    const fail = (error: Error) => {
      clearTimeout(timer);
      reject(error instanceof GuardedFetchError ? error : new GuardedFetchError('network', error.message));
    };
    request.on('error', fail);
    request.on('response', (response) => {
      readResponse(response, options.maxBytes, format).then(
        (result) => {
          clearTimeout(timer);
          resolve(result);
        },
        (error: Error) => {
          request.destroy();
          fail(error);
        },
      );
    });
    request.end();
  });
}

async function readResponse(
  response: IncomingMessage,
  maxBytes: number,
  format: BodyFormat,
): Promise<OneResponse> {
  const status = response.statusCode ?? 0;
  if (status >= 300 && status < 400 && typeof response.headers.location === 'string') {
    response.resume();
    return { redirect: response.headers.location, document: { body: null, maxAgeSeconds: 0 } };
  }
  if (status !== 200) {
    response.resume();
    throw new GuardedFetchError('status', `answered HTTP ${status}`);
  }
  if (Number(response.headers['content-length'] ?? 0) > maxBytes) {
    throw new GuardedFetchError('too_large', `larger than ${maxBytes} bytes`);
  }
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of response) {
    size += (chunk as Buffer).length;
    if (size > maxBytes) throw new GuardedFetchError('too_large', `larger than ${maxBytes} bytes`);
    chunks.push(chunk as Buffer);
  }
  const body = format.decode(Buffer.concat(chunks).toString('utf8'));
  return { document: { body, maxAgeSeconds: cacheLifetime(response.headers['cache-control']) } };
}

/** RFC 9111 §5.2.2: `no-store` and `no-cache` mean no reuse; otherwise `max-age`, else 0. */
function cacheLifetime(cacheControl: string | undefined): number {
  if (cacheControl === undefined || /(^|,)\s*(no-store|no-cache)\b/i.test(cacheControl)) return 0;
  const maxAge = /(^|,)\s*max-age\s*=\s*(\d+)/i.exec(cacheControl)?.[2];
  return maxAge === undefined ? 0 : Number(maxAge);
}
