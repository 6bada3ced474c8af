import { CLAIMS_BY_SCOPE } from '@oidc-orders/oauth-core';
import type { MessageKey } from '../i18n/catalogues/en.js';
import { ENGLISH, type Translator } from '../i18n/translator.js';

/**
 * Plain-language explanations of scopes for the consent page. A scope that releases claims is
 * worded from what it releases (oauth-core's `CLAIMS_BY_SCOPE`, OIDC Core §5.4): a scope added
 * there is described here as soon as its claims have words. `openid` and `offline_access` have
 * fixed meanings (OIDC Core §3.1.2.1, §11); API scopes are described from their conventional
 * `.read` / `.write` suffix, and anything else is named as it is rather than guessed at.
 */
export const CLAIM_WORDING: Readonly<Record<string, MessageKey | null>> = {
  name: 'claim.name',
  email: 'claim.email',
  // Said with the address it belongs to ("your email address").
  email_verified: null,
  groups: 'claim.groups',
};

const FIXED_SCOPE_WORDING: Readonly<Record<string, MessageKey>> = {
  openid: 'scope.openid',
  offline_access: 'scope.offline_access',
};

/** One list formatter per language (of the four), not one per scope on every consent page. */
const listFormats = new Map<string, Intl.ListFormat>();

function listFormatFor(language: string): Intl.ListFormat {
  let format = listFormats.get(language);
  if (format === undefined) {
    format = new Intl.ListFormat(language, { type: 'conjunction' });
    listFormats.set(language, format);
  }
  return format;
}

function describeReleasedClaims(claims: readonly string[], t: Translator): string {
  const words = claims.flatMap((claim) => {
    const key = CLAIM_WORDING[claim];
    if (key === null) return [];
    return [key === undefined ? claim : t.text(key)];
  });
  const list = listFormatFor(t.language).format(words);
  return t.text('scope.claims', { claims: list });
}

export function describeScope(scope: string, t: Translator = ENGLISH): string {
  const fixed = FIXED_SCOPE_WORDING[scope];
  if (fixed !== undefined) return t.text(fixed);
  const claims = Object.hasOwn(CLAIMS_BY_SCOPE, scope) ? CLAIMS_BY_SCOPE[scope] : undefined;
  if (claims !== undefined) return describeReleasedClaims(claims, t);
  const readMatch = /^(.+)\.read$/.exec(scope);
  if (readMatch) return t.text('scope.read', { resource: readMatch[1] ?? scope });
  const writeMatch = /^(.+)\.write$/.exec(scope);
  if (writeMatch) return t.text('scope.write', { resource: writeMatch[1] ?? scope });
  return t.text('scope.other', { scope });
}
