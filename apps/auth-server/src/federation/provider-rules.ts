import type { SeedIdentityProvider } from '../schemas/seed.js';

/**
 * The rules an `identity_providers` entry must follow beyond its shape, each phrased as one problem
 * naming the member, the way oauth-core's client registration rules are (seed.ts locates and
 * reports them). Pure: no file is read here.
 */
export interface ProviderProblem {
  member?: string;
  problem: string;
}

const LOOPBACK_HOSTS = new Set(['127.0.0.1', 'localhost', '[::1]']);

/** OIDC Discovery §4.3 and RFC 8414 §2: the issuer is an https URL with no query or fragment. */
function issuerProblem(issuer: string): ProviderProblem | undefined {
  let url: URL;
  try {
    url = new URL(issuer);
  } catch {
    return { member: 'issuer', problem: 'is not a URL' };
  }
  if (url.search !== '' || url.hash !== '')
    return { member: 'issuer', problem: 'must have no query or fragment' };
  // Plain http only on loopback (tests, a provider beside us): a network attacker could serve keys.
  if (url.protocol === 'https:') return undefined;
  if (url.protocol === 'http:' && LOOPBACK_HOSTS.has(url.hostname)) return undefined;
  return { member: 'issuer', problem: 'must be an https URL (http only on a loopback address)' };
}

function credentialProblem(provider: SeedIdentityProvider): ProviderProblem | undefined {
  const method = provider.token_endpoint_auth_method ?? 'client_secret_basic';
  const secrets = [provider.client_secret, provider.client_secret_file].filter((v) => v !== undefined);
  if (method === 'private_key_jwt') {
    if (provider.private_key_file === undefined)
      return { member: 'private_key_file', problem: 'is required with private_key_jwt' };
    if (secrets.length > 0)
      return { member: 'client_secret', problem: 'is not used with private_key_jwt: remove it' };
    return undefined;
  }
  if (secrets.length !== 1)
    return { problem: `give exactly one of client_secret or client_secret_file (${method})` };
  if (provider.private_key_file !== undefined)
    return { member: 'private_key_file', problem: 'is only used with private_key_jwt' };
  return undefined;
}

/** The problems of one entry, first the most basic. */
export function identityProviderProblems(provider: SeedIdentityProvider): ProviderProblem[] {
  return [issuerProblem(provider.issuer), credentialProblem(provider)].filter(
    (problem): problem is ProviderProblem => problem !== undefined,
  );
}

/** Problems across entries: ids are unique (they name the callback URL). */
export function duplicateProviderIndex(providers: readonly SeedIdentityProvider[]): number | undefined {
  const seen = new Set<string>();
  for (const [index, provider] of providers.entries()) {
    if (seen.has(provider.id)) return index;
    seen.add(provider.id);
  }
  return undefined;
}
