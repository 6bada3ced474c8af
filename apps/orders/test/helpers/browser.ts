/**
 * A browser reduced to what sign-in needs: a cookie jar (per host, like a browser: ports share
 * cookies), manual redirects, HTML forms read with a regular expression. Requests can carry extra
 * headers (X-CSRF, forwarded headers).
 */
export class TestBrowser {
  readonly #cookies = new Map<string, string>();
  /** Every Set-Cookie header received, in order, for attribute checks. */
  readonly setCookieHeaders: string[] = [];

  async request(
    url: string | URL,
    init: {
      method?: string;
      form?: Record<string, string>;
      json?: unknown;
      headers?: Record<string, string>;
    } = {},
  ): Promise<Response> {
    const headers: Record<string, string> = { ...init.headers };
    const cookie = this.cookieHeader();
    if (cookie) headers.cookie = cookie;
    let body: string | undefined;
    if (init.form) {
      headers['content-type'] = 'application/x-www-form-urlencoded';
      body = new URLSearchParams(init.form).toString();
    } else if (init.json !== undefined) {
      headers['content-type'] = 'application/json';
      body = JSON.stringify(init.json);
    }
    const response = await fetch(url, { method: init.method ?? 'GET', redirect: 'manual', headers, body });
    for (const header of response.headers.getSetCookie()) {
      this.setCookieHeaders.push(header);
      const [pair = ''] = header.split(';');
      const index = pair.indexOf('=');
      const name = pair.slice(0, index);
      const value = pair.slice(index + 1);
      if (value === '' || /max-age=0|expires=thu, 01 jan 1970/i.test(header)) this.#cookies.delete(name);
      else this.#cookies.set(name, value);
    }
    return response;
  }

  /** Follows GET redirects from `url` until a non-redirect answer. */
  async follow(
    url: string | URL,
    headers: Record<string, string> = {},
  ): Promise<{ response: Response; url: URL }> {
    let current = new URL(url);
    for (let hops = 0; hops < 10; hops++) {
      const response = await this.request(current, { headers });
      const location = response.headers.get('location');
      if (response.status < 300 || response.status >= 400 || !location) return { response, url: current };
      current = new URL(location, current);
    }
    throw new Error('too many redirects');
  }

  cookie(name: string): string | undefined {
    return this.#cookies.get(name);
  }

  deleteCookie(name: string): void {
    this.#cookies.delete(name);
  }

  setCookie(name: string, value: string): void {
    this.#cookies.set(name, value);
  }

  cookieNames(): string[] {
    return [...this.#cookies.keys()];
  }

  cookieHeader(): string {
    return [...this.#cookies].map(([name, value]) => `${name}=${value}`).join('; ');
  }
}

const ENTITIES: Record<string, string> = {
  '&amp;': '&',
  '&lt;': '<',
  '&gt;': '>',
  '&quot;': '"',
  '&#39;': "'",
};

function unescapeHtml(value: string): string {
  return value.replace(/&(amp|lt|gt|quot|#39);/g, (entity) => ENTITIES[entity]!);
}

export interface HtmlForm {
  action: string | undefined;
  /** The hidden inputs, to be sent back as they are. */
  hidden: Record<string, string>;
  /** Names of every input. */
  inputs: string[];
}

/** The first `<form method="post">` of a page. */
export function readPostForm(page: string): HtmlForm {
  const form = /<form\b[^>]*method="post"[^>]*>([\s\S]*?)<\/form>/i.exec(page);
  if (!form) throw new Error(`no post form in the page:\n${page.slice(0, 2000)}`);
  const action = /\baction="([^"]*)"/i.exec(form[0].slice(0, form[0].indexOf('>') + 1))?.[1];
  const hidden: Record<string, string> = {};
  const inputs: string[] = [];
  for (const match of form[1]!.matchAll(/<input\b[^>]*>/gi)) {
    const tag = match[0];
    const name = /\bname="([^"]*)"/i.exec(tag)?.[1];
    if (!name) continue;
    inputs.push(name);
    if (/\btype="hidden"/i.test(tag)) hidden[name] = unescapeHtml(/\bvalue="([^"]*)"/i.exec(tag)?.[1] ?? '');
  }
  return { action: action === undefined ? undefined : unescapeHtml(action), hidden, inputs };
}
