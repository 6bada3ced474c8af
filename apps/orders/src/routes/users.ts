import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { computeOrderTotal } from '../pricing.js';
import { insertUserWithOrders, listUsersWithOrders } from '../repositories/users.js';
import { createUserSchema, listUsersSchema } from '../schemas/users.js';

/** Back-office user routes; src/routes/guarded-areas.ts puts them behind the API key. */
export const userRoutes: FastifyPluginAsyncTypebox = async (app) => {
  const { orderUnitPriceCents } = app.config;

  app.get('/users', { schema: listUsersSchema }, async () => listUsersWithOrders(app.db));

  app.post('/users', { schema: createUserSchema }, async (request, reply) => {
    const email = request.body.email.toLowerCase();
    // Every line is priced before anything is written: an overflow anywhere is a 400 with no writes.
    const orderLines = (request.body.orders ?? []).map(({ quantity }) => ({
      quantity,
      total: computeOrderTotal(quantity, orderUnitPriceCents),
    }));
    // One transaction for the user and all its orders: a failing order leaves no user behind.
    // A duplicate e-mail is the unique violation, mapped to 409 by the error handler.
    const created = await app.db.transaction((tx) => insertUserWithOrders(tx, email, orderLines));
    return reply.code(201).send(created);
  });
};
