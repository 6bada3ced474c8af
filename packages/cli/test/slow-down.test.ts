import { mkdtemp, rm } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { runCli } from './helpers/processes.js';

/**
 * A stub authorization server that answers the first poll with `slow_down`, then enforces what RFC
 * 8628 §3.5 asks of the client — "the interval MUST be increased by 5 seconds for this and all
 * subsequent requests" — by refusing (with `invalid_request`) any later poll that comes sooner.
 * The CLI passes only if it waited; nothing here measures how long the test took.
 */
const INTERVAL = 1;
let server: Server;
let issuer: string;
const polls: Array<{ at: number; answer: string }> = [];
let configDir: string;

beforeAll(async () => {
  server = createServer((request, response) => {
    const json = (status: number, body: unknown) =>
      response
        .writeHead(status, { 'content-type': 'application/json', 'cache-control': 'no-store' })
        .end(JSON.stringify(body));
    if (request.url === '/.well-known/openid-configuration') {
      return json(200, {
        issuer,
        token_endpoint: `${issuer}/token`,
        device_authorization_endpoint: `${issuer}/device_authorization`,
      });
    }
    if (request.url === '/device_authorization') {
      return json(200, {
        device_code: 'stub-device-code',
        user_code: 'BCDF-GHJK',
        verification_uri: `${issuer}/device`,
        expires_in: 120,
        interval: INTERVAL,
      });
    }
    if (request.url === '/token') {
      const now = Date.now();
      const previous = polls.at(-1);
      let answer: string;
      if (previous === undefined) answer = 'slow_down';
      // Timers never fire early by more than a millisecond; 100 ms of slack keeps this exact enough.
      else if (now - previous.at < (INTERVAL + 5) * 1000 - 100) answer = 'too_fast';
      else answer = 'tokens';
      polls.push({ at: now, answer });
      if (answer === 'tokens')
        return json(200, { access_token: 'stub-access-token', token_type: 'Bearer', expires_in: 300 });
      if (answer === 'too_fast')
        return json(400, { error: 'invalid_request', error_description: 'polled before the grown interval' });
      return json(400, { error: 'slow_down' });
    }
    json(404, { error: 'not_found' });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  issuer = `http://127.0.0.1:${(server.address() as { port: number }).port}`;
  configDir = join(await mkdtemp(join(tmpdir(), 'orders-cli-slow-')), 'orders-cli');
});
afterAll(async () => {
  await new Promise((resolve) => server.close(resolve));
  await rm(join(configDir, '..'), { recursive: true, force: true });
});

it('after slow_down the CLI keeps polling, 5 s slower, and completes the login', async () => {
  const result = await runCli(['login', '--scope', 'orders.read'], {
    ORDERS_ISSUER: issuer,
    ORDERS_CLI_CONFIG_DIR: configDir,
  });
  expect(polls.map((poll) => poll.answer)).toEqual(['slow_down', 'tokens']);
  expect(result.code).toBe(0);
  expect(result.stdout).toContain('BCDF-GHJK');
});
