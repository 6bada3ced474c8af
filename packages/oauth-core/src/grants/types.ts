import type { ProtocolConfig } from '../config.js';
import type { Client, GrantType, TokenResponse } from '../model.js';
import type { Clock, RandomSource } from '../runtime.js';
import type { ProtocolStores } from '../storage/index.js';
import type { TokenSigner, TokenVerifier } from '../tokens/signer.js';

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

/** What a grant handler may use. Time, randomness and signing are inputs, never globals. */
export interface GrantContext {
  stores: ProtocolStores;
  clock: Clock;
  random: RandomSource;
  signer: TokenSigner;
  config: ProtocolConfig;
  /** Verifies JWTs this server issued (token exchange reads JWT subject and actor tokens). */
  verifier?: TokenVerifier;
}

/**
 * One module per grant type (the node-oidc-provider / fosite shape). `handle` validates
 * everything first with no side effects, then consumes, rotates and issues in one atomic unit
 * (`stores.transaction`, or a store's single-statement fast path: see `redemption.ts`), so a
 * failure leaves nothing half-written.
 */
export interface GrantHandler {
  readonly grantType: GrantType;
  /**
   * Parameters this grant reads, beyond `grant_type` and client authentication. Any other is
   * removed before `handle` (handleTokenRequest), so a grant never acts on one it did not declare.
   */
  readonly parameters: readonly string[];
  /** Those of `parameters` that may be sent more than once (RFC 8707 §2 `resource`, RFC 8693 `audience`). */
  readonly repeatableParameters?: readonly string[];
  handle(request: TokenRequest, context: GrantContext): Promise<TokenResponse>;
}
