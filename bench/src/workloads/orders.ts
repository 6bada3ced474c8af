/**
 * `orders-create` (`POST /orders` with the API key) and `orders-list` (`GET /orders` with a JWT
 * bearer token, the caller's own orders), on the orders service or on the bare-pg ceiling.
 * Each connection places orders for its own e-mail address, as distinct customers would: one
 * shared address would serialise every transaction on that user's row.
 */
import type autocannon from 'autocannon';
import { describeFailure, type Workload } from './types.js';

export interface OrdersTarget {
  baseUrl: string;
  /** Headers of `POST /orders` (the API key for the orders service). */
  createHeaders: Record<string, string>;
  /** The list request: the orders service's bearer API, or the bare-pg SELECT by e-mail. */
  listUrl: string;
  /** Headers of the list request (a fresh bearer token for the orders service). */
  listHeaders: () => Promise<Record<string, string>>;
  /** Whose orders the list returns; they are placed before the list runs. */
  listEmail: string;
}

/** Orders the listed user owns: the list query returns this many rows. */
export const LISTED_ORDERS = 10;

function orderBody(email: string): string {
  return JSON.stringify({ email, quantity: 1 });
}

async function placeOrder(target: OrdersTarget, email: string): Promise<{ status: number; body: string }> {
  const response = await fetch(`${target.baseUrl}/orders`, {
    method: 'POST',
    headers: { ...target.createHeaders, 'content-type': 'application/json' },
    body: orderBody(email),
    signal: AbortSignal.timeout(10_000),
  });
  return { status: response.status, body: await response.text() };
}

export function ordersCreateWorkload(target: OrdersTarget): Workload {
  return {
    name: 'orders-create',
    async preflight() {
      const response = await placeOrder(target, 'bench-preflight@example.com');
      if (response.status === 201) return { ok: true };
      return {
        ok: false,
        unavailable: response.status === 404,
        detail: describeFailure(response.status, response.body),
      };
    },
    async plan() {
      let nextClient = 0;
      const setupClient = (client: autocannon.Client) => {
        client.setBody(orderBody(`bench-${nextClient++}@example.com`));
      };
      return {
        options: {
          url: `${target.baseUrl}/orders`,
          method: 'POST',
          headers: {
            ...target.createHeaders,
            'content-type': 'application/json',
            accept: 'application/json',
          },
          body: orderBody('bench-0@example.com'),
          setupClient,
        },
      };
    },
  };
}

export function ordersListWorkload(target: OrdersTarget): Workload {
  let seeded = false;
  return {
    name: 'orders-list',
    async preflight() {
      // Without credentials first: a 404 means the route is not there yet, before any token is minted.
      const probe = await fetch(target.listUrl, { signal: AbortSignal.timeout(10_000) });
      const probeBody = await probe.text();
      if (probe.status === 404) {
        return {
          ok: false,
          unavailable: true,
          detail: `GET /orders: ${describeFailure(probe.status, probeBody)}`,
        };
      }
      const headers = await target.listHeaders();
      const response = await fetch(target.listUrl, { headers, signal: AbortSignal.timeout(10_000) });
      const body = await response.text();
      // The route exists (the probe above): refusing a valid token is a failure of the run, never
      // "unavailable" (a 401 here once hid that user tokens had lost their email claim).
      if (response.status !== 200) {
        return {
          ok: false,
          unavailable: false,
          detail: `GET /orders with a bearer token: ${describeFailure(response.status, body)}`,
        };
      }
      if (!seeded) {
        for (let index = 0; index < LISTED_ORDERS; index++) {
          const placed = await placeOrder(target, target.listEmail);
          if (placed.status !== 201)
            return {
              ok: false,
              unavailable: false,
              detail: `placing the listed orders: ${describeFailure(placed.status, placed.body)}`,
            };
        }
        seeded = true;
      }
      return { ok: true };
    },
    async plan() {
      const headers = await target.listHeaders();
      return {
        options: { url: target.listUrl, method: 'GET', headers: { ...headers, accept: 'application/json' } },
      };
    },
  };
}
