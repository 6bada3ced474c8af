/**
 * `pnpm --filter bench run signing-cost [-- --n=5000 --rounds=3]`: the cost of one ID-token-sized
 * JWT signed with jose's `SignJWT` against the auth server's own signing module (oauth-core
 * `signCompactJws`: node:crypto's one-shot `sign`, the header encoded once per key), for each
 * algorithm the server publishes. Sequential signatures in this one process; run it under
 * `taskset -c <cpu>` to hold it to one core (jose's WebCrypto may hand work to libuv's threads,
 * which the CPU column counts). Rounds alternate jose and node:crypto; medians are printed as one
 * Markdown table for bench/README.md "Signing", with the load average at the start and end.
 */
import { generateKeyPairSync, type KeyObject } from 'node:crypto';
import { loadavg } from 'node:os';
import { SignJWT } from 'jose';
import {
  COMPACT_JWS_ALGS,
  encodeJwsHeader,
  jwsSigningKey,
  signCompactJws,
} from '../../packages/oauth-core/src/tokens/compact-jws.js';

type Alg = (typeof COMPACT_JWS_ALGS)[number];

const options = new Map(
  process.argv.slice(2).map((arg) => {
    const [name = '', value = ''] = arg.replace(/^--/, '').split('=');
    return [name, value] as const;
  }),
);
const SIGNATURES = Number(options.get('n') ?? 5000);
const ROUNDS = Number(options.get('rounds') ?? 3);
const WARMUP = 1000;

/** What an ID token carries after a password sign-in with `openid profile email` (about 600 bytes). */
function idTokenClaims(i: number) {
  const now = 1_700_000_000 + i;
  return {
    iss: 'https://auth.example.com',
    sub: 'b1f3c2a4-7d1e-4c55-9a0f-2f8e6f0d9c11',
    aud: 'orders-web',
    exp: now + 3600,
    iat: now,
    auth_time: now - 5,
    nonce: 'VJ6Q9b3mA0wq7zJc2KxH1uYp5rT8sLdE',
    acr: 'urn:oidc-orders:acr:password',
    amr: ['pwd'],
    sid: '6c0a2f5e-3b9d-4a7e-8f12-1d4c5b6a7e8f',
    at_hash: 'x7K3pQ9wE2rT5yU8iO1aSd',
    name: 'Alice Example',
    given_name: 'Alice',
    family_name: 'Example',
    email: 'alice@example.com',
    email_verified: true,
  };
}

function keyFor(alg: Alg): KeyObject {
  return alg === 'RS256'
    ? generateKeyPairSync('rsa', { modulusLength: 2048 }).privateKey
    : generateKeyPairSync('ec', { namedCurve: 'P-256' }).privateKey;
}

type Signer = (i: number) => Promise<unknown> | unknown;

function signers(alg: Alg): Record<'jose' | 'node:crypto', Signer> {
  const privateKey = keyFor(alg);
  const signingKey = jwsSigningKey(alg, 'bench-kid', privateKey);
  const header = encodeJwsHeader(signingKey, 'JWT');
  return {
    jose: (i) =>
      new SignJWT(idTokenClaims(i))
        .setProtectedHeader({ alg, kid: 'bench-kid', typ: 'JWT' })
        .sign(privateKey),
    'node:crypto': (i) => signCompactJws(signingKey, header, idTokenClaims(i)),
  };
}

interface Round {
  wallMicros: number;
  cpuMicros: number;
}

async function round(sign: Signer, count: number): Promise<Round> {
  const cpu = process.cpuUsage();
  const started = process.hrtime.bigint();
  for (let i = 0; i < count; i++) await sign(i);
  const wallMicros = Number(process.hrtime.bigint() - started) / 1000 / count;
  const used = process.cpuUsage(cpu);
  return { wallMicros, cpuMicros: (used.user + used.system) / count };
}

const median = (values: number[]) =>
  [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)] ?? Number.NaN;
const load = () =>
  loadavg()
    .map((value) => value.toFixed(2))
    .join(', ');

async function main(): Promise<void> {
  const loadAtStart = load();
  const rows: string[] = [];
  for (const alg of COMPACT_JWS_ALGS) {
    const bySigner = signers(alg);
    const rounds = new Map<string, Round[]>(Object.keys(bySigner).map((name) => [name, []]));
    for (const sign of Object.values(bySigner)) await round(sign, WARMUP);
    for (let r = 0; r < ROUNDS; r++) {
      for (const [name, sign] of Object.entries(bySigner))
        rounds.get(name)?.push(await round(sign, SIGNATURES));
    }
    for (const [name, measured] of rounds) {
      const wall = median(measured.map((m) => m.wallMicros));
      const cpu = median(measured.map((m) => m.cpuMicros));
      rows.push(
        `| ${alg} | ${name} | ${Math.round(1e6 / wall).toLocaleString('en')} | ${wall.toFixed(1)} | ${cpu.toFixed(1)} |`,
      );
    }
  }
  console.log(`${SIGNATURES} ID-token-sized JWTs per round, ${ROUNDS} rounds alternating, medians`);
  console.log('\n| alg | signed with | signatures/s | µs each (wall) | CPU µs each (all threads) |');
  console.log('|---|---|---:|---:|---:|');
  console.log(rows.join('\n'));
  console.log(`\nload average (1, 5, 15 min): ${loadAtStart} at the start, ${load()} at the end`);
}

await main();
