import {
  ACR_VALUES,
  type AcrValue,
  type AuthorizationParams,
  type AuthorizationRequest,
  accessDenied,
  amrOf,
  type Clock,
  type EnrolledFactors,
  grantableScopes,
  issueAuthorizationCode,
  issuedAcrOf,
  needsAuthentication,
  needsConsent,
  nextLevelStep,
  OAuthError,
  type ProtocolConfig,
  type ProtocolStores,
  type PushedAuthorizationRequestStore,
  type RandomSource,
  requiredAcr,
  resolveAudiences,
  spendPushedAuthorizationRequest,
  type User,
  validateAuthorizationRequest,
} from '@oidc-orders/oauth-core';
import type { SignInSubject } from '../accounts/account-store.js';
import { hashCookieValue } from './cookie-hash.js';
import type {
  Interaction,
  InteractionRepository,
  StoredAuthorizationRequest,
} from './interaction-repository.js';
import { annotateInteractionTrace } from './interaction-trace.js';
import type { SsoSession } from './sso-session-repository.js';

/**
 * The authorization request's journey through the browser (README "Interaction lifecycle"):
 * validate (oauth-core) → authenticate (SSO session or login page) → consent (remembered, skipped,
 * or the consent page) → issue the code (oauth-core). Every step re-reads the session and the
 * interaction from the database, so any instance behind a load balancer can serve the next step.
 */
export interface AuthorizationFlowDeps {
  stores: ProtocolStores;
  interactions: InteractionRepository;
  clock: Clock;
  random: RandomSource;
  protocolConfig: ProtocolConfig;
  /** Seconds an interaction waits for the user. */
  interactionTtl: number;
  /** RFC 9126 pushed requests, spent when their code is issued. */
  pushedRequests: PushedAuthorizationRequestStore;
  /**
   * The session's user with the second factors they have enrolled (authenticator apps, passkeys,
   * recovery codes) and the scopes they approved for `clientId` so far, or `null` when the account
   * is gone or disabled: read together, since every step needs all three.
   */
  signInSubject: SignInSubjectReader;
}

export type { SignInSubject };

/** Reads the sign-in subject of `sub` for `clientId` (`AuthorizationFlowDeps.signInSubject`). */
export type SignInSubjectReader = (sub: string, clientId: string) => Promise<SignInSubject | null>;

export type NextStep =
  | { kind: 'login' }
  /**
   * The session's level is too low and the user has a factor that reaches it: the otp page, or
   * the passkey page alone when `passkeyOnly` (only a passkey reaches the phishing-resistant level).
   */
  | { kind: 'otp'; user: User; passkeyOnly: boolean }
  /**
   * The level needs a factor the user has not enrolled: enrolment first (the enrol page, leading
   * with a passkey when `passkeyOnly`).
   */
  | { kind: 'enrol'; user: User; passkeyOnly: boolean }
  /** `session` and `required` as `complete` will carry them once the user approves (`approvedStep`). */
  | { kind: 'consent'; user: User; scopes: string[]; session: SsoSession; required: AcrValue }
  /** `required`: the level the sign-in had to reach (the issued `acr` follows from it). */
  | { kind: 'complete'; user: User; scopes: string[]; session: SsoSession; required: AcrValue }
  | { kind: 'error'; error: OAuthError };

/**
 * What `nextStep` reads from a request: who asks, for which scopes, and the OIDC sign-in demands.
 * An `AuthorizationRequest` is one; the device verification page builds one for a device code.
 */
export type SignInRequirements = Pick<AuthorizationRequest, 'client' | 'scopes' | 'prompt' | 'maxAge'> &
  Partial<Pick<AuthorizationRequest, 'acrValues' | 'resources'>>;

/**
 * RFC 8176 `amr` and OIDC `acr` of a session, as recorded into the grant; `demand` is what the
 * request asked (`acr_values`) and the level it had to reach (oauth-core `issuedAcrOf`).
 */
export const levelOf = (
  session: SsoSession,
  demand: { acrValues: readonly string[]; required: AcrValue },
) => ({
  amr: amrOf(session.methods),
  acr: issuedAcrOf(session.methods, demand),
});

type ApprovableStep = Extract<NextStep, { kind: 'consent' | 'complete' }>;

/**
 * The step once the user approved `step.scopes` on the consent page. The approval is the one thing
 * `needsConsent` waited for, so the request completes with those scopes at the level it required:
 * what `nextStep` would answer if asked again, without reading it all again.
 */
export const approvedStep = (step: ApprovableStep): Extract<NextStep, { kind: 'complete' }> => ({
  kind: 'complete',
  user: step.user,
  scopes: step.scopes,
  session: step.session,
  required: step.required,
});

export interface InteractionProgress {
  loginSid: string | null;
  approvedScopes: readonly string[] | null;
}

// OIDC Core §3.1.2.6: the errors of prompt=none when the user would have to act.
const loginRequired = () =>
  new OAuthError('login_required', { description: 'the user must sign in', detail: 'prompt=none' });
const interactionRequired = () =>
  new OAuthError('interaction_required', {
    description: 'the user must complete a further authentication step',
    detail: 'prompt=none below the required level',
  });
const consentRequired = () =>
  new OAuthError('consent_required', {
    description: 'the user must approve the request',
    detail: 'prompt=none',
  });

export function createAuthorizationFlow(deps: AuthorizationFlowDeps) {
  const { stores, interactions, clock } = deps;

  /** Whether a resource of the request (named, or owning a requested scope) demands multi-factor. */
  async function resourceRequiresMfa(request: SignInRequirements): Promise<boolean> {
    const all = await stores.resources.listResources();
    const named = request.resources ?? [];
    return resolveAudiences(request.scopes, named, all).some((resource) => resource.requireMfa === true);
  }

  /**
   * The level the request requires (oauth-core `requiredAcr`) and the second-factor step the
   * session still needs to reach it (`nextLevelStep`), `null` when it met the level. OIDC Core §3.1.2.1 `acr_values` triggers step-up here.
   */
  async function levelStep(
    request: SignInRequirements,
    session: SsoSession,
    user: User,
    enrolled: EnrolledFactors,
  ) {
    const required = requiredAcr({
      acrValues: request.acrValues ?? [],
      clientRequiresMfa: request.client.requireMfa === true,
      userRequiresMfa: user.mfaRequired === true,
      userHasSecondFactor: enrolled.otp || enrolled.passkey,
      resourceRequiresMfa: await resourceRequiresMfa(request),
    });
    return { required, step: stepToLevel(session, user, required, enrolled) };
  }

  function stepToLevel(session: SsoSession, user: User, required: AcrValue, enrolled: EnrolledFactors) {
    let step = nextLevelStep(session.methods, required, enrolled);
    // OIDC Core §5.5.1.1: a requested acr is a voluntary claim. Only a passkey reaches the
    // phishing-resistant level. A user without one who has another factor proves that factor and
    // the request is answered at the multi-factor level (the ID token's `acr` tells the client):
    // enrolling a passkey during sign-in after the password alone would let a stolen password add
    // a factor beside the owner's. A user with no factor at all enrols one, a passkey first.
    if (step.kind === 'enrol' && step.passkeyOnly) {
      const multiFactor = nextLevelStep(session.methods, ACR_VALUES.mfa, enrolled);
      if (multiFactor.kind !== 'enrol') step = multiFactor;
    }
    if (step.kind === 'satisfied') return null;
    return {
      kind: step.kind === 'second_factor' ? ('otp' as const) : ('enrol' as const),
      user,
      passkeyOnly: step.passkeyOnly,
    };
  }

  return {
    /** RFC 9126: /authorize reads pushed requests here; `issueCode` spends them. */
    pushedRequests: deps.pushedRequests,

    /** The store's reader of sign-in subjects, which `nextStep` uses unless given another. */
    signInSubject: deps.signInSubject,

    /**
     * oauth-core validation of parameters as parsed (a repeated name is an array, which it
     * rejects); throws `AuthorizationRequestError` (redirectable or not).
     */
    validate(params: AuthorizationParams): Promise<AuthorizationRequest> {
      return validateAuthorizationRequest(params, { clients: stores.clients, resources: stores.resources });
    },

    /** Re-validates a stored request (every interaction step: the client may have changed). */
    revalidate(stored: StoredAuthorizationRequest): Promise<AuthorizationRequest> {
      return validateAuthorizationRequest(
        { ...stored.params, resource: stored.resources },
        { clients: stores.clients, resources: stores.resources },
      );
    },

    /**
     * `readSubject`: where a step that decides before it changes anything takes the subject from
     * (the interaction pages' guard read it with the interaction); the store by default.
     */
    async nextStep(
      request: SignInRequirements,
      session: SsoSession | null,
      progress: InteractionProgress | null,
      readSubject: SignInSubjectReader = deps.signInSubject,
    ): Promise<NextStep> {
      const promptNone = request.prompt.includes('none');
      const now = clock.nowSeconds();
      if (needsAuthentication({ prompt: request.prompt, maxAge: request.maxAge }, session, progress, now)) {
        return promptNone ? { kind: 'error', error: loginRequired() } : { kind: 'login' };
      }
      const activeSession = session as SsoSession;
      const subject = await readSubject(activeSession.sub, request.client.clientId);
      // The account was removed since the session began: the session no longer names anyone.
      if (subject === null) return promptNone ? { kind: 'error', error: loginRequired() } : { kind: 'login' };
      const { user, enrolled } = subject;

      const { required, step: level } = await levelStep(request, activeSession, user, enrolled);
      if (level !== null) return promptNone ? { kind: 'error', error: interactionRequired() } : level;

      const scopes = grantableScopes(request.scopes, request.client, user);
      // The user's own restriction leaves nothing to grant: asking for consent would be pointless.
      if (scopes.length === 0) {
        return {
          kind: 'error',
          error: accessDenied('none of the requested scopes can be granted', 'empty grant'),
        };
      }
      // A metadata-document client is whoever hosts the document today: its consent is asked every
      // time, never remembered (draft-ietf-oauth-client-id-metadata-document §6).
      const rememberedScopes = request.client.fromMetadataDocument ? [] : subject.rememberedScopes;
      const consentNeeded = needsConsent(
        {
          prompt: request.prompt,
          skipConsent: request.client.skipConsent,
          grantedScopes: scopes,
          rememberedScopes,
        },
        progress,
      );
      if (consentNeeded) {
        return promptNone
          ? { kind: 'error', error: consentRequired() }
          : { kind: 'consent', user, scopes, session: activeSession, required };
      }
      return { kind: 'complete', user, scopes, session: activeSession, required };
    },

    /**
     * Parks a validated request that needs the user, bound to this browser. With `deviceCodeHash`
     * the interaction approves that device code (RFC 8628) and `stored` is empty.
     */
    async startInteraction(
      stored: StoredAuthorizationRequest,
      browserKey: string,
      deviceCodeHash?: string,
    ): Promise<Interaction> {
      const now = clock.nowSeconds();
      const interaction: Interaction = {
        id: Buffer.from(deps.random.bytes(18)).toString('base64url'),
        browserHash: hashCookieValue(browserKey),
        request: stored,
        loginSid: null,
        approvedScopes: null,
        ...(deviceCodeHash === undefined ? {} : { deviceCodeHash }),
        createdAt: now,
        expiresAt: now + deps.interactionTtl,
      };
      await interactions.create(interaction);
      annotateInteractionTrace(interaction.id);
      return interaction;
    },

    /**
     * oauth-core creates the grant and the code in one transaction (with sid, auth_time, nonce).
     * A request from PAR is spent first (RFC 9126 §7.3): of two browsers finishing it, one gets
     * the code, the other an error page. May throw a redirectable `AuthorizationRequestError`
     * (`access_denied`).
     */
    async issueCode(
      request: AuthorizationRequest,
      step: Extract<NextStep, { kind: 'complete' }>,
      pushedRequestUriHash: string | undefined,
    ) {
      if (pushedRequestUriHash !== undefined) {
        await spendPushedAuthorizationRequest(pushedRequestUriHash, request.client.clientId, {
          store: deps.pushedRequests,
          clock,
        });
      }
      const { code } = await issueAuthorizationCode(
        request,
        {
          sub: step.user.sub,
          scopes: step.scopes,
          sid: step.session.id,
          authTime: step.session.authTime,
          ...levelOf(step.session, { acrValues: request.acrValues, required: step.required }),
        },
        { stores, clock, random: deps.random, config: deps.protocolConfig },
      );
      return code;
    },
  };
}

export type AuthorizationFlow = ReturnType<typeof createAuthorizationFlow>;
