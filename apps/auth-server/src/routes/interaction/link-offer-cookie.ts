import { createHash, createHmac, timingSafeEqual } from 'node:crypto';
import type { FastifyReply, FastifyRequest } from 'fastify';

/**
 * What the "Link your account" page shows, carried from the provider's callback to the page's own
 * GET address (post/redirect/get): the callback answers 303 to `…/idp/<provider>/link`, so the
 * address bar, the history and a reload hold no `code` or `state` (RFC 9700 §4.3.1: an
 * authorization code in the browser's history).
 *
 * Kept in an HttpOnly cookie scoped to that page's path, with an HMAC keyed by the
 * browser-binding cookie and bound to the interaction and the provider, as the CSRF tokens are: a
 * cookie planted by someone else, or moved to another interaction, opens nothing. The pending link
 * itself stays in the database; the cookie only lets this page name it in its forms again.
 */
export interface LinkOffer {
  /** The pending link's token (the forms' hidden `link`); empty when no proof is possible. */
  linkToken: string;
  /** The address the provider sent (the page names it). */
  email: string;
  byPassword: boolean;
  byMail: boolean;
}

const COOKIE_NAME = 'op_link_offer';

const signatureOf = (payload: string, browserKey: string, boundTo: string) =>
  createHmac('sha256', browserKey).update(`link-offer:${boundTo}:${payload}`).digest('base64url');

export function setLinkOfferCookie(
  reply: FastifyReply,
  offer: LinkOffer,
  binding: { browserKey: string; boundTo: string; path: string; secure: boolean; maxAgeSeconds: number },
): void {
  const payload = Buffer.from(JSON.stringify(offer)).toString('base64url');
  reply.setCookie(COOKIE_NAME, `${payload}.${signatureOf(payload, binding.browserKey, binding.boundTo)}`, {
    path: binding.path,
    httpOnly: true,
    sameSite: 'lax',
    secure: binding.secure,
    maxAge: binding.maxAgeSeconds,
  });
}

/** The offer of this request's cookie, if this browser made it for `boundTo`; else `null`. */
export function readLinkOfferCookie(
  request: FastifyRequest,
  browserKey: string,
  boundTo: string,
): LinkOffer | null {
  const [payload, signature] = (request.cookies[COOKIE_NAME] ?? '').split('.');
  if (!payload || !signature) return null;
  // Equal in constant time: both sides hashed to the same length first, as the CSRF check does.
  const digest = (text: string) => createHash('sha256').update(text).digest();
  if (!timingSafeEqual(digest(signature), digest(signatureOf(payload, browserKey, boundTo)))) return null;
  const offer = JSON.parse(Buffer.from(payload, 'base64url').toString('utf8')) as LinkOffer;
  return typeof offer.linkToken === 'string' && typeof offer.email === 'string' ? offer : null;
}
