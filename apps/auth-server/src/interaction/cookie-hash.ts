import { createHash } from 'node:crypto';

/** SHA-256, base64url: how session keys and browser keys are stored (never the cookie's value). */
export const hashCookieValue = (value: string): string =>
  createHash('sha256').update(value).digest('base64url');
