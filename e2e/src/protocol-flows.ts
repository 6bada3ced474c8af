import { createHash, randomBytes } from 'node:crypto';
import { formOf, type HttpBrowser, type HttpPage, onOrigin } from './http-browser.js';
import { basicAuthorization, DEVICE_GRANT, postForm } from './instances.js';

/**
 * The user journeys of the reliability suites, driven over plain HTTP with `HttpBrowser`. Each
 * step names the instance it goes to, so a journey can start on one instance and finish on another.
 */

export function pkcePair() {
  const verifier = randomBytes(32).toString('base64url');
  return { verifier, challenge: createHash('sha256').update(verifier).digest('base64url') };
}

export interface Credentials {
  username: string;
  password: string;
}

/** Fills the login form when the page is one; approves when it is a consent page. */
async function answerPage(
  browser: HttpBrowser,
  page: HttpPage,
  user: Credentials,
  at: string,
): Promise<HttpPage> {
  const form = formOf(page);
  const to = (action: URL) => onOrigin(action, at);
  if (form.inputs.has('username') && form.inputs.has('password')) {
    return browser.submit(page, { username: user.username, password: user.password }, to);
  }
  if (form.buttons.some((button) => button.name === 'decision')) {
    return browser.submit(page, { decision: 'approve' }, to);
  }
  throw new Error(`neither a login nor a consent form at ${page.url}: ${page.body.slice(0, 300)}`);
}

/**
 * An authorization code for a confidential client with a query-mode redirect URI: /authorize and
 * the pages on `authorizeAt` (then `loginAt`, default the same instance), the code read from the
 * redirect to `redirectUri`.
 */
export async function authorizationCode(
  browser: HttpBrowser,
  options: {
    authorizeAt: string;
    loginAt?: string;
    clientId: string;
    redirectUri: string;
    scope: string;
    user: Credentials;
  },
): Promise<{ code: string; verifier: string }> {
  const { verifier, challenge } = pkcePair();
  const state = randomBytes(8).toString('base64url');
  const query = new URLSearchParams({
    response_type: 'code',
    client_id: options.clientId,
    redirect_uri: options.redirectUri,
    scope: options.scope,
    state,
    code_challenge: challenge,
    code_challenge_method: 'S256',
  });
  const pagesAt = options.loginAt ?? options.authorizeAt;
  const isClientRedirect = (target: URL) => target.href.startsWith(options.redirectUri);
  let page = await browser.follow(await browser.get(`${options.authorizeAt}/authorize?${query}`), {
    keepGoing: (target) => !isClientRedirect(target),
    rewrite: (target) => onOrigin(target, pagesAt),
  });
  for (let step = 0; step < 4 && !(page.location && isClientRedirect(page.location)); step++) {
    page = await browser.follow(await answerPage(browser, page, options.user, pagesAt), {
      keepGoing: (target) => !isClientRedirect(target),
      rewrite: (target) => onOrigin(target, pagesAt),
    });
  }
  const location = page.location;
  if (!location || !isClientRedirect(location))
    throw new Error(`no redirect to the client: ${page.status} ${page.body.slice(0, 300)}`);
  if (location.searchParams.get('state') !== state) throw new Error('the redirect lost the state');
  const code = location.searchParams.get('code');
  if (!code) throw new Error(`redirect without a code: ${location.href}`);
  return { code, verifier };
}

/** Code → tokens at `tokenAt`. */
export async function redeemCode(
  tokenAt: string,
  client: { id: string; secret: string },
  code: { code: string; verifier: string },
  redirectUri: string,
) {
  return postForm(
    `${tokenAt}/token`,
    {
      grant_type: 'authorization_code',
      code: code.code,
      redirect_uri: redirectUri,
      code_verifier: code.verifier,
    },
    basicAuthorization(client.id, client.secret),
  );
}

export async function refresh(tokenAt: string, client: { id: string; secret: string }, refreshToken: string) {
  return postForm(
    `${tokenAt}/token`,
    { grant_type: 'refresh_token', refresh_token: refreshToken },
    basicAuthorization(client.id, client.secret),
  );
}

/**
 * A sign-in at the orders service: `GET /login` on `startAt`, the provider's pages on `authAt`,
 * the form_post callback to `finishAt`. Returns the callback's fields (code, state) for log checks.
 */
export async function ordersSignIn(
  browser: HttpBrowser,
  options: { startAt: string; authAt: string; finishAt: string; user: Credentials; returnUrl?: string },
): Promise<{ callback: HttpPage; fields: Record<string, string> }> {
  const start = await browser.get(
    `${options.startAt}/login?returnUrl=${encodeURIComponent(options.returnUrl ?? '/')}`,
  );
  if (start.status !== 302 || !start.location)
    throw new Error(`GET /login answered ${start.status}: ${start.body}`);
  let page = await browser.follow(start, { rewrite: (target) => onOrigin(target, options.authAt) });
  for (let step = 0; step < 4 && !page.body.includes('form-post-response'); step++) {
    page = await browser.follow(await answerPage(browser, page, options.user, options.authAt), {
      rewrite: (target) => onOrigin(target, options.authAt),
    });
  }
  if (!page.body.includes('form-post-response'))
    throw new Error(`no form_post page: ${page.status} ${page.body.slice(0, 300)}`);
  const fields = formOf(page).hidden;
  const callback = await browser.submit(page, {}, (action) => onOrigin(action, options.finishAt));
  return { callback, fields };
}

/**
 * RFC 8628: device authorization at `authorizeAt`, the verification page, login and consent on
 * `approveAt`. Returns the device code (for polling) and the user code.
 */
export async function approveDevice(
  browser: HttpBrowser,
  options: { authorizeAt: string; approveAt: string; clientId: string; scope: string; user: Credentials },
): Promise<{ deviceCode: string; userCode: string }> {
  const authorization = await postForm(`${options.authorizeAt}/device_authorization`, {
    client_id: options.clientId,
    scope: options.scope,
  });
  if (authorization.status !== 200)
    throw new Error(`device authorization: ${authorization.status} ${authorization.text}`);
  const deviceCode = authorization.json.device_code as string;
  const userCode = authorization.json.user_code as string;
  const codePage = await browser.get(`${options.approveAt}/device`);
  let page = await browser.follow(await browser.submit(codePage, { user_code: userCode }), {
    rewrite: (target) => onOrigin(target, options.approveAt),
  });
  const isStep = (candidate: HttpPage) =>
    /name="password"|name="decision"/.test(candidate.body) && candidate.status < 400;
  for (let step = 0; step < 4 && isStep(page); step++) {
    page = await browser.follow(await answerPage(browser, page, options.user, options.approveAt), {
      rewrite: (target) => onOrigin(target, options.approveAt),
    });
  }
  if (page.status !== 200)
    throw new Error(`device approval ended with ${page.status}: ${page.body.slice(0, 300)}`);
  return { deviceCode, userCode };
}

export async function pollDevice(tokenAt: string, clientId: string, deviceCode: string) {
  return postForm(`${tokenAt}/token`, {
    grant_type: DEVICE_GRANT,
    client_id: clientId,
    device_code: deviceCode,
  });
}
