import type { FastifyInstance, LightMyRequestResponse } from 'fastify';

/**
 * A minimal cookie-keeping "browser" over `app.inject`, for driving the sign-in pages by plain
 * HTTP the way a person's browser would: it stores Set-Cookie, sends cookies back, reads forms.
 */
export class TestBrowser {
  readonly cookies = new Map<string, string>();
  /** Path of the last request, i.e. where a page's `<form method="post">` without action posts. */
  lastUrl = '/';

  /**
   * `remoteAddress`: the client IP the server sees (per-IP rate limits); default 127.0.0.1.
   * `userAgent`: the User-Agent header sent; default light-my-request's own.
   * `acceptLanguage`: the Accept-Language header sent; default none.
   */
  constructor(
    private readonly app: FastifyInstance,
    private readonly options: { remoteAddress?: string; userAgent?: string; acceptLanguage?: string } = {},
  ) {}

  async get(url: string): Promise<LightMyRequestResponse> {
    return this.send('GET', url);
  }

  async post(url: string, fields: Record<string, string>): Promise<LightMyRequestResponse> {
    return this.send('POST', url, new URLSearchParams(fields).toString());
  }

  /** Follows same-server redirects (relative Location) with GET until a page or an external redirect. */
  async follow(response: LightMyRequestResponse, maxHops = 5): Promise<LightMyRequestResponse> {
    let current = response;
    for (let hop = 0; hop < maxHops; hop++) {
      const location = current.headers.location;
      if (typeof location !== 'string' || !location.startsWith('/')) return current;
      current = await this.get(location);
    }
    return current;
  }

  private async send(method: 'GET' | 'POST', url: string, body?: string) {
    this.lastUrl = toPath(url);
    const cookie = [...this.cookies].map(([name, value]) => `${name}=${value}`).join('; ');
    const response = await this.app.inject({
      method,
      url: toPath(url),
      headers: {
        ...(cookie ? { cookie } : {}),
        ...(this.options.userAgent ? { 'user-agent': this.options.userAgent } : {}),
        ...(this.options.acceptLanguage ? { 'accept-language': this.options.acceptLanguage } : {}),
        ...(body !== undefined ? { 'content-type': 'application/x-www-form-urlencoded' } : {}),
      },
      ...(body !== undefined ? { payload: body } : {}),
      ...(this.options.remoteAddress ? { remoteAddress: this.options.remoteAddress } : {}),
    });
    for (const set of response.cookies) {
      const expired =
        set.value === '' ||
        set.maxAge === 0 ||
        (set.expires !== undefined && set.expires.getTime() <= Date.now());
      if (expired) this.cookies.delete(set.name);
      else this.cookies.set(set.name, set.value);
    }
    return response;
  }
}

function toPath(url: string): string {
  if (url.startsWith('/')) return url;
  const parsed = new URL(url);
  return `${parsed.pathname}${parsed.search}`;
}

const decodeEntities = (text: string) =>
  text
    .replace(/&quot;/g, '"')
    .replace(/&#39;/g, "'")
    .replace(/&#96;/g, '`')
    .replace(/&lt;/g, '<')
    .replace(/&gt;/g, '>')
    .replace(/&amp;/g, '&');

/** Every `<input type="hidden">` of the page, name → value, as a browser would submit them. */
export function hiddenFields(page: string): Record<string, string> {
  const fields: Record<string, string> = {};
  for (const match of page.matchAll(/<input type="hidden" name="([^"]*)" value="([^"]*)">/g)) {
    fields[decodeEntities(match[1] ?? '')] = decodeEntities(match[2] ?? '');
  }
  return fields;
}

/** The `action` of the page's form, if any. */
export function formAction(page: string): string | undefined {
  const match = /<form[^>]*\saction="([^"]*)"/.exec(page);
  return match ? decodeEntities(match[1] ?? '') : undefined;
}

export function locationOf(response: LightMyRequestResponse): URL {
  const location = response.headers.location;
  if (typeof location !== 'string') throw new Error(`no Location header (status ${response.statusCode})`);
  return new URL(location, 'https://issuer.example.test');
}

/**
 * OIDC RP-Initiated Logout §2: without an id_token_hint of the current session the OP asks first.
 * Checks that `response` is that confirmation page, then answers it as the user would (the page's
 * hidden fields plus `confirm=yes`) and returns what the server sends next.
 */
export async function confirmLogout(
  browser: TestBrowser,
  response: LightMyRequestResponse,
): Promise<LightMyRequestResponse> {
  if (response.statusCode !== 200 || !response.body.includes('name="confirm" value="yes"')) {
    throw new Error(
      `expected the logout confirmation page, got ${response.statusCode}: ${response.body.slice(0, 200)}`,
    );
  }
  return browser.post('/logout', { ...hiddenFields(response.body), confirm: 'yes' });
}
