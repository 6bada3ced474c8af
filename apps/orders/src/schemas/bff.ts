import { Type } from '@sinclair/typebox';
import { Quantity } from './common.js';
import { ErrorResponse } from './errors.js';
import { PlacedOrder } from './orders.js';

/** Every BFF route requires `X-CSRF: 1`; checked in onRequest, before anything else. */
const bffErrors = { 400: ErrorResponse, 401: ErrorResponse, 500: ErrorResponse, 503: ErrorResponse };

export const bffUserSchema = {
  response: {
    200: Type.Object({
      sub: Type.String(),
      name: Type.Union([Type.String(), Type.Null()]),
      roles: Type.Array(Type.String()),
      /** The session's claims, names as issued. */
      claims: Type.Record(Type.String(), Type.Unknown()),
      /** The CSRF token the page's sign-out form POSTs to `/logout` (bound to this session). */
      signOutToken: Type.String(),
    }),
    ...bffErrors,
  },
};

export const bffPlaceOrderSchema = {
  body: Type.Object({ quantity: Quantity }, { additionalProperties: false }),
  response: { 201: PlacedOrder, ...bffErrors, 403: ErrorResponse },
};
