/**
 * A browser reduced to what the protocol tests need, over plain HTTP (fetch): it keeps cookies,
 * follows redirects one at a time (so a test can send the next step to another instance), reads
 * forms and sends back every hidden field, as CONTRACT.md "Pages a person uses" promises.
 *
 * Cookies are kept by name for the one host every process listens on (127.0.0.1): browsers do not
 * separate cookies by port, which is what lets one browser carry a session to a second instance.
 */
export interface HttpPage {
  url: URL;
  status: number;
  headers: Headers;
  /** The absolute redirect target, or null. */
  location: URL | null;
  body: string;
}

export interface PageForm {
  action: URL;
  /** Hidden inputs, as the page holds them. */
  hidden: Record<string, string>;
  /** Names of every input (to tell the login form from the others). */
  inputs: Set<string>;
  /** `name=value` of each submit button. */
  buttons: Array<{ name: string; value: string }>;
}

const decodeEntities = (text: string) =>
  text
    .replace(/&quot;/g, '"')
    .replace(/&#39;/g, "'")
    .replace(/&#x27;/g, "'")
    .replace(/&#96;/g, '`')
    .replace(/&lt;/g, '<')
    .replace(/&gt;/g, '>')
    .replace(/&amp;/g, '&');

function attributes(tag: string): Map<string, string> {
  const found = new Map<string, string>();
  for (const match of tag.matchAll(/([a-zA-Z_:-]+)(?:="([^"]*)")?/g)) {
    found.set((match[1] ?? '').toLowerCase(), decodeEntities(match[2] ?? ''));
  }
  return found;
}

/** The first `<form method="post">` of a page (posting back to the page's URL without `action`). */
export function formOf(page: HttpPage): PageForm {
  const match = /<form\b([^>]*)>([\s\S]*?)<\/form>/i.exec(page.body);
  if (!match) throw new Error(`no form on ${page.url} (HTTP ${page.status}): ${page.body.slice(0, 300)}`);
  const formAttributes = attributes(match[1] ?? '');
  const form: PageForm = {
    action: new URL(formAttributes.get('action') || page.url.href, page.url),
    hidden: {},
    inputs: new Set(),
    buttons: [],
  };
  for (const tag of (match[2] ?? '').matchAll(/<(input|button)\b([^>]*)>/gi)) {
    const attrs = attributes(tag[2] ?? '');
    const name = attrs.get('name');
    if (!name) continue;
    const type = (
      attrs.get('type') ?? (tag[1]?.toLowerCase() === 'button' ? 'submit' : 'text')
    ).toLowerCase();
    if (type === 'submit') form.buttons.push({ name, value: attrs.get('value') ?? '' });
    else {
      form.inputs.add(name);
      if (type === 'hidden') form.hidden[name] = attrs.get('value') ?? '';
    }
  }
  return form;
}

export class HttpBrowser {
  readonly cookies = new Map<string, string>();
  /** Every cookie value any response ever set (for "no cookie value in the logs" checks). */
  readonly cookieValuesSeen = new Set<string>();

  async get(url: string | URL): Promise<HttpPage> {
    return this.send(new URL(url), { method: 'GET' });
  }

  async post(url: string | URL, fields: Record<string, string>): Promise<HttpPage> {
    return this.send(new URL(url), {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams(fields).toString(),
    });
  }

  /** Submits the page's form with every hidden field plus `fields`, to `action` (or `to`, another instance). */
  async submit(page: HttpPage, fields: Record<string, string>, to?: (action: URL) => URL): Promise<HttpPage> {
    const form = formOf(page);
    return this.post(to ? to(form.action) : form.action, { ...form.hidden, ...fields });
  }

  /**
   * Follows redirects with GET while `keepGoing(target)` holds (default: always), up to 10 hops.
   * `rewrite` may send a hop to another instance (same path, other port).
   */
  async follow(
    page: HttpPage,
    options: { keepGoing?: (target: URL) => boolean; rewrite?: (target: URL) => URL } = {},
  ): Promise<HttpPage> {
    let current = page;
    for (let hop = 0; hop < 10; hop++) {
      if (current.location === null || !(options.keepGoing?.(current.location) ?? true)) return current;
      current = await this.get(options.rewrite ? options.rewrite(current.location) : current.location);
    }
    throw new Error(`too many redirects from ${page.url}`);
  }

  cookie(name: string): string | undefined {
    return this.cookies.get(name);
  }

  private async send(url: URL, init: RequestInit): Promise<HttpPage> {
    const headers = new Headers(init.headers);
    if (this.cookies.size > 0) {
      headers.set('cookie', [...this.cookies].map(([name, value]) => `${name}=${value}`).join('; '));
    }
    const response = await fetch(url, {
      ...init,
      headers,
      redirect: 'manual',
      signal: AbortSignal.timeout(20_000),
    });
    for (const line of response.headers.getSetCookie()) {
      const [pair = '', ...attributeParts] = line.split(';');
      const separator = pair.indexOf('=');
      const name = pair.slice(0, separator).trim();
      const value = pair.slice(separator + 1).trim();
      const expired = attributeParts.some((part) => {
        const [key = '', attributeValue = ''] = part.trim().split('=');
        return (
          (key.toLowerCase() === 'max-age' && Number(attributeValue) <= 0) ||
          (key.toLowerCase() === 'expires' && new Date(attributeValue).getTime() <= Date.now())
        );
      });
      if (expired || value === '') this.cookies.delete(name);
      else {
        this.cookies.set(name, value);
        this.cookieValuesSeen.add(value);
      }
    }
    const location = response.headers.get('location');
    return {
      url,
      status: response.status,
      headers: response.headers,
      location: location ? new URL(location, url) : null,
      body: await response.text(),
    };
  }
}

/** The same URL on another origin (another instance of the same service). */
export function onOrigin(target: URL, origin: string): URL {
  return new URL(`${target.pathname}${target.search}`, origin);
}
