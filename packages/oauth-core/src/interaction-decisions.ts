/**
 * What /authorize and the interaction pages do next, decided from the validated request, the SSO
 * session and what already happened inside the interaction (OIDC Core §3.1.2.1 `prompt` and
 * `max_age`, remembered consent). Pure: no HTTP, no storage; the server calls these.
 */

/** What the decision needs of a single-sign-on session: which it is, and when the user authenticated. */
export interface AuthenticatedSession {
  id: string;
  /** OIDC `auth_time`, whole seconds. */
  authTime: number;
}

export interface AuthenticationRequirements {
  /** OIDC Core §3.1.2.1 `prompt` values. */
  prompt: readonly string[];
  /** OIDC Core §3.1.2.1 `max_age`, seconds; `null` when absent. */
  maxAge: number | null;
}

export interface InteractionProgress {
  /** The SSO session a login inside this interaction created. */
  loginSid: string | null;
  /** Scopes approved on the consent page inside this interaction. */
  approvedScopes: readonly string[] | null;
}

/** Whether the user must (re-)enter credentials before this request can complete. */
export function needsAuthentication(
  requirements: AuthenticationRequirements,
  session: AuthenticatedSession | null,
  progress: InteractionProgress | null,
  now: number,
): boolean {
  if (session === null) return true;
  // A login inside this very interaction satisfies prompt=login and max_age (even max_age=0),
  // otherwise the user would be sent back to the login page forever.
  if (progress?.loginSid === session.id) return false;
  // OIDC Core §3.1.2.1: prompt=login "SHOULD prompt the End-User for reauthentication";
  // select_account is served by the same page (sign in as someone else).
  if (requirements.prompt.includes('login') || requirements.prompt.includes('select_account')) return true;
  // OIDC Core §3.1.2.1 max_age: "If the elapsed time is greater than this value, the OP MUST
  // attempt to actively re-authenticate the End-User." Times are whole seconds, so a measured
  // elapsed time equal to max_age may really be up to a second more: `>=` stays on the safe side,
  // and makes max_age=0 always re-authenticate.
  if (requirements.maxAge !== null && now - session.authTime >= requirements.maxAge) return true;
  return false;
}

export interface ConsentRequirements {
  prompt: readonly string[];
  skipConsent: boolean;
  /** Scopes the code would carry: requested ∩ client's ∩ user's (oauth-core `grantableScopes`). */
  grantedScopes: readonly string[];
  /** Scopes remembered from earlier approvals of this user for this client. */
  rememberedScopes: readonly string[];
}

const covers = (approved: readonly string[], wanted: readonly string[]) =>
  wanted.every((scope) => approved.includes(scope));

/** Whether the consent page must be shown before this request can complete. */
export function needsConsent(
  requirements: ConsentRequirements,
  progress: InteractionProgress | null,
): boolean {
  if (progress?.approvedScopes && covers(progress.approvedScopes, requirements.grantedScopes)) return false;
  // OIDC Core §3.1.2.1: prompt=consent "SHOULD prompt the End-User for consent" even when it
  // was given before.
  if (requirements.prompt.includes('consent')) return true;
  // First-party clients registered with skip_consent never show the page.
  if (requirements.skipConsent) return false;
  return !covers(requirements.rememberedScopes, requirements.grantedScopes);
}
