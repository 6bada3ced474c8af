/**
 * A browser reduced to what a sign-in through the gateway needs: requests over node:https trusting
 * the CA of the gateway's certificate, manual redirects, and a cookie jar per host name (like a
 * browser: ports share cookies, hosts do not) that keeps every Set-Cookie for attribute checks.
 */
import { request as httpRequest, type IncomingHttpHeaders } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { isIP } from 'node:net';

export interface GatewayResponse {
  url: URL;
  status: number;
  headers: IncomingHttpHeaders;
  body: string;
  /** The Set-Cookie headers of this response. */
  setCookies: string[];
  location(): URL | undefined;
}

export interface SetCookie {
  host: string;
  name: string;
  value: string;
  attributes: string[];
  raw: string;
}

export class GatewayBrowser {
  /** host name → cookie name → value */
  readonly #jar = new Map<string, Map<string, string>>();
  /** Every cookie received, in order. */
  readonly received: SetCookie[] = [];
  /** Every cookie sent, as `host: name`. */
  readonly sent: string[] = [];

  constructor(private readonly ca: string) {}

  async request(
    url: string | URL,
    init: { method?: string; form?: Record<string, string>; headers?: Record<string, string> } = {},
  ): Promise<GatewayResponse> {
    const target = new URL(url);
    const headers: Record<string, string> = { ...init.headers };
    const cookies = this.#jar.get(target.hostname);
    if (cookies && cookies.size > 0) {
      headers.cookie = [...cookies].map(([name, value]) => `${name}=${value}`).join('; ');
      for (const name of cookies.keys()) this.sent.push(`${target.hostname}: ${name}`);
    }
    let body: string | undefined;
    if (init.form) {
      body = new URLSearchParams(init.form).toString();
      headers['content-type'] = 'application/x-www-form-urlencoded';
      headers['content-length'] = String(Buffer.byteLength(body));
    }
    const send = target.protocol === 'https:' ? httpsRequest : httpRequest;
    const response = await new Promise<{ status: number; headers: IncomingHttpHeaders; body: string }>(
      (resolveResponse, reject) => {
        const req = send(
          target,
          {
            method: init.method ?? 'GET',
            headers,
            ca: this.ca,
            // SNI and the certificate check follow the URL, even when a test sends another Host.
            ...(isIP(target.hostname) ? {} : { servername: target.hostname }),
            // One connection per request, closed after it: nothing lingers at teardown.
            agent: false,
            timeout: 10_000,
          },
          (res) => {
            const chunks: Buffer[] = [];
            res.on('data', (chunk: Buffer) => chunks.push(chunk));
            res.on('end', () =>
              resolveResponse({
                status: res.statusCode ?? 0,
                headers: res.headers,
                body: Buffer.concat(chunks).toString('utf8'),
              }),
            );
            res.on('error', reject);
          },
        );
        req.on('timeout', () => req.destroy(new Error(`timeout: ${init.method ?? 'GET'} ${target}`)));
        req.on('error', reject);
        req.end(body);
      },
    );
    const setCookies = response.headers['set-cookie'] ?? [];
    for (const raw of setCookies) this.#store(target.hostname, raw);
    return {
      url: target,
      ...response,
      setCookies,
      location: () => {
        const location = response.headers.location;
        return location === undefined ? undefined : new URL(location, target);
      },
    };
  }

  /** Follows redirects (as GET) until an answer that is not one; returns every hop's response. */
  async follow(url: string | URL): Promise<GatewayResponse[]> {
    const hops: GatewayResponse[] = [];
    let current: URL | undefined = new URL(url);
    while (current) {
      if (hops.length === 10) throw new Error('too many redirects');
      const response = await this.request(current);
      hops.push(response);
      current = response.status >= 300 && response.status < 400 ? response.location() : undefined;
    }
    return hops;
  }

  cookie(host: string, name: string): string | undefined {
    return this.#jar.get(host)?.get(name);
  }

  cookieNames(host: string): string[] {
    return [...(this.#jar.get(host)?.keys() ?? [])];
  }

  #store(host: string, raw: string): void {
    const [pair = '', ...attributes] = raw.split(';').map((part) => part.trim());
    const index = pair.indexOf('=');
    const name = pair.slice(0, index);
    const value = pair.slice(index + 1);
    this.received.push({ host, name, value, attributes, raw });
    const cookies = this.#jar.get(host) ?? new Map<string, string>();
    this.#jar.set(host, cookies);
    const expired = attributes.some((a) => /^max-age=0$/i.test(a) || /^expires=.*1970/i.test(a));
    if (value === '' || expired) cookies.delete(name);
    else cookies.set(name, value);
  }
}

const ENTITIES: Record<string, string> = {
  '&amp;': '&',
  '&lt;': '<',
  '&gt;': '>',
  '&quot;': '"',
  '&#39;': "'",
};
const unescapeHtml = (value: string) =>
  value.replace(/&(amp|lt|gt|quot|#39);/g, (entity) => ENTITIES[entity]!);

export interface PostForm {
  action: string | undefined;
  /** Hidden inputs, to be sent back as they are. */
  hidden: Record<string, string>;
  /** Names of every input. */
  inputs: string[];
}

/** The first `<form method="post">` of a page. */
export function readPostForm(page: string): PostForm {
  const form = /<form\b[^>]*method="post"[^>]*>([\s\S]*?)<\/form>/i.exec(page);
  if (!form) throw new Error(`no post form in the page:\n${page.slice(0, 2000)}`);
  const openingTag = form[0].slice(0, form[0].indexOf('>') + 1);
  const action = /\baction="([^"]*)"/i.exec(openingTag)?.[1];
  const hidden: Record<string, string> = {};
  const inputs: string[] = [];
  for (const match of form[1]!.matchAll(/<input\b[^>]*>/gi)) {
    const name = /\bname="([^"]*)"/i.exec(match[0])?.[1];
    if (!name) continue;
    inputs.push(name);
    if (/\btype="hidden"/i.test(match[0]))
      hidden[name] = unescapeHtml(/\bvalue="([^"]*)"/i.exec(match[0])?.[1] ?? '');
  }
  return { action: action === undefined ? undefined : unescapeHtml(action), hidden, inputs };
}
