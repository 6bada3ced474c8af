import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import {
  ALICE,
  type AuthServer,
  type OrdersService,
  runCli,
  startAuthServer,
  startCli,
  startOrdersService,
} from './helpers/processes.js';
import { VerificationBrowser } from './helpers/verification-browser.js';

let server: AuthServer;
let orders: OrdersService;
let configDir: string;

beforeAll(async () => {
  server = await startAuthServer();
  orders = await startOrdersService(server.issuer, server.resourceSecret);
  configDir = join(await mkdtemp(join(tmpdir(), 'orders-cli-service-')), 'orders-cli');
});
afterAll(async () => {
  await orders?.stop();
  await server?.stop();
  if (configDir) await rm(join(configDir, '..'), { recursive: true, force: true });
});

async function placeOrder(email: string, quantity: number) {
  const response = await fetch(`${orders.url}/orders`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-api-key': orders.apiKey },
    body: JSON.stringify({ email, quantity }),
  });
  expect(response.status).toBe(201);
  return (await response.json()) as { id: number };
}

it('orders list shows the signed-in user’s own orders from the real orders service', async () => {
  const mine = [await placeOrder('alice@example.com', 2), await placeOrder('alice@example.com', 1)];
  await placeOrder('someone-else@example.com', 5);
  const env = { ORDERS_ISSUER: server.issuer, ORDERS_API_URL: orders.url, ORDERS_CLI_CONFIG_DIR: configDir };

  const login = startCli(['login'], env);
  const [, userCode] = await login.waitForStdout(/enter the code:\s+([B-Z]{4}-[B-Z]{4})/);
  await new VerificationBrowser().approve(`${server.issuer}/device`, userCode!, {
    ...ALICE,
    decision: 'approve',
  });
  expect(await login.exited).toBe(0);

  const result = await runCli(['list', '--json'], env);
  expect(result.code).toBe(0);
  const listed = JSON.parse(result.stdout) as Array<{ id: number; quantity: number; total: string }>;
  expect(listed.map((order) => order.id)).toEqual(mine.map((order) => order.id));
  expect(listed.map((order) => order.total)).toEqual(['19.98', '9.99']);

  const table = await runCli(['list'], env);
  expect(table.code).toBe(0);
  expect(table.stdout).toContain('2 orders.');
});
