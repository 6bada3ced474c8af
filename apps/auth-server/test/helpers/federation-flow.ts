import type { UpstreamAccount, UpstreamProviderFixture } from '@oidc-orders/service-kit/testing';
import * as client from 'openid-client';
import { expect } from 'vitest';
import { FetchBrowser } from './fetch-browser.js';

/**
 * The browser's side of a sign-in through an upstream provider (test/federation*.test.ts): our
 * client's authorization request up to our login page, the provider's button and pages up to our
 * callback, and the end at the client with openid-client as its relying party. `context` is read
 * at each call, so a suite may build its servers in `beforeAll`.
 */
export interface FederationFlowContext {
  /** Our issuer (the app listening on a loopback port). */
  issuer: string;
  upstream: UpstreamProviderFixture;
}

export interface FlowClient {
  clientId: string;
  secret: string;
  redirectUri: string;
  /** The scope requested (default `openid profile email`). */
  scope?: string;
}

/** The hidden fields of a page's forms, by name. */
export const hidden = (page: string) =>
  Object.fromEntries(
    [...page.matchAll(/<input type="hidden" name="([^"]*)" value="([^"]*)">/g)].map((match) => [
      match[1],
      match[2],
    ]),
  );

export function federationFlows(context: () => FederationFlowContext) {
  async function relyingParty(app: { clientId: string; secret: string }) {
    return client.discovery(new URL(context().issuer), app.clientId, app.secret, undefined, {
      execute: [client.allowInsecureRequests],
    });
  }

  /** Our client's authorization request, up to our login page. */
  async function toLoginPage(browser: FetchBrowser, app: FlowClient) {
    const { issuer } = context();
    const config = await relyingParty(app);
    const verifier = client.randomPKCECodeVerifier();
    const state = client.randomState();
    const nonce = client.randomNonce();
    const url = client.buildAuthorizationUrl(config, {
      redirect_uri: app.redirectUri,
      scope: app.scope ?? 'openid profile email',
      code_challenge: await client.calculatePKCECodeChallenge(verifier),
      code_challenge_method: 'S256',
      state,
      nonce,
    });
    const toLogin = await browser.request(url);
    const loginUrl = new URL(toLogin.headers.get('location')!, issuer);
    const page = await (await browser.request(loginUrl)).text();
    return { config, verifier, state, nonce, page, loginUrl };
  }

  const buttonHref = (page: string, id: string) => {
    const match = new RegExp(`href="([^"]+)" data-sign-in="idp:${id}"`).exec(page);
    return match ? new URL(match[1]!.replace(/&amp;/g, '&'), context().issuer) : null;
  };

  /** From the login page's button through the upstream's pages, up to (not into) our callback. */
  async function throughUpstream(browser: FetchBrowser, page: string, id = 'upstream'): Promise<URL> {
    return upstreamToCallback(browser, await browser.request(buttonHref(page, id)!));
  }

  /** From our redirect to the upstream (`response`) through its pages, up to (not into) our callback. */
  async function upstreamToCallback(browser: FetchBrowser, toUpstream: Response): Promise<URL> {
    const { issuer, upstream } = context();
    let response = toUpstream;
    for (let hops = 0; hops < 10; hops += 1) {
      const location = new URL(response.headers.get('location') ?? '', upstream.issuer);
      if (location.href.startsWith(`${issuer}/idp/`)) return location;
      expect(response.status).toBeGreaterThanOrEqual(300);
      response = await browser.request(location);
    }
    throw new Error('the upstream never came back');
  }

  /** Our consent page (approved) or straight on, to the client's redirect with a code; then tokens. */
  async function finishWithTokens(
    browser: FetchBrowser,
    afterCallback: Response,
    flow: Awaited<ReturnType<typeof toLoginPage>>,
  ) {
    const { issuer } = context();
    let response = afterCallback;
    let location = new URL(response.headers.get('location')!, issuer);
    if (location.pathname.endsWith('/consent')) {
      const consentPage = await (await browser.request(location)).text();
      response = await browser.request(location, {
        method: 'POST',
        form: { ...hidden(consentPage), decision: 'approve' },
      });
      location = new URL(response.headers.get('location')!, issuer);
    }
    return client.authorizationCodeGrant(flow.config, location, {
      pkceCodeVerifier: flow.verifier,
      expectedState: flow.state,
      expectedNonce: flow.nonce,
      idTokenExpected: true,
    });
  }

  async function finish(
    browser: FetchBrowser,
    afterCallback: Response,
    flow: Awaited<ReturnType<typeof toLoginPage>>,
  ) {
    return (await finishWithTokens(browser, afterCallback, flow)).claims()!;
  }

  /**
   * A first sign-in at provider `id` as `account`, in a new browser (or `browser`), up to our
   * answer to the callback (the link page when the address is an existing account's).
   */
  async function toLinkPage(
    id: string,
    account: UpstreamAccount,
    app: FlowClient,
    browser = new FetchBrowser(),
  ) {
    context().upstream.behaviour = { account };
    const flow = await toLoginPage(browser, app);
    const callbackAnswer = await browser.request(await throughUpstream(browser, flow.page, id));
    // The link page is shown at its own address (no `code` or `state` in it): followed there.
    const location = new URL(callbackAnswer.headers.get('location') ?? '/', context().issuer);
    const toLinkAddress = callbackAnswer.status === 303 && location.pathname.endsWith(`/idp/${id}/link`);
    const response = toLinkAddress ? await browser.request(location) : callbackAnswer;
    return { browser, flow, response, callbackAnswer };
  }

  /** A whole sign-in of `app` through provider `id` in a new browser, as the upstream's behaviour says. */
  async function signInWithTokens(app: FlowClient, id: string) {
    const browser = new FetchBrowser();
    const flow = await toLoginPage(browser, app);
    const response = await browser.request(await throughUpstream(browser, flow.page, id));
    expect(response.status).toBe(303);
    return finishWithTokens(browser, response, flow);
  }

  return {
    relyingParty,
    toLoginPage,
    buttonHref,
    throughUpstream,
    upstreamToCallback,
    finishWithTokens,
    finish,
    toLinkPage,
    signInWithTokens,
  };
}

/**
 * Our redirect to the upstream starts a code flow as RFC 9700 asks: PKCE S256 (RFC 7636), a
 * `state` and a `nonce` of enough entropy, and this provider's own callback.
 */
export function expectCodeFlowStart(location: string, upstreamIssuer: string, redirectUri: string): void {
  const target = new URL(location);
  expect(`${target.origin}${target.pathname}`).toBe(`${upstreamIssuer}/auth`);
  expect(target.searchParams.get('code_challenge_method')).toBe('S256');
  expect(target.searchParams.get('code_challenge')).toMatch(/^[\w-]{43}$/);
  expect(target.searchParams.get('state')).toMatch(/^[\w-]{20,}$/);
  expect(target.searchParams.get('nonce')).toMatch(/^[\w-]{20,}$/);
  expect(target.searchParams.get('redirect_uri')).toBe(redirectUri);
}
