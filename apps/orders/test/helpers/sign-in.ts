import { expect } from 'vitest';
import { readPostForm, type TestBrowser } from './browser.js';

export interface SignInOptions {
  /** The orders app the browser talks to. */
  appUrl: string;
  user: { username: string; password: string };
  /** Where the sign-in starts (a protected page or /login?returnUrl=…). */
  path?: string;
  /** Sent with every request to the orders app (forwarded headers). */
  headers?: Record<string, string>;
}

/**
 * A browser sign-in up to the provider's form_post page: the app redirects to /authorize, the
 * provider shows its login form (unless its session already covers the request), the form is
 * posted back with its hidden fields and cookies, and the redirects are followed to the page whose
 * form would post the response to the app.
 */
export async function signInUpToFormPost(browser: TestBrowser, options: SignInOptions) {
  const start = await browser.request(`${options.appUrl}${options.path ?? '/'}`, {
    headers: options.headers ?? {},
  });
  expect(start.status).toBe(302);
  const authorizationUrl = new URL(start.headers.get('location')!);

  let { response, url } = await browser.follow(authorizationUrl);
  let loginInputs: string[] = [];
  if (url.pathname.endsWith('/login')) {
    const login = readPostForm(await response.text());
    loginInputs = login.inputs;
    const posted = await browser.request(url, {
      method: 'POST',
      form: { ...login.hidden, username: options.user.username, password: options.user.password },
    });
    ({ response, url } =
      posted.status >= 300 && posted.status < 400
        ? await browser.follow(new URL(posted.headers.get('location')!, url))
        : { response: posted, url });
  }
  expect(response.status).toBe(200);
  return { authorizationUrl, loginInputs, formPost: readPostForm(await response.text()) };
}

/** The whole sign-in: the form_post fields are posted to the app's /signin-oidc with its cookies. */
export async function signInThroughCallback(browser: TestBrowser, options: SignInOptions) {
  const page = await signInUpToFormPost(browser, options);
  const callback = await browser.request(`${options.appUrl}/signin-oidc`, {
    method: 'POST',
    form: page.formPost.hidden,
    headers: options.headers ?? {},
  });
  return { ...page, callback };
}
