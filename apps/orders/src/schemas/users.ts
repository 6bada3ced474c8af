import { Type } from '@sinclair/typebox';
import { Amount, Email, Quantity } from './common.js';
import { ErrorResponse, guardedErrorResponses } from './errors.js';

export const MAX_ORDERS_PER_NEW_USER = 100;

export const CreateUserBody = Type.Object(
  {
    email: Email,
    orders: Type.Optional(
      Type.Array(Type.Object({ quantity: Quantity }, { additionalProperties: false }), {
        maxItems: MAX_ORDERS_PER_NEW_USER,
      }),
    ),
  },
  { additionalProperties: false },
);

export const CreatedUser = Type.Object({
  id: Type.Integer(),
  email: Type.String(),
  orders: Type.Array(
    Type.Object({
      id: Type.Integer(),
      quantity: Type.Integer(),
      total: Amount,
      status: Type.Literal('created'),
    }),
  ),
});

export const UserSummary = Type.Object({
  id: Type.Integer(),
  email: Type.String(),
  orderCount: Type.Integer(),
  orders: Type.Array(Type.Object({ id: Type.Integer(), total: Amount })),
});

export const createUserSchema = {
  body: CreateUserBody,
  response: {
    201: CreatedUser,
    400: ErrorResponse,
    ...guardedErrorResponses,
    409: ErrorResponse,
  },
};

export const listUsersSchema = {
  response: {
    200: Type.Array(UserSummary),
    ...guardedErrorResponses,
  },
};
