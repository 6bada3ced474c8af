import { Writable } from 'node:stream';
import type { FastifyInstance, LightMyRequestResponse } from 'fastify';
import { expect } from 'vitest';
import { hiddenFields, TestBrowser } from '../browser.js';
import { pkcePair } from '../sign-in-fixtures.js';
import { WEB_REDIRECT_URI } from './seed.js';

/**
 * Helpers of the reliability and security tests (rate limits, audit events, open redirects,
 * timing, property-based tests): reaching the login page, submitting it, and capturing logs.
 */

/** A fresh browser on the login page of an authorization request of the `web` client. */
export async function openLoginPage(
  app: FastifyInstance,
  options: { remoteAddress?: string; clientId?: string; redirectUri?: string; scope?: string } = {},
): Promise<{ browser: TestBrowser; page: LightMyRequestResponse; verifier: string }> {
  const browser = new TestBrowser(app, options.remoteAddress ? { remoteAddress: options.remoteAddress } : {});
  const { verifier, challenge } = pkcePair();
  const query = new URLSearchParams({
    response_type: 'code',
    client_id: options.clientId ?? 'web',
    redirect_uri: options.redirectUri ?? WEB_REDIRECT_URI,
    scope: options.scope ?? 'openid profile offline_access',
    state: 'state-1',
    nonce: 'nonce-1',
    code_challenge: challenge,
    code_challenge_method: 'S256',
  });
  const page = await browser.follow(await browser.get(`/authorize?${query}`));
  expect(page.statusCode).toBe(200);
  expect(page.body).toContain('name="password"');
  return { browser, page, verifier };
}

/** Posts the login form of `page` (every hidden field sent back) with these credentials. */
export function submitLogin(
  browser: TestBrowser,
  page: LightMyRequestResponse,
  username: string,
  password: string,
): Promise<LightMyRequestResponse> {
  return browser.post(browser.lastUrl, { ...hiddenFields(page.body), username, password });
}

/** pino output kept in memory: pass `logger` to `startTestApp`, read `lines()` / `text()`. */
export function captureLogs(level = 'info') {
  const chunks: string[] = [];
  const stream = new Writable({
    write(chunk, _encoding, done) {
      chunks.push(chunk.toString());
      done();
    },
  });
  return {
    logger: { level, stream },
    text: () => chunks.join(''),
    lines: (): Array<Record<string, unknown>> =>
      chunks
        .join('')
        .split('\n')
        .filter((line) => line.trim() !== '')
        .map((line) => JSON.parse(line) as Record<string, unknown>),
    /** The audit lines with this `event`. */
    events: (event: string) =>
      chunks
        .join('')
        .split('\n')
        .filter((line) => line.trim() !== '')
        .map((line) => JSON.parse(line) as Record<string, unknown>)
        .filter((line) => line.event === event),
  };
}
