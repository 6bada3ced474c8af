/** The slice of server configuration the protocol layer reads. Seconds throughout. */
export interface ProtocolConfig {
  /** Exactly as in `iss` and discovery. */
  issuer: string;
  /** RFC 6749 §4.1.2: short-lived; default 60. */
  authorizationCodeTtl: number;
  /** Default 3600. */
  idTokenTtl: number;
  /** Lifetime of access tokens that name no resource (UserInfo only); default 300. */
  defaultAccessTokenTtl: number;
}

export const defaultProtocolConfig = (issuer: string): ProtocolConfig => ({
  issuer,
  authorizationCodeTtl: 60,
  idTokenTtl: 3600,
  defaultAccessTokenTtl: 300,
});
