import { annotateActiveTrace } from '@oidc-orders/service-kit';

/**
 * A browser sign-in is several requests (authorize, the login page, its POST, the second factor,
 * consent, an upstream provider's return), each its own trace. Every span of each of them carries
 * `interaction.id`, so one search shows the whole sign-in (docs/security-and-operations.md, "One
 * sign-in, one story"). The id is no secret: it is in the pages' URLs, and an interaction is bound
 * to the browser that started it (its cookie), which the id alone does not give.
 */
export const INTERACTION_ATTRIBUTE = 'interaction.id';

/** Ids this server makes are 24 base64url characters; anything else a URL carried is not named. */
const INTERACTION_ID = /^[A-Za-z0-9_-]{8,64}$/;

export function annotateInteractionTrace(interactionId: string): void {
  if (INTERACTION_ID.test(interactionId)) annotateActiveTrace(INTERACTION_ATTRIBUTE, interactionId);
}
