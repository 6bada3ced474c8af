/** TRUST_PROXY parsed: off, every hop, the n nearest hops, or the addresses/CIDRs of trusted proxies. */
export type TrustProxy = boolean | number | string[];

/**
 * TRUST_PROXY has one meaning in both apps (Fastify's `trustProxy` vocabulary): unset, empty, `0`
 * or `false` → off; `true` → trust every hop; an integer n → trust the n nearest hops (`1`, what
 * docker-compose.yml passes, is one proxy in front, not "every hop"); anything else →
 * comma-separated addresses/CIDRs of trusted proxies (or proxy-addr's names `loopback`,
 * `linklocal`, `uniquelocal`). Undefined for a value that is none of these,
 * so the caller names the variable in its own error.
 */
export function parseTrustProxy(value: string | undefined): TrustProxy | undefined {
  const trimmed = value?.trim() ?? '';
  if (trimmed === '' || trimmed === 'false') return false;
  if (trimmed === 'true') return true;
  if (/^\d+$/.test(trimmed)) return Number(trimmed) === 0 ? false : Number(trimmed);
  const addresses = trimmed
    .split(',')
    .map((entry) => entry.trim())
    .filter((entry) => entry !== '');
  if (addresses.some((entry) => !isProxyAddress(entry))) return undefined;
  return addresses;
}

/** Fastify's types take a hop count only as a function; proxy-addr numbers hops from 0. */
export function toFastifyTrustProxy(
  trustProxy: TrustProxy,
): boolean | string[] | ((address: string, hop: number) => boolean) {
  return typeof trustProxy === 'number' ? (_address, hop) => hop < trustProxy : trustProxy;
}

const PROXY_ADDRESS_NAMES = new Set(['loopback', 'linklocal', 'uniquelocal']);

function isProxyAddress(entry: string): boolean {
  return PROXY_ADDRESS_NAMES.has(entry) || /^[0-9a-fA-F:.]+(\/\d{1,3})?$/.test(entry);
}
