import type { ProtocolConfig } from '../config.js';
import type { Client, GrantType, TokenResponse } from '../model.js';
import type { Clock, RandomSource } from '../runtime.js';
import type { TokenSigner } from '../tokens/signer.js';

/** A token request after client authentication, as the HTTP layer hands it over. */
export interface TokenRequest {
  /** Form parameters. The HTTP layer has already rejected repeated parameters (RFC 6749 §3.2). */
  params: Readonly<Record<string, string | undefined>>;
  /** RFC 8707 §2: `resource` is the one parameter that may repeat. */
  resources: readonly string[];
  /** RFC 8693 §2.1: `audience` values of a token exchange (may repeat, like `resource`). */
  audiences?: readonly string[];
  client: Client;
  /** `true` when the client proved its secret; `false` for a public client identified by client_id. */
  clientAuthenticated: boolean;
  /** RFC 9449: thumbprint of the key of a verified DPoP proof, or `null` when none was sent. */
  dpopJkt: string | null;
}

/** What minting a token takes: time, randomness, signing keys and the protocol settings, never globals. */
export interface MintingDependencies {
  clock: Clock;
  random: RandomSource;
  signer: TokenSigner;
  config: ProtocolConfig;
}

/**
 * Reuse of a single-use credential revoked its whole grant: an authorization code presented again
 * (RFC 6749 §4.1.2), a rotated refresh token presented again (RFC 9700 §4.14.2), or a redeemed
 * device code polled again (the same rule for the code's device twin).
 */
export interface GrantRevokedEvent {
  reason: 'authorization_code_reused' | 'refresh_token_reused' | 'device_code_reused';
  /** The grant type of the request that presented the credential again. */
  grantType: GrantType;
  grantId: string;
  clientId: string;
  /** The user of the revoked grant. */
  sub: string;
}

/**
 * What the protocol layer reports to the server. oauth-core does no logging: the server audits
 * security events from these hooks.
 */
export interface GrantEvents {
  /** Called once the revocation is stored, before the grant answers `invalid_grant`. Must not throw. */
  grantRevoked(event: GrantRevokedEvent): void;
}

/**
 * One module per grant type (the node-oidc-provider / fosite shape). `handle` validates
 * everything first with no side effects, then consumes, rotates and issues in one atomic unit
 * (`stores.transaction`, or a store's single-statement fast path: see `redemption.ts`), so a
 * failure leaves nothing half-written.
 *
 * `Deps` is what this grant uses and nothing more (ory/fosite's per-handler `Config` interface):
 * the stores it reads and writes, the verifier, the event hooks. A registry needs every `Deps` of
 * its grants at once (`RegistryDependencies`), so registering a grant whose dependency the server
 * does not supply fails to compile.
 */
export interface GrantHandler<Deps> {
  readonly grantType: GrantType;
  /**
   * Parameters this grant reads, beyond `grant_type` and client authentication. Any other is
   * removed before `handle` (handleTokenRequest), so a grant never acts on one it did not declare.
   */
  readonly parameters: readonly string[];
  /** Those of `parameters` that may be sent more than once (RFC 8707 §2 `resource`, RFC 8693 `audience`). */
  readonly repeatableParameters?: readonly string[];
  // A property, not a method: TypeScript then checks `deps` contravariantly (strictFunctionTypes), so a
  // grant needing more than a registry is given is not assignable to that registry's handlers.
  readonly handle: (request: TokenRequest, deps: Deps) => Promise<TokenResponse>;
}

/** Any grant, whatever it needs: for code that reads only `grantType` and the parameters. */
export type AnyGrantHandler = GrantHandler<never>;

/** The `Deps` one grant declares. */
export type GrantDependenciesOf<Handler> = Handler extends GrantHandler<infer Deps> ? Deps : never;

/**
 * What a list of grants needs together: every grant's `Deps` at once (their intersection). Each
 * grant's `Deps` is put in a parameter position; inferring that parameter from the union of those
 * functions yields the intersection.
 */
export type RegistryDependencies<Handlers extends readonly AnyGrantHandler[]> = (
  Handlers[number] extends infer Handler
    ? Handler extends AnyGrantHandler
      ? (deps: GrantDependenciesOf<Handler>) => void
      : never
    : never
) extends (deps: infer All) => void
  ? All
  : never;
