/**
 * The one clock tolerance for JWTs that clients sign and we verify: DPoP proofs (RFC 9449),
 * `private_key_jwt` client assertions (RFC 7523) and request objects (RFC 9101).
 *
 * FAPI 2.0 Security Profile §5.3.2.1: "to accommodate clock offsets, shall accept JWTs with an
 * `iat` or `nbf` timestamp between 0 and 10 seconds in the future but shall reject JWTs with an
 * `iat` or `nbf` timestamp greater than 60 seconds in the future". Accepting exactly up to 10 s
 * ahead, and nothing further, satisfies both halves for every client, FAPI profile or not.
 */
export const JWT_CLOCK_SKEW_SECONDS = 10;
