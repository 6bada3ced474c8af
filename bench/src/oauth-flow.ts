/**
 * The authorization-code flow driven by plain HTTP, as a person's browser would drive it
 * (CONTRACT.md "Pages a person uses"): /authorize → login form → (consent) → redirect with a code.
 * Used before the timed runs to pre-issue codes, refresh-token chains and user access tokens.
 */
import { createHash, randomBytes } from 'node:crypto';

export interface Credentials {
  id: string;
  secret: string;
}

export interface TokenResponse {
  access_token: string;
  token_type: string;
  expires_in?: number;
  refresh_token?: string;
  id_token?: string;
  scope?: string;
}

export interface IssuedCode {
  code: string;
  verifier: string;
}

export interface CodeFlowSettings {
  authorizationEndpoint: string;
  tokenEndpoint: string;
  client: Credentials;
  redirectUri: string;
  scope: string;
  user: { username: string; password: string };
}

/** RFC 6749 §2.3.1: client_id and secret are form-urlencoded before the Basic encoding. */
export function basicAuthorization(credentials: Credentials): string {
  const pair = `${encodeURIComponent(credentials.id)}:${encodeURIComponent(credentials.secret)}`;
  return `Basic ${Buffer.from(pair).toString('base64')}`;
}

/** Headers of a token request authenticated with HTTP Basic (RFC 6749 §2.3.1). */
export function tokenRequestHeaders(credentials: Credentials): Record<string, string> {
  return {
    authorization: basicAuthorization(credentials),
    'content-type': 'application/x-www-form-urlencoded',
    accept: 'application/json',
  };
}

export function newPkce(): { verifier: string; challenge: string } {
  const verifier = randomBytes(32).toString('base64url');
  const challenge = createHash('sha256').update(verifier).digest('base64url');
  return { verifier, challenge };
}

interface StoredCookie {
  value: string;
  path: string;
}

/** Just enough of a cookie jar for one host: name + path, Max-Age/Expires deletions honoured. */
export class CookieJar {
  private readonly cookies = new Map<string, StoredCookie>();

  store(response: Response): void {
    for (const header of response.headers.getSetCookie()) {
      const [pair = '', ...attributes] = header.split(';');
      const equals = pair.indexOf('=');
      if (equals <= 0) continue;
      const name = pair.slice(0, equals).trim();
      const value = pair.slice(equals + 1).trim();
      let path = '/';
      let expired = value === '';
      for (const attribute of attributes) {
        const [rawKey = '', rawValue = ''] = attribute.split('=');
        const key = rawKey.trim().toLowerCase();
        if (key === 'path') path = rawValue.trim() || '/';
        if (key === 'max-age' && Number(rawValue) <= 0) expired = true;
        if (key === 'expires' && Date.parse(rawValue) < Date.now()) expired = true;
      }
      const id = `${name}\u0000${path}`;
      if (expired) this.cookies.delete(id);
      else this.cookies.set(id, { value: `${name}=${value}`, path });
    }
  }

  header(url: URL): string | undefined {
    const matching = [...this.cookies.values()].filter(
      (cookie) =>
        url.pathname === cookie.path ||
        url.pathname.startsWith(cookie.path.endsWith('/') ? cookie.path : `${cookie.path}/`),
    );
    return matching.length > 0 ? matching.map((cookie) => cookie.value).join('; ') : undefined;
  }
}

interface HtmlForm {
  action: string | undefined;
  method: string;
  fields: Map<string, string>;
  /** name=value of each submit button. */
  buttons: { name: string; value: string }[];
  inputNames: Set<string>;
}

const ENTITIES: Record<string, string> = {
  amp: '&',
  lt: '<',
  gt: '>',
  quot: '"',
  apos: "'",
  '#39': "'",
  '#96': '`',
};

function decodeEntities(text: string): string {
  return text.replace(/&(#x[0-9a-f]+|#\d+|[a-z]+|#39|#96);/gi, (match, entity: string) => {
    const lower = entity.toLowerCase();
    if (ENTITIES[lower] !== undefined) return ENTITIES[lower];
    if (lower.startsWith('#x')) return String.fromCodePoint(Number.parseInt(lower.slice(2), 16));
    if (lower.startsWith('#')) return String.fromCodePoint(Number.parseInt(lower.slice(1), 10));
    return match;
  });
}

function attributesOf(tag: string): Map<string, string> {
  const attributes = new Map<string, string>();
  const pattern = /([^\s"'<>/=]+)(?:\s*=\s*(?:"([^"]*)"|'([^']*)'|([^\s"'=<>`]+)))?/g;
  // Skip the tag name itself.
  const inner = tag.replace(/^<\s*[a-z]+/i, '').replace(/\/?>$/, '');
  for (const match of inner.matchAll(pattern)) {
    const name = match[1]?.toLowerCase();
    if (!name) continue;
    attributes.set(name, decodeEntities(match[2] ?? match[3] ?? match[4] ?? ''));
  }
  return attributes;
}

/** The POST forms of a page (regular expressions suffice for the server-rendered pages we drive). */
export function parseForms(page: string): HtmlForm[] {
  const forms: HtmlForm[] = [];
  for (const match of page.matchAll(/<form\b[^>]*>([\s\S]*?)<\/form>/gi)) {
    const formTag = /^<form\b[^>]*>/i.exec(match[0])?.[0] ?? '<form>';
    const formAttributes = attributesOf(formTag);
    const form: HtmlForm = {
      action: formAttributes.get('action'),
      method: (formAttributes.get('method') ?? 'get').toLowerCase(),
      fields: new Map(),
      buttons: [],
      inputNames: new Set(),
    };
    for (const tag of (match[1] ?? '').matchAll(/<(input|button)\b[^>]*>/gi)) {
      const attributes = attributesOf(tag[0]);
      const name = attributes.get('name');
      if (!name) continue;
      const type = (
        attributes.get('type') ?? (tag[1]?.toLowerCase() === 'button' ? 'submit' : 'text')
      ).toLowerCase();
      if (type === 'submit') form.buttons.push({ name, value: attributes.get('value') ?? '' });
      else {
        form.inputNames.add(name);
        if (type === 'hidden') form.fields.set(name, attributes.get('value') ?? '');
      }
    }
    forms.push(form);
  }
  return forms;
}

async function send(jar: CookieJar, url: URL, init: RequestInit = {}): Promise<Response> {
  const headers = new Headers(init.headers);
  const cookie = jar.header(url);
  if (cookie) headers.set('cookie', cookie);
  const response = await fetch(url, {
    ...init,
    headers,
    redirect: 'manual',
    signal: AbortSignal.timeout(15_000),
  });
  jar.store(response);
  return response;
}

/** An authorization code request (PKCE S256) of this flow's client, as a browser is sent to it. */
export function authorizationRequestUrl(
  settings: CodeFlowSettings,
  request: { state: string; nonce: string; codeChallenge: string; extraParameters?: Record<string, string> },
): URL {
  const url = new URL(settings.authorizationEndpoint);
  url.search = new URLSearchParams({
    response_type: 'code',
    client_id: settings.client.id,
    redirect_uri: settings.redirectUri,
    scope: settings.scope,
    state: request.state,
    nonce: request.nonce,
    code_challenge: request.codeChallenge,
    code_challenge_method: 'S256',
    ...request.extraParameters,
  }).toString();
  return url;
}

/**
 * One authorization request through the pages. The jar keeps the single sign-on session, so after
 * the first login the server may answer straight with the code (still the real /authorize path).
 */
export async function authorizeThroughPages(
  settings: CodeFlowSettings,
  jar: CookieJar,
  extraParameters: Record<string, string> = {},
): Promise<IssuedCode> {
  const { verifier, challenge } = newPkce();
  const state = randomBytes(12).toString('base64url');
  const url = authorizationRequestUrl(settings, {
    state,
    nonce: randomBytes(12).toString('base64url'),
    codeChallenge: challenge,
    extraParameters,
  });

  let response = await send(jar, url);
  let current = url;
  const trail: string[] = [`GET ${url.pathname}`];
  for (let step = 0; step < 12; step++) {
    const location = response.headers.get('location');
    if (response.status >= 300 && response.status < 400 && location) {
      await response.arrayBuffer();
      const next = new URL(location, current);
      if (`${next.origin}${next.pathname}` === settings.redirectUri) {
        const error = next.searchParams.get('error');
        if (error)
          throw new Error(
            `authorization failed: ${error} ${next.searchParams.get('error_description') ?? ''}`,
          );
        if (next.searchParams.get('state') !== state)
          throw new Error('authorization response lost the state');
        const code = next.searchParams.get('code');
        if (!code) throw new Error(`redirect without a code: ${location}`);
        return { code, verifier };
      }
      current = next;
      trail.push(`${response.status} → GET ${next.pathname}`);
      response = await send(jar, next);
      continue;
    }

    const page = await response.text();
    if (response.status !== 200) {
      throw new Error(`unexpected HTTP ${response.status} after ${trail.join(', ')}: ${page.slice(0, 300)}`);
    }
    const form = parseForms(page).find((candidate) => candidate.method === 'post');
    if (!form) throw new Error(`no POST form after ${trail.join(', ')}: ${page.slice(0, 300)}`);
    const body = new URLSearchParams([...form.fields]);
    if (form.inputNames.has('username') && form.inputNames.has('password')) {
      body.set('username', settings.user.username);
      body.set('password', settings.user.password);
      trail.push('login');
    } else if (form.buttons.some((button) => button.name === 'decision')) {
      body.set('decision', 'approve');
      trail.push('consent');
    } else {
      throw new Error(`a form that is neither login nor consent after ${trail.join(', ')}`);
    }
    const target = new URL(form.action ?? current.href, current);
    current = target;
    response = await send(jar, target, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: body.toString(),
    });
  }
  throw new Error(`too many steps: ${trail.join(', ')}`);
}

export async function postForm(
  url: string,
  params: Record<string, string>,
  client: Credentials,
): Promise<{ status: number; body: string }> {
  const response = await fetch(url, {
    method: 'POST',
    headers: {
      authorization: basicAuthorization(client),
      'content-type': 'application/x-www-form-urlencoded',
      accept: 'application/json',
    },
    body: new URLSearchParams(params).toString(),
    signal: AbortSignal.timeout(15_000),
  });
  return { status: response.status, body: await response.text() };
}

export async function exchangeCode(settings: CodeFlowSettings, issued: IssuedCode): Promise<TokenResponse> {
  const { status, body } = await postForm(
    settings.tokenEndpoint,
    {
      grant_type: 'authorization_code',
      code: issued.code,
      redirect_uri: settings.redirectUri,
      code_verifier: issued.verifier,
    },
    settings.client,
  );
  if (status !== 200) throw new Error(`code exchange answered ${status}: ${body.slice(0, 300)}`);
  return JSON.parse(body) as TokenResponse;
}

/**
 * Pre-issues `count` codes with `concurrency` parallel browsers, each logging in once and then
 * riding its single sign-on session. Returns them oldest first (they are spent in that order).
 */
export async function issueCodes(
  settings: CodeFlowSettings,
  count: number,
  concurrency = 8,
): Promise<IssuedCode[]> {
  const codes: IssuedCode[] = [];
  let remaining = count;
  const worker = async () => {
    const jar = new CookieJar();
    while (remaining > 0) {
      remaining--;
      codes.push(await authorizeThroughPages(settings, jar));
    }
  };
  await Promise.all(Array.from({ length: Math.min(concurrency, Math.max(count, 1)) }, worker));
  return codes;
}
