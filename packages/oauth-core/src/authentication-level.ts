/**
 * How a user authenticated, and whether that is enough: the methods a single-sign-on session
 * completed, the `amr` (RFC 8176) and `acr` (OIDC Core §2) they add up to, and the level a request
 * requires (client, user, resources, `acr_values`). Pure: the auth server records the methods and
 * shows the pages; every decision about levels is made here.
 *
 * Adding a sign-in method (Kerberos, a smart card, …) is one entry in `AUTHENTICATION_METHODS`:
 * its `amr` values and the factor kinds it proves. The session then records `{ method, at }` when
 * the method succeeds, and everything below (amr, acr, step-up, prompt=none) follows.
 */

/** NIST SP 800-63B §4 factor kinds; two different kinds make multi-factor authentication. */
export type FactorKind = 'knowledge' | 'possession' | 'inherence';

/** One method completed inside a session. */
export interface CompletedMethod {
  method: AuthenticationMethod;
  /** When it succeeded, whole seconds. */
  at: number;
  /** WebAuthn: the authenticator verified the user (PIN or biometric; WebAuthn §6.1 `UV` flag). */
  userVerified?: boolean;
  /** WebAuthn: the credential is synced between devices (backup state, WebAuthn §6.1.3 `BS`). */
  synced?: boolean;
  /** Federated: the upstream provider's `amr` values (RFC 8176), as its ID token sent them. */
  upstreamAmr?: string[];
  /**
   * Federated: the upstream proved several factors (`amr` holds `mfa`, or two factor kinds) AND
   * the provider is configured as trusted for it; an untrusted provider's word counts as one factor.
   */
  upstreamMfa?: boolean;
  /**
   * Federated: the upstream's `acr` (OIDC Core §2), recorded only when the provider is trusted for
   * its assurance claims; what the ID token then says unless the request demanded one of ours.
   */
  upstreamAcr?: string;
  /**
   * Federated: RFC 8176 values of a proof made here during the same sign-in (`pwd` for the
   * password that linked the upstream identity to an existing account).
   */
  localAmr?: string[];
}

interface MethodDefinition {
  /** RFC 8176 §2 values this method contributes to `amr`. */
  amr(completed: CompletedMethod): readonly string[];
  /** The factor kinds it proves. */
  factors(completed: CompletedMethod): readonly FactorKind[];
  /** An origin-bound credential that a phishing site cannot relay (WebAuthn §13.4.9). */
  phishingResistant: boolean;
  /** Counts as the second factor after the password (otp page, passkey as second factor). */
  secondFactor: boolean;
}

/**
 * The sign-in methods, and what each proves. RFC 8176 §2: `pwd` password, `otp` one-time
 * password, `hwk` proof of possession of a hardware-secured key, `swk` of a software-secured key,
 * `user` user presence/verification test, `mfa` multiple factors. A recovery code is a one-time
 * code the user keeps (`otp`, possession); a passkey is device-bound (`hwk`) unless synced (`swk`),
 * and with user verification it also proves knowledge or inherence (`user`).
 */
export const AUTHENTICATION_METHODS = {
  password: {
    amr: () => ['pwd'],
    factors: () => ['knowledge'],
    phishingResistant: false,
    secondFactor: false,
  },
  /**
   * Kerberos through HTTP Negotiate (RFC 4559). RFC 8176 has no Kerberos value; `wia` ("Windows
   * integrated authentication", §2) names exactly this browser-to-server step, whatever the desktop
   * runs. One factor: the ticket stands for the desktop sign-in (a password, as far as this server
   * can tell), so a `require_mfa` client still asks for a second factor (README "Kerberos").
   */
  kerberos: {
    amr: () => ['wia'],
    factors: () => ['knowledge'],
    phishingResistant: false,
    secondFactor: false,
  },
  /**
   * Signed in at an upstream OpenID provider (README "Upstream identity providers"). RFC 8176 §2
   * `fed`: "use of a federated assertion", followed by the upstream's own `amr` values. One factor
   * unless the provider is trusted for its multi-factor claims, so a `require_mfa` client asks for
   * our second factor after an untrusted upstream.
   */
  federated: {
    // An untrusted upstream's `mfa` is dropped: our `amr` must not claim what our `acr` does not.
    amr: (completed) => [
      'fed',
      ...(completed.upstreamAmr ?? []).filter((value) => completed.upstreamMfa || value !== 'mfa'),
      ...(completed.localAmr ?? []),
    ],
    factors: (completed) => (completed.upstreamMfa ? ['knowledge', 'possession'] : ['knowledge']),
    phishingResistant: false,
    secondFactor: false,
  },
  otp: { amr: () => ['otp'], factors: () => ['possession'], phishingResistant: false, secondFactor: true },
  recovery_code: {
    amr: () => ['otp'],
    factors: () => ['possession'],
    phishingResistant: false,
    secondFactor: true,
  },
  passkey: {
    amr: (completed) => [completed.synced ? 'swk' : 'hwk', ...(completed.userVerified ? ['user'] : [])],
    factors: (completed) => (completed.userVerified ? ['possession', 'inherence'] : ['possession']),
    phishingResistant: true,
    secondFactor: true,
  },
} as const satisfies Record<string, MethodDefinition>;

export type AuthenticationMethod = keyof typeof AUTHENTICATION_METHODS;

const definitionOf = (method: AuthenticationMethod): MethodDefinition => AUTHENTICATION_METHODS[method];

/**
 * The `acr` values this server issues, weakest first (README "Authentication levels"). A request
 * for a level is met by that level or any later one.
 */
export const ACR_VALUES = {
  /** One factor: a password, a Kerberos ticket (or a passkey without user verification). */
  password: 'urn:oidc-orders:acr:password',
  /** Two factor kinds: password plus authenticator app, recovery code or passkey. */
  mfa: 'urn:oidc-orders:acr:mfa',
  /** Multi-factor including an origin-bound WebAuthn credential (a passkey). */
  phishingResistant: 'urn:oidc-orders:acr:phishing-resistant',
} as const;
export type AcrValue = (typeof ACR_VALUES)[keyof typeof ACR_VALUES];

/** OIDC Discovery §3 `acr_values_supported`, weakest first. */
export const ACR_VALUES_SUPPORTED: readonly AcrValue[] = [
  ACR_VALUES.password,
  ACR_VALUES.mfa,
  ACR_VALUES.phishingResistant,
];

const rankOf = (acr: AcrValue) => ACR_VALUES_SUPPORTED.indexOf(acr);

/** Whether `achieved` meets `required` (the same level or a stronger one). */
export function acrSatisfies(achieved: AcrValue, required: AcrValue): boolean {
  return rankOf(achieved) >= rankOf(required);
}

const factorKindsOf = (methods: readonly CompletedMethod[]) =>
  new Set(methods.flatMap((completed) => definitionOf(completed.method).factors(completed)));

/** RFC 8176 `amr` of the completed methods, each value once, `mfa` when two factor kinds were proven. */
export function amrOf(methods: readonly CompletedMethod[]): string[] {
  const values = new Set(methods.flatMap((completed) => definitionOf(completed.method).amr(completed)));
  if (factorKindsOf(methods).size >= 2) values.add('mfa');
  return [...values];
}

/** The `acr` the completed methods reach, or `null` when nothing was completed. */
export function acrOf(methods: readonly CompletedMethod[]): AcrValue | null {
  if (methods.length === 0) return null;
  if (factorKindsOf(methods).size < 2) return ACR_VALUES.password;
  const phishingResistant = methods.some((completed) => definitionOf(completed.method).phishingResistant);
  return phishingResistant ? ACR_VALUES.phishingResistant : ACR_VALUES.mfa;
}

/**
 * The `acr` to issue (OIDC Core §2): the trusted upstream's own value when the session was
 * federated through a provider trusted for it, else ours (`acrOf`). OIDC Core §3.1.2.1 returns
 * "the Authentication Context Class satisfied": a request that named the upstream's value gets
 * it, but one that named a level of ours, or needed more than one factor (`require_mfa`, an
 * enrolled factor), gets ours, the value its check was made against. Our second factor completed
 * after the upstream also makes the level ours: the upstream's value no longer describes it.
 */
export function issuedAcrOf(
  methods: readonly CompletedMethod[],
  demand: { acrValues: readonly string[]; required: AcrValue },
): string | null {
  const ours = acrOf(methods);
  const upstream = methods.length === 1 ? methods[0]?.upstreamAcr : undefined;
  if (upstream === undefined) return ours;
  if (demand.acrValues.includes(upstream)) return upstream;
  const oursDemanded = requestedAcr(demand.acrValues) !== null || demand.required !== ACR_VALUES.password;
  return oursDemanded ? ours : upstream;
}

/** OIDC `auth_time` of a session: when its latest method succeeded. */
export function authTimeOf(methods: readonly CompletedMethod[]): number | null {
  return methods.length === 0 ? null : Math.max(...methods.map((completed) => completed.at));
}

/**
 * OIDC Core §3.1.2.1 `acr_values` ("in order of preference"): the weakest of the values this
 * server knows, since meeting any one of them answers the request; unknown values are ignored
 * (the claim is voluntary, §5.5.1.1). `null` when none is known.
 */
export function requestedAcr(acrValues: readonly string[]): AcrValue | null {
  const known = ACR_VALUES_SUPPORTED.filter((value) => acrValues.includes(value));
  return known[0] ?? null;
}

/** Everything that can demand a level of one sign-in. */
export interface LevelDemands {
  /** `acr_values` of the request. */
  acrValues: readonly string[];
  /** Seed client member `require_mfa`. */
  clientRequiresMfa: boolean;
  /** Seed user member `mfa_required`. */
  userRequiresMfa: boolean;
  /** The user enrolled a second factor: then it is always asked after the password. */
  userHasSecondFactor: boolean;
  /** A resource of the request (or of its scopes) has `require_mfa`. */
  resourceRequiresMfa: boolean;
}

/** The level a sign-in must reach before a code (or device approval) is issued. */
export function requiredAcr(demands: LevelDemands): AcrValue {
  const floor =
    demands.clientRequiresMfa ||
    demands.userRequiresMfa ||
    demands.userHasSecondFactor ||
    demands.resourceRequiresMfa
      ? ACR_VALUES.mfa
      : ACR_VALUES.password;
  const requested = requestedAcr(demands.acrValues);
  return requested !== null && !acrSatisfies(floor, requested) ? requested : floor;
}

/** The second factors a user has enrolled. */
export interface EnrolledFactors {
  otp: boolean;
  passkey: boolean;
  recoveryCodes: boolean;
}

/**
 * After the session's methods, what the user still has to do to reach `required`:
 * - `satisfied`: nothing;
 * - `second_factor`: prove a second factor (step-up: the password is never asked again);
 *   `passkeyOnly` when only a passkey can reach the level;
 * - `enrol`: the user has no factor that can reach the level and must enrol one first.
 * The caller answers `interaction_required` to `prompt=none` for anything but `satisfied`
 * (OIDC Core §3.1.2.6).
 */
export type LevelStep =
  | { kind: 'satisfied' }
  | { kind: 'second_factor'; passkeyOnly: boolean }
  | { kind: 'enrol'; passkeyOnly: boolean };

export function nextLevelStep(
  methods: readonly CompletedMethod[],
  required: AcrValue,
  enrolled: EnrolledFactors,
): LevelStep {
  const achieved = acrOf(methods);
  if (achieved !== null && acrSatisfies(achieved, required)) return { kind: 'satisfied' };
  const passkeyOnly = required === ACR_VALUES.phishingResistant;
  const canReach = passkeyOnly
    ? enrolled.passkey
    : enrolled.otp || enrolled.passkey || enrolled.recoveryCodes;
  return canReach ? { kind: 'second_factor', passkeyOnly } : { kind: 'enrol', passkeyOnly };
}

/** Whether a second-factor method is one the methods table knows as such. */
export function isSecondFactorMethod(method: AuthenticationMethod): boolean {
  return definitionOf(method).secondFactor;
}

/**
 * Records a method in a session's list: a new password sign-in starts the list over (a fresh
 * authentication, OIDC Core §3.1.2.1 prompt=login / max_age), any other method is added to it.
 */
export function withCompletedMethod(
  methods: readonly CompletedMethod[],
  completed: CompletedMethod,
): CompletedMethod[] {
  if (!definitionOf(completed.method).secondFactor) return [completed];
  return [...methods.filter((existing) => existing.method !== completed.method), completed];
}

/** RFC 9470-style level check for tokens: whether a grant's `acr` meets `required`. */
export function grantMeetsAcr(grantAcr: string | null | undefined, required: AcrValue): boolean {
  const known = ACR_VALUES_SUPPORTED.find((value) => value === grantAcr);
  // Grants made before levels were recorded count as password sign-ins.
  return acrSatisfies(known ?? ACR_VALUES.password, required);
}
