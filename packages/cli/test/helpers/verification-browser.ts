/**
 * A person approving a device by plain HTTP (CONTRACT.md "Pages"): a cookie jar, the verification
 * form with `user_code`, the login form, the consent form. Every hidden field and cookie is sent
 * back as a browser would. Only `fetch`, so the test exercises the real server like a browser does.
 */
export interface ApprovalOptions {
  username: string;
  password: string;
  decision: 'approve' | 'deny';
}

export interface ApprovalResult {
  /** The last page's status and HTML (the "Device connected" / "Access denied" page). */
  status: number;
  body: string;
}

export class VerificationBrowser {
  private readonly cookies = new Map<string, string>();

  async approve(
    verificationUri: string,
    userCode: string,
    options: ApprovalOptions,
  ): Promise<ApprovalResult> {
    const codePage = await this.request('GET', verificationUri);
    let response = await this.submit(codePage, { user_code: userCode });
    // Login (unless an SSO session exists), then consent: follow the redirects the server sends.
    for (let step = 0; step < 6; step++) {
      if (response.status === 303 || response.status === 302) {
        response = await this.request('GET', new URL(response.headers.get('location')!, response.url).href);
        continue;
      }
      const body = await response.clone().text();
      if (body.includes('name="password"')) {
        response = await this.submit(response, { username: options.username, password: options.password });
      } else if (body.includes('name="decision"')) {
        response = await this.submit(response, { decision: options.decision });
      } else {
        return { status: response.status, body };
      }
    }
    throw new Error('too many steps approving the device');
  }

  /** Submits the page's `<form method="post">` (no action: it posts back to the page's URL). */
  private async submit(page: Response, fields: Record<string, string>): Promise<Response> {
    const body = await page.text();
    if (!/<form method="post"/.test(body))
      throw new Error(`no form on ${page.url} (${page.status}):\n${body}`);
    return this.request('POST', page.url, { ...hiddenFields(body), ...fields });
  }

  private async request(
    method: 'GET' | 'POST',
    url: string,
    fields?: Record<string, string>,
  ): Promise<Response> {
    const headers: Record<string, string> = {};
    if (this.cookies.size > 0) {
      headers.cookie = [...this.cookies].map(([name, value]) => `${name}=${value}`).join('; ');
    }
    if (fields) headers['content-type'] = 'application/x-www-form-urlencoded';
    const response = await fetch(url, {
      method,
      headers,
      redirect: 'manual',
      ...(fields ? { body: new URLSearchParams(fields).toString() } : {}),
    });
    for (const setCookie of response.headers.getSetCookie()) {
      const [pair] = setCookie.split(';');
      const separator = pair!.indexOf('=');
      const name = pair!.slice(0, separator).trim();
      const value = pair!.slice(separator + 1).trim();
      if (value === '' || /max-age=0/i.test(setCookie)) this.cookies.delete(name);
      else this.cookies.set(name, value);
    }
    // `fetch` leaves `url` empty on some manual-redirect responses; remember where we were.
    Object.defineProperty(response, 'url', { value: url });
    return response;
  }
}

const decodeEntities = (text: string) =>
  text
    .replace(/&quot;/g, '"')
    .replace(/&#39;/g, "'")
    .replace(/&#96;/g, '`')
    .replace(/&lt;/g, '<')
    .replace(/&gt;/g, '>')
    .replace(/&amp;/g, '&');

function hiddenFields(page: string): Record<string, string> {
  const fields: Record<string, string> = {};
  for (const match of page.matchAll(/<input type="hidden" name="([^"]*)" value="([^"]*)">/g)) {
    fields[decodeEntities(match[1] ?? '')] = decodeEntities(match[2] ?? '');
  }
  return fields;
}
