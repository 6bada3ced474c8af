/**
 * A browser over a real listener: `fetch` with a cookie jar that keeps what `Set-Cookie` sets and
 * drops what it expires, never following redirects (each test follows them as a browser would).
 */
export class FetchBrowser {
  private readonly cookies = new Map<string, string>();

  async request(url: string | URL, init: { method?: string; form?: Record<string, string> } = {}) {
    const response = await fetch(url, {
      method: init.method ?? 'GET',
      redirect: 'manual',
      headers: {
        cookie: [...this.cookies].map(([name, value]) => `${name}=${value}`).join('; '),
        ...(init.form ? { 'content-type': 'application/x-www-form-urlencoded' } : {}),
      },
      ...(init.form ? { body: new URLSearchParams(init.form).toString() } : {}),
    });
    for (const header of response.headers.getSetCookie()) {
      const [pair = ''] = header.split(';');
      const index = pair.indexOf('=');
      const name = pair.slice(0, index);
      const value = pair.slice(index + 1);
      if (value === '' || /max-age=0|expires=thu, 01 jan 1970/i.test(header)) this.cookies.delete(name);
      else this.cookies.set(name, value);
    }
    return response;
  }

  /** Forgets the cookies whose names start with `prefix` (e.g. another site's session on the same host). */
  forgetCookies(prefix: string) {
    for (const name of [...this.cookies.keys()]) if (name.startsWith(prefix)) this.cookies.delete(name);
  }

  hasCookie(name: string) {
    return this.cookies.has(name);
  }
}
