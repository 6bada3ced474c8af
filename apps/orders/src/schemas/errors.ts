import { Type } from '@sinclair/typebox';

/** Every error body: `{ statusCode, message }`; a 400 from schema validation adds `errors`. */
export const ErrorResponse = Type.Object({
  statusCode: Type.Integer(),
  message: Type.String(),
  errors: Type.Optional(Type.Array(Type.String())),
});

/** Responses every API-key-guarded route can give besides its own. */
export const guardedErrorResponses = {
  401: ErrorResponse,
  403: ErrorResponse,
  500: ErrorResponse,
};
