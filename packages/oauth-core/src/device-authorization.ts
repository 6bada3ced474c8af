import { invalidScope, invalidTarget, serverError, unauthorizedClient } from './errors.js';
import { type Client, type DeviceCode, GRANT_TYPES } from './model.js';
import type { Clock, RandomSource } from './runtime.js';
import { parseScope } from './scopes.js';
import type { ProtocolStores } from './storage/index.js';
import { generateOpaqueToken, hashToken } from './tokens/opaque.js';
import { formatUserCode, generateUserCode } from './user-code.js';

/** Server settings of the device flow (seconds). */
export interface DeviceAuthorizationSettings {
  /** RFC 8628 §3.2 `verification_uri`: the page where the user types the code. */
  verificationUri: string;
  /** RFC 8628 §3.2 `expires_in`. */
  deviceCodeTtl: number;
  /** RFC 8628 §3.2 `interval`: minimum seconds between polls. */
  pollInterval: number;
}

export const DEFAULT_DEVICE_CODE_TTL = 600;
/** RFC 8628 §3.2: "If no value is provided, clients MUST use 5 as the default." */
export const DEFAULT_DEVICE_POLL_INTERVAL = 5;

/** A device authorization request after client authentication (RFC 8628 §3.1). */
export interface DeviceAuthorizationRequest {
  /** Form parameters; the HTTP layer has already rejected repeated ones. */
  params: Readonly<Record<string, string | undefined>>;
  /** RFC 8707 `resource` values (may repeat). */
  resources: readonly string[];
  client: Client;
}

/** RFC 8628 §3.2 device authorization response. */
export interface DeviceAuthorizationResponse {
  device_code: string;
  user_code: string;
  verification_uri: string;
  verification_uri_complete: string;
  expires_in: number;
  interval: number;
}

export interface DeviceAuthorizationContext {
  stores: ProtocolStores;
  clock: Clock;
  random: RandomSource;
  settings: DeviceAuthorizationSettings;
}

/** Expired codes are kept this long, so a late poll still gets `expired_token` rather than `invalid_grant`. */
const EXPIRED_DEVICE_CODE_RETENTION = 3600;
/** Redraws of the user code when it collides with a stored one (at 2.56e10 codes, hardly ever once). */
const USER_CODE_ATTEMPTS = 5;

/**
 * RFC 8628 §3.1–3.2: validates the request and issues a device code and a user code.
 * - The client must be allowed the device grant → else `unauthorized_client`.
 * - `scope` is required (RFC 6749 §3.3: no default scope here) and each scope must be allowed to the
 *   client → else `invalid_scope`. The user's own restriction applies at approval.
 * - RFC 8707 `resource` values must be known → else `invalid_target`; they are bound to the grant.
 * The device code (256 random bits) and the user code are stored hashed only.
 */
export async function authorizeDevice(
  request: DeviceAuthorizationRequest,
  context: DeviceAuthorizationContext,
): Promise<DeviceAuthorizationResponse> {
  const { client, params } = request;
  const { stores, clock, random, settings } = context;
  if (!client.grantTypes.includes(GRANT_TYPES.deviceCode)) {
    throw unauthorizedClient('client lacks the device_code grant');
  }
  const scopes = parseScope(params.scope);
  if (scopes.length === 0) throw invalidScope('scope is required');
  if (scopes.some((scope) => !client.scopes.includes(scope))) {
    throw invalidScope('scope not allowed for the client');
  }
  const resources: string[] = [];
  for (const id of request.resources) {
    // RFC 8707 §2: an unknown resource → invalid_target.
    if ((await stores.resources.findResource(id)) === null) {
      throw invalidTarget(`unknown resource ${id.slice(0, 200)}`);
    }
    if (!resources.includes(id)) resources.push(id);
  }

  const now = clock.nowSeconds();
  // Housekeeping on the write path keeps the table small without a scheduler.
  await stores.deviceCodes.deleteExpiredDeviceCodes(now - EXPIRED_DEVICE_CODE_RETENTION);

  const deviceCode = generateOpaqueToken(random);
  for (let attempt = 0; attempt < USER_CODE_ATTEMPTS; attempt++) {
    const userCode = generateUserCode(random);
    const record: DeviceCode = {
      deviceCodeHash: hashToken(deviceCode),
      userCodeHash: hashToken(userCode),
      clientId: client.clientId,
      scopes,
      resources,
      createdAt: now,
      expiresAt: now + settings.deviceCodeTtl,
      interval: settings.pollInterval,
      lastPolledAt: null,
      status: 'pending',
      grantId: null,
      sub: null,
      decidedAt: null,
      redeemedAt: null,
    };
    if (!(await stores.deviceCodes.createDeviceCode(record))) continue;
    const shown = formatUserCode(userCode);
    return {
      device_code: deviceCode,
      user_code: shown,
      verification_uri: settings.verificationUri,
      // RFC 8628 §3.3.1: the URI with the code in it, for QR codes and links.
      verification_uri_complete: verificationUriComplete(settings.verificationUri, shown),
      expires_in: settings.deviceCodeTtl,
      interval: settings.pollInterval,
    };
  }
  throw serverError(`no free user code after ${USER_CODE_ATTEMPTS} attempts`);
}

export function verificationUriComplete(verificationUri: string, userCode: string): string {
  const url = new URL(verificationUri);
  url.searchParams.set('user_code', userCode);
  return url.toString();
}
