import { describe, expect, it } from 'vitest';
import {
  checkUpdateIdentity,
  needsClientSecret,
  type RegistrationPolicy,
  readRegistrationRequest,
  registeredClient,
  registrationResponse,
} from '../src/dynamic-registration.js';
import { isOAuthError } from '../src/errors.js';

/**
 * RFC 7591 registration requests under the operator's policy: the defaults, the caps and every
 * error code of §3.2.2 that applies. The HTTP side is in the auth server's client-registration test.
 */

const POLICY: RegistrationPolicy = {
  scopes: ['openid', 'profile', 'orders.read'],
  grantTypes: ['authorization_code', 'refresh_token'],
};
const LIFETIMES = { refreshTokenAbsoluteTtl: 2_592_000, refreshTokenSlidingTtl: 1_209_600 };
const PUBLIC_APP = {
  redirect_uris: ['http://127.0.0.1:8123/callback'],
  token_endpoint_auth_method: 'none',
  client_name: 'Agent',
};

function errorCode(action: () => unknown): string | undefined {
  try {
    action();
    return undefined;
  } catch (error) {
    return isOAuthError(error) ? error.code : 'not an OAuthError';
  }
}

describe('readRegistrationRequest: defaults (RFC 7591 §2)', () => {
  it('fills grant_types, response_types, the auth method and the policy scope', () => {
    const metadata = readRegistrationRequest({ redirect_uris: ['https://app.example/cb'] }, POLICY);

    expect(metadata).toEqual({
      redirect_uris: ['https://app.example/cb'],
      grant_types: ['authorization_code'],
      response_types: ['code'],
      token_endpoint_auth_method: 'client_secret_basic',
      scope: 'openid profile orders.read',
    });
    expect(needsClientSecret(metadata)).toBe(true);
  });

  it('ignores members it does not understand', () => {
    const metadata = readRegistrationRequest({ ...PUBLIC_APP, made_up: 1 }, POLICY);

    expect(metadata).not.toHaveProperty('made_up');
    expect(needsClientSecret(metadata)).toBe(false);
  });
});

describe('readRegistrationRequest: refusals (RFC 7591 §3.2.2)', () => {
  it.each([
    ['a scope beyond the policy', 'invalid_client_metadata', { ...PUBLIC_APP, scope: 'openid admin.write' }],
    [
      'a grant type beyond the policy',
      'invalid_client_metadata',
      { ...PUBLIC_APP, grant_types: ['client_credentials'] },
    ],
    ['the password grant', 'invalid_client_metadata', { ...PUBLIC_APP, grant_types: ['password'] }],
    [
      'a response type other than code',
      'invalid_client_metadata',
      { ...PUBLIC_APP, response_types: ['token'] },
    ],
    [
      'code without authorization_code',
      'invalid_client_metadata',
      { ...PUBLIC_APP, grant_types: ['refresh_token'] },
    ],
    [
      'an unknown auth method',
      'invalid_client_metadata',
      { ...PUBLIC_APP, token_endpoint_auth_method: 'tls_client_auth' },
    ],
    ['a member of the wrong type', 'invalid_client_metadata', { ...PUBLIC_APP, client_name: 7 }],
    ['not an object', 'invalid_client_metadata', ['x']],
    [
      'an http redirect URI off loopback',
      'invalid_redirect_uri',
      { ...PUBLIC_APP, redirect_uris: ['http://app.example/cb'] },
    ],
    [
      'a redirect URI with a fragment',
      'invalid_redirect_uri',
      { ...PUBLIC_APP, redirect_uris: ['https://app.example/cb#x'] },
    ],
    ['a relative redirect URI', 'invalid_redirect_uri', { ...PUBLIC_APP, redirect_uris: ['/cb'] }],
    [
      'a pairwise subject type (only public is offered)',
      'invalid_client_metadata',
      { ...PUBLIC_APP, subject_type: 'pairwise', sector_identifier_uri: 'https://app.example/sector.json' },
    ],
    [
      'a software statement',
      'unapproved_software_statement',
      { ...PUBLIC_APP, software_statement: 'eyJ.eyJ.sig' },
    ],
  ])('%s: %s', (_label, code, body) => {
    expect(errorCode(() => readRegistrationRequest(body, POLICY))).toBe(code);
  });

  it('accepts subject_type public, the one discovery lists', () => {
    expect(
      errorCode(() => readRegistrationRequest({ ...PUBLIC_APP, subject_type: 'public' }, POLICY)),
    ).toBeUndefined();
  });

  it('accepts a private-use scheme named after a domain (RFC 8252 §7.1)', () => {
    expect(
      errorCode(() =>
        readRegistrationRequest({ ...PUBLIC_APP, redirect_uris: ['com.example.app:/cb'] }, POLICY),
      ),
    ).toBeUndefined();
  });
});

describe('registeredClient: the seed rules apply too', () => {
  it('builds a public client that never skips consent', () => {
    const client = registeredClient('dyn-1', readRegistrationRequest(PUBLIC_APP, POLICY), {
      secretHash: null,
      lifetimes: LIFETIMES,
    });

    expect(client).toMatchObject({
      clientId: 'dyn-1',
      clientName: 'Agent',
      skipConsent: false,
      authMethods: ['none'],
    });
  });

  it.each(['RS256', 'ES256'] as const)(
    'keeps userinfo_signed_response_alg %s: UserInfo answers this client with a signed JWT',
    (alg) => {
      const metadata = readRegistrationRequest({ ...PUBLIC_APP, userinfo_signed_response_alg: alg }, POLICY);
      const client = registeredClient('dyn-1', metadata, { secretHash: null, lifetimes: LIFETIMES });

      expect(client.userinfoSignedResponseAlg).toBe(alg);
      expect(metadata.userinfo_signed_response_alg).toBe(alg);
    },
  );

  it('leaves UserInfo plain JSON without userinfo_signed_response_alg', () => {
    const client = registeredClient('dyn-1', readRegistrationRequest(PUBLIC_APP, POLICY), {
      secretHash: null,
      lifetimes: LIFETIMES,
    });

    expect(client.userinfoSignedResponseAlg).toBeNull();
  });

  it.each(['none', 'HS256', 'PS256'])(
    'refuses userinfo_signed_response_alg %s (unsigned or not made by the key store) as invalid_client_metadata',
    (alg) => {
      const metadata = readRegistrationRequest({ ...PUBLIC_APP, userinfo_signed_response_alg: alg }, POLICY);

      expect(
        errorCode(() => registeredClient('dyn-1', metadata, { secretHash: null, lifetimes: LIFETIMES })),
      ).toBe('invalid_client_metadata');
    },
  );

  it('refuses the code grant without redirect URIs as invalid_redirect_uri', () => {
    expect(errorCode(() => readRegistrationRequest({ token_endpoint_auth_method: 'none' }, POLICY))).toBe(
      'invalid_redirect_uri',
    );
  });

  it('keeps request_uris (OIDC Registration §2) and refuses one that is not an http(s) URL', () => {
    const context = { secretHash: null, lifetimes: LIFETIMES };
    const requestUris = ['https://agent.example.test/request.jwt#v1'];
    const metadata = readRegistrationRequest({ ...PUBLIC_APP, request_uris: requestUris }, POLICY);
    expect(registeredClient('dyn-1', metadata, context).requestUris).toEqual(requestUris);

    for (const bad of [
      ['ftp://agent.example.test/r.jwt'],
      ['not a url'],
      'https://agent.example.test/r.jwt',
    ]) {
      expect(
        errorCode(() =>
          registeredClient(
            'dyn-1',
            readRegistrationRequest({ ...PUBLIC_APP, request_uris: bad }, POLICY),
            context,
          ),
        ),
      ).toBe('invalid_client_metadata');
    }
  });

  it('refuses private_key_jwt without keys as invalid_client_metadata', () => {
    const metadata = readRegistrationRequest(
      { ...PUBLIC_APP, token_endpoint_auth_method: 'private_key_jwt' },
      POLICY,
    );

    expect(
      errorCode(() => registeredClient('dyn-1', metadata, { secretHash: null, lifetimes: LIFETIMES })),
    ).toBe('invalid_client_metadata');
  });
});

describe('RFC 7592 updates and the response', () => {
  it('an update must name the same client_id and no server-set member', () => {
    expect(errorCode(() => checkUpdateIdentity({ client_id: 'dyn-2' }, 'dyn-1'))).toBe('invalid_request');
    expect(
      errorCode(() => checkUpdateIdentity({ client_id: 'dyn-1', registration_access_token: 'x' }, 'dyn-1')),
    ).toBe('invalid_request');
    expect(errorCode(() => checkUpdateIdentity({ client_id: 'dyn-1' }, 'dyn-1'))).toBeUndefined();
  });

  it('the response carries the credentials once, and the registered metadata', () => {
    const metadata = readRegistrationRequest({ redirect_uris: ['https://app.example/cb'] }, POLICY);
    const response = registrationResponse(metadata, {
      clientId: 'dyn-1',
      clientSecret: 's3cret',
      registrationAccessToken: 'rat',
      registrationClientUri: 'https://id.example/register/dyn-1',
      issuedAt: 1000,
    });

    expect(response).toMatchObject({
      client_id: 'dyn-1',
      client_secret: 's3cret',
      client_secret_expires_at: 0,
      client_id_issued_at: 1000,
      registration_access_token: 'rat',
      registration_client_uri: 'https://id.example/register/dyn-1',
      redirect_uris: ['https://app.example/cb'],
    });
  });
});

describe('readRegistrationRequest: the administration API scopes are the seed file’s to give', () => {
  const generous: RegistrationPolicy = { ...POLICY, scopes: [...POLICY.scopes, 'admin.read', 'admin.write'] };

  it('refuses admin.read and admin.write even when the policy names them', () => {
    expect(
      errorCode(() => readRegistrationRequest({ ...PUBLIC_APP, scope: 'openid admin.read' }, generous)),
    ).toBe('invalid_client_metadata');
  });

  it('leaves them out of the default scope a registration gets', () => {
    expect(readRegistrationRequest(PUBLIC_APP, generous).scope).toBe('openid profile orders.read');
  });
});
