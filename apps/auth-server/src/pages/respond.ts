import type { FastifyReply } from 'fastify';

/**
 * The Content-Security-Policy of every page. No inline script or style anywhere (`'self'` only),
 * no framing (clickjacking on the login and consent forms), no plugins, no `<base>` rewriting.
 *
 * `form-action` is not covered by `default-src`, and browsers apply it to the redirects that follow
 * a form submission too: the login and consent forms post to this server, which may answer with a
 * redirect to the client. So pages of an authorization request also allow the client's redirect
 * URI origin, and the form_post page must allow it to post at all.
 */
export function cspDirectives(
  formActionSources: readonly string[] = [],
  frameSources: readonly string[] = [],
): Record<string, string[]> {
  return {
    'default-src': ["'self'"],
    // Only the signed-out page frames other sites (front-channel logout URIs), and only those.
    ...(frameSources.length > 0 ? { 'frame-src': [...frameSources] } : {}),
    'base-uri': ["'none'"],
    'object-src': ["'none'"],
    'frame-ancestors': ["'none'"],
    'form-action': ["'self'", ...formActionSources],
    'script-src': ["'self'"],
    'style-src': ["'self'"],
    'img-src': ["'self'", 'data:'],
  };
}

export function contentSecurityPolicy(
  formActionSources: readonly string[] = [],
  frameSources: readonly string[] = [],
): string {
  return Object.entries(cspDirectives(formActionSources, frameSources))
    .map(([directive, sources]) => `${directive} ${sources.join(' ')}`)
    .join('; ');
}

export interface HtmlReplyOptions {
  /** Extra `form-action` sources (the client's redirect URI origin). */
  formActionSources?: readonly string[];
  /** `frame-src` origins (front-channel logout iframes on the signed-out page). */
  frameSources?: readonly string[];
}

/** Sends a server-rendered page: never cached (pages carry CSRF tokens and personal data). */
export function sendHtml(reply: FastifyReply, status: number, page: string, options: HtmlReplyOptions = {}) {
  return reply
    .code(status)
    .header('content-type', 'text/html; charset=utf-8')
    .header('cache-control', 'no-store')
    .header('pragma', 'no-cache')
    .header('content-security-policy', contentSecurityPolicy(options.formActionSources, options.frameSources))
    .send(page);
}
