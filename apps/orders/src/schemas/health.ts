import { Type } from '@sinclair/typebox';
import { ErrorResponse } from './errors.js';

const Ok = Type.Object({ status: Type.Literal('ok') });

export const livenessSchema = { response: { 200: Ok } };

/**
 * `oidc` appears when OIDC_ISSUER is set: `discovering` while the authorization server's metadata
 * is still being retried. The instance stays ready meanwhile, because its API-key routes work.
 */
const Ready = Type.Object({
  status: Type.Literal('ok'),
  oidc: Type.Optional(Type.Union([Type.Literal('ready'), Type.Literal('discovering')])),
});

export const readinessSchema = { response: { 200: Ready, 503: ErrorResponse } };
