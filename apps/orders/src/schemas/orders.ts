import { Type } from '@sinclair/typebox';
import { Amount, Email, Quantity } from './common.js';
import { ErrorResponse, guardedErrorResponses } from './errors.js';

export const PlaceOrderBody = Type.Object(
  { email: Email, quantity: Quantity },
  // Unknown members are a client bug worth a 400; Ajv would otherwise strip them silently.
  { additionalProperties: false },
);

export const PlacedOrder = Type.Object({
  id: Type.Integer(),
  email: Type.String(),
  quantity: Type.Integer(),
  status: Type.Literal('created'),
});

/** Digits only, no sign, no leading zero: "0", "-1", "1.5", "01" and "abc" are all 400. */
export const OrderIdParams = Type.Object({
  id: Type.String({ pattern: '^[1-9][0-9]*$' }),
});

export const OrderView = Type.Object({
  id: Type.Integer(),
  /** When this answer was produced (server clock). */
  checkedAt: Type.String({ format: 'date-time' }),
  total: Amount,
  createdAt: Type.String({ format: 'date-time' }),
  email: Type.String(),
});

export const placeOrderSchema = {
  body: PlaceOrderBody,
  response: {
    201: PlacedOrder,
    400: ErrorResponse,
    ...guardedErrorResponses,
    503: ErrorResponse,
  },
};

export const getOrderSchema = {
  params: OrderIdParams,
  response: {
    200: OrderView,
    400: ErrorResponse,
    ...guardedErrorResponses,
    404: ErrorResponse,
    // Bearer path only: the provider's metadata or keys are not available.
    503: ErrorResponse,
  },
};

export const OwnOrder = Type.Object({
  id: Type.Integer(),
  quantity: Type.Integer(),
  total: Amount,
  status: Type.Literal('created'),
  createdAt: Type.String({ format: 'date-time' }),
});

/** `GET /orders`: the bearer's own orders, oldest first. */
export const listOwnOrdersSchema = {
  response: {
    200: Type.Array(OwnOrder),
    401: ErrorResponse,
    403: ErrorResponse,
    500: ErrorResponse,
    503: ErrorResponse,
  },
};
