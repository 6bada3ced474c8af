import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { OrderNotFoundError } from '../errors.js';
import { placeOrder } from '../place-order.js';
import { findOrderWithEmail, listOrdersByEmail } from '../repositories/orders.js';
import { MAX_INT4 } from '../schemas/common.js';
import { getOrderSchema, listOwnOrdersSchema, placeOrderSchema } from '../schemas/orders.js';

export interface OrderRoutesOptions {
  /**
   * Test seam: awaited within the order's deadline, before the order statement is sent
   * (`placeOrder`). Only buildApp's `deps` can set it; server.ts never does.
   */
  beforeOrderInsert?: (signal: AbortSignal) => Promise<void>;
}

/** The scope a bearer token needs to read orders (RFC 6750 §3.1 `insufficient_scope` otherwise). */
export const ORDERS_READ_SCOPE = 'orders.read';
/** The scope a bearer token needs to place an order for its user (the MCP tool `place_order`). */
export const ORDERS_WRITE_SCOPE = 'orders.write';

/**
 * The order routes, one plugin per guard area (src/routes/guarded-areas.ts puts each behind its
 * area's one onRequest hook): placing an order (API key), the caller's own orders (bearer
 * `orders.read`), one order by id (API key or bearer).
 */
export const placeOrderRoute: FastifyPluginAsyncTypebox<OrderRoutesOptions> = async (
  app,
  { beforeOrderInsert },
) => {
  const { orderUnitPriceCents, orderTxTimeoutMs } = app.config;
  app.post('/orders', { schema: placeOrderSchema }, async (request, reply) => {
    const order = await placeOrder(app.orderDb, request.body, {
      unitPriceCents: orderUnitPriceCents,
      txTimeoutMs: orderTxTimeoutMs,
      beforeOrderInsert,
    });
    return reply.code(201).header('location', `/orders/${order.id}`).send(order);
  });
};

/** The caller's own orders: the user is the one whose e-mail the access token carries. */
export const ownOrdersRoute: FastifyPluginAsyncTypebox = async (app) => {
  app.get('/orders', { schema: listOwnOrdersSchema }, async (request) => {
    const email = request.accessToken?.email;
    if (email === undefined) {
      // The token is genuine but names no user this API knows how to find (resource `claims` lacks email).
      throw app.bearerTokenError('invalid_token', 'The access token carries no email claim');
    }
    const rows = await listOrdersByEmail(app.db, email);
    return rows.map((row) => ({ ...row, createdAt: row.createdAt.toISOString() }));
  });
};

/** Any order with the API key; with a bearer token only the caller's own. */
export const orderByIdRoute: FastifyPluginAsyncTypebox = async (app) => {
  app.get('/orders/:id', { schema: getOrderSchema }, async (request) => {
    const orderId = Number(request.params.id);
    // Beyond the serial range no order can exist; asking Postgres would be an int4 overflow (500).
    if (orderId > MAX_INT4) throw new OrderNotFoundError(orderId);
    const order = await findOrderWithEmail(app.db, orderId);
    if (!order) throw new OrderNotFoundError(orderId);
    const bearer = request.accessToken;
    // Someone else's order is answered like a missing one, so ids of other users' orders do not leak.
    if (bearer !== null && (bearer.email === undefined || bearer.email !== order.email)) {
      throw new OrderNotFoundError(orderId);
    }
    return {
      id: order.id,
      checkedAt: new Date().toISOString(),
      total: order.total,
      createdAt: order.createdAt.toISOString(),
      email: order.email,
    };
  });
};
