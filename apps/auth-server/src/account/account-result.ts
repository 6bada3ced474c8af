import { createHash, createHmac, timingSafeEqual } from 'node:crypto';

/**
 * The outcome of an account form, shown at a GET address (post/redirect/get): every POST to
 * /account/... answers 303 to `/account?…`, so reloading the result never sends the form
 * again. The text, its kind, the form it belongs to and the typed value kept are in the query,
 * with an HMAC keyed by the browser-binding cookie: a link crafted elsewhere cannot make the page
 * show words of its author's choosing.
 */
export interface AccountNotice {
  kind: 'ok' | 'error';
  text: string;
  /** The form the notice belongs to (`formKeyOf`); an error is shown inside it. */
  form?: string;
  /** What the person typed into the form's text field (never a password), kept after an error. */
  kept?: string;
}

/**
 * The form a POST path names: `/account/password` → `password`, `/account/totp/<id>/rename` →
 * `totp-<id>`, `/account/sessions/<id>/end` → `sessions-<id>`; the page marks each form with it.
 */
export function formKeyOf(path: string): string {
  // From the last `/account/` on, whatever prefix a gateway leaves in front of it.
  const pathname = path.split('?')[0]!;
  const rest = pathname.slice(pathname.lastIndexOf('/account/') + '/account/'.length);
  const segments = rest.split('/').filter((segment) => segment !== '');
  return segments.slice(0, 2).map(decodeURIComponent).join('-');
}

const payloadOf = (notice: AccountNotice) =>
  JSON.stringify([notice.kind, notice.text, notice.form ?? '', notice.kept ?? '']);

const signatureOf = (notice: AccountNotice, browserKey: string, sessionId: string) =>
  createHmac('sha256', browserKey)
    .update(`account-result:${sessionId}:${payloadOf(notice)}`)
    .digest('base64url');

/** `/account?…` for `notice`, signed for this browser and session. */
export function accountResultUrl(
  accountUrl: string,
  notice: AccountNotice,
  browserKey: string,
  sessionId: string,
): string {
  const query = new URLSearchParams({ result: notice.kind, text: notice.text });
  if (notice.form) query.set('form', notice.form);
  if (notice.kept) query.set('kept', notice.kept);
  query.set('sig', signatureOf(notice, browserKey, sessionId));
  // No #fragment: a document opened at a fragment skips `autofocus` (HTML "flush autofocus
  // candidates"), and the focused field of an error scrolls into view by itself.
  return `${accountUrl}?${query}`;
}

/** The notice of a result URL, or undefined when there is none or its signature is not this browser's. */
export function readAccountResult(
  query: unknown,
  browserKey: string,
  sessionId: string,
): AccountNotice | undefined {
  const value = (name: string) => {
    const raw = (query as Record<string, unknown> | null | undefined)?.[name];
    return typeof raw === 'string' && raw.length <= 500 ? raw : undefined;
  };
  const kind = value('result');
  const text = value('text');
  if ((kind !== 'ok' && kind !== 'error') || text === undefined) return undefined;
  const form = value('form');
  const kept = value('kept');
  const notice: AccountNotice = { kind, text, ...(form ? { form } : {}), ...(kept ? { kept } : {}) };
  const expected = signatureOf(notice, browserKey, sessionId);
  return isValidSignature(value('sig'), expected) ? notice : undefined;
}

/** Equal in constant time: both sides hashed to the same length first, as the CSRF check does. */
function isValidSignature(submitted: string | undefined, expected: string): boolean {
  if (submitted === undefined) return false;
  const digest = (text: string) => createHash('sha256').update(text).digest();
  return timingSafeEqual(digest(submitted), digest(expected));
}
