import { Type } from '@sinclair/typebox';
import { ErrorResponse } from './errors.js';

export const HomeView = Type.Object({
  name: Type.Union([Type.String(), Type.Null()]),
  sub: Type.String(),
  hasAccessToken: Type.Boolean(),
});

export const homeSchema = {
  response: { 200: HomeView, 503: ErrorResponse },
};

export const accountLinkSchema = {
  response: { 503: ErrorResponse },
};

export const loginSchema = {
  querystring: Type.Object({ returnUrl: Type.Optional(Type.String()) }),
  response: { 400: ErrorResponse, 503: ErrorResponse },
};
