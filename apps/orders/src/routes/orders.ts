import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { onRequestAsyncHookHandler } from 'fastify';
import fp from 'fastify-plugin';
import { BearerTokenError, OrderNotFoundError } from '../errors.js';
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

const orderRoutes: FastifyPluginAsyncTypebox<OrderRoutesOptions> = async (app, { beforeOrderInsert }) => {
  const { orderUnitPriceCents, orderTxTimeoutMs } = app.config;
  const requireOrdersRead = app.requireBearer(ORDERS_READ_SCOPE);

  /**
   * `GET /orders/:id` serves two kinds of caller: back-office tools with the API key (any order) and
   * users with a bearer token (their own orders only). An `x-api-key` header always means the
   * API-key path, so a wrong key is 403 as before; no credentials at all is the API key's 401.
   */
  const requireApiKeyOrBearer: onRequestAsyncHookHandler = async function (request, reply) {
    if (request.headers['x-api-key'] === undefined && request.headers.authorization !== undefined) {
      return requireOrdersRead.call(this, request, reply);
    }
    return app.requireApiKey.call(this, request, reply);
  };

  app.post(
    '/orders',
    { schema: placeOrderSchema, onRequest: [app.requireApiKey] },
    async (request, reply) => {
      const order = await placeOrder(app.orderDb, request.body, {
        unitPriceCents: orderUnitPriceCents,
        txTimeoutMs: orderTxTimeoutMs,
        beforeOrderInsert,
      });
      return reply.code(201).header('location', `/orders/${order.id}`).send(order);
    },
  );

  /** The caller's own orders: the user is the one whose e-mail the access token carries. */
  app.get('/orders', { schema: listOwnOrdersSchema, onRequest: [requireOrdersRead] }, async (request) => {
    const email = request.accessToken?.email;
    if (email === undefined) {
      // The token is genuine but names no user this API knows how to find (resource `claims` lacks email).
      throw new BearerTokenError('invalid_token', 'The access token carries no email claim', {
        realm: app.config.resourceId,
      });
    }
    const rows = await listOrdersByEmail(app.db, email);
    return rows.map((row) => ({ ...row, createdAt: row.createdAt.toISOString() }));
  });

  app.get('/orders/:id', { schema: getOrderSchema, onRequest: [requireApiKeyOrBearer] }, async (request) => {
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

export default fp(orderRoutes, {
  name: 'order-routes',
  dependencies: ['config', 'db', 'api-key-guard', 'bearer-auth', 'error-handler'],
  encapsulate: true,
  fastify: '5.x',
});
