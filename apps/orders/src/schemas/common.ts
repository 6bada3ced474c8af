import { Type } from '@sinclair/typebox';

/** Largest value of a Postgres `integer`/`serial` column. */
export const MAX_INT4 = 2_147_483_647;

export const Email = Type.String({ format: 'email', maxLength: 254 });

/** Ajv rejects 2.5, "2" and true: coercion is off for bodies (see buildApp). */
export const Quantity = Type.Integer({ minimum: 1, maximum: MAX_INT4 });

/** Money as an exact decimal string, e.g. "29.97" (numeric(12,2) read back as text). */
export const Amount = Type.String({ pattern: '^[0-9]+\\.[0-9]{2}$' });
