import { type ScryptOptions, scrypt, timingSafeEqual } from 'node:crypto';
import { availableParallelism } from 'node:os';
import { type RandomSource, systemRandom } from './runtime.js';

/**
 * User passwords: scrypt (RFC 7914), salted, in a self-describing format
 * `scrypt$N$r$p$<salt base64url>$<hash base64url>` so the cost can be raised later without
 * invalidating stored hashes. Only the login form pays this cost, never the token endpoint.
 */
export interface ScryptCost {
  /** CPU/memory cost, a power of two. */
  N: number;
  r: number;
  p: number;
}

/** 2^15 × 8 × 128 bytes = 32 MiB per hash, about 0.1 s on one core. */
export const DEFAULT_SCRYPT_COST: ScryptCost = { N: 2 ** 15, r: 8, p: 1 };

const KEY_LENGTH = 32;
const SALT_LENGTH = 16;

// Upper bounds on what a stored hash may ask for, so a corrupt or hostile row cannot exhaust memory.
const MAX_N = 2 ** 20;
const MAX_R = 32;
const MAX_P = 16;

/**
 * How many scrypt computations may run at once. Each holds 128·N·r·p bytes (32 MiB at the default
 * cost) while it runs on libuv's thread pool, whose four threads let a burst of sign-ins add
 * 4 × 32 MiB to the server's RSS (measured: 8 parallel verifications, +130 MB). More computations
 * than cores only share the cores, so one per core (at most the pool's four) costs no throughput
 * and bounds that memory; the others wait their turn in order.
 */
export const MAX_CONCURRENT_PASSWORD_DERIVATIONS = Math.max(1, Math.min(4, availableParallelism()));

let derivationsRunning = 0;
const derivationsWaiting: Array<() => void> = [];

async function withDerivationSlot<T>(work: () => Promise<T>): Promise<T> {
  if (derivationsRunning < MAX_CONCURRENT_PASSWORD_DERIVATIONS) derivationsRunning += 1;
  // A finishing computation hands its slot straight to the first one waiting.
  else await new Promise<void>((resolve) => derivationsWaiting.push(resolve));
  try {
    return await work();
  } finally {
    const next = derivationsWaiting.shift();
    if (next) next();
    else derivationsRunning -= 1;
  }
}

function derive(password: string, salt: Buffer, cost: ScryptCost, keyLength: number): Promise<Buffer> {
  const options: ScryptOptions = {
    N: cost.N,
    r: cost.r,
    p: cost.p,
    maxmem: 128 * cost.N * cost.r * cost.p + 16 * 1024 * 1024,
  };
  return withDerivationSlot(
    () =>
      new Promise<Buffer>((resolve, reject) => {
        scrypt(password.normalize('NFC'), salt, keyLength, options, (error, key) =>
          error ? reject(error) : resolve(key),
        );
      }),
  );
}

export async function hashPassword(
  password: string,
  options: { random?: RandomSource; cost?: ScryptCost } = {},
): Promise<string> {
  const cost = options.cost ?? DEFAULT_SCRYPT_COST;
  const salt = Buffer.from((options.random ?? systemRandom).bytes(SALT_LENGTH));
  const key = await derive(password, salt, cost, KEY_LENGTH);
  return ['scrypt', cost.N, cost.r, cost.p, salt.toString('base64url'), key.toString('base64url')].join('$');
}

function parseCost(n: string, r: string, p: string): ScryptCost | null {
  const digits = /^[1-9][0-9]{0,7}$/;
  if (!digits.test(n) || !digits.test(r) || !digits.test(p)) return null;
  const cost = { N: Number(n), r: Number(r), p: Number(p) };
  const powerOfTwo = cost.N >= 2 && (cost.N & (cost.N - 1)) === 0;
  if (!powerOfTwo || cost.N > MAX_N || cost.r > MAX_R || cost.p > MAX_P) return null;
  return cost;
}

/** `false` for a wrong password or a malformed hash; never throws for bad input. */
export async function verifyPassword(password: string, hash: string): Promise<boolean> {
  const parts = hash.split('$');
  if (parts.length !== 6 || parts[0] !== 'scrypt') return false;
  const [, n = '', r = '', p = '', saltText = '', keyText = ''] = parts;
  const cost = parseCost(n, r, p);
  const salt = Buffer.from(saltText, 'base64url');
  const expected = Buffer.from(keyText, 'base64url');
  if (cost === null || salt.length < 8 || expected.length < 16 || expected.length > 64) return false;
  const actual = await derive(password, salt, cost, expected.length);
  return timingSafeEqual(actual, expected);
}

let dummyHash: Promise<string> | undefined;

/**
 * Spends the same time as a real verification, for a username that does not exist, so response
 * timing does not reveal which usernames are registered.
 */
export async function dummyPasswordVerify(
  verify: (password: string, hash: string) => Promise<boolean> = verifyPassword,
): Promise<void> {
  // At the default cost, as every user's hash: the same scrypt work as a real verification.
  dummyHash ??= hashPassword('dummy-password-for-timing', {
    random: { bytes: (length) => new Uint8Array(length) },
  });
  await verify('not-the-dummy-password', await dummyHash);
}
