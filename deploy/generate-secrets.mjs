#!/usr/bin/env node
// Writes the two files the docker compose deployment reads and git never sees:
//   .env              from .env.example (or the .env already there), every empty value filled
//                     with a random secret; values already set are kept
//   deploy/seed.json  from deploy/seed.example.json (JSON with comments, kept), its ${NAME}s taken
//                     from that .env, plus a random password for the demo user, printed once; an
//                     existing one is kept
//   deploy/secrets/   one file per secret the containers read (docker-compose `secrets:`, so no
//                     secret is an environment variable that `docker inspect` shows), written
//                     again from .env at every run
// Node's standard library only: `node deploy/generate-secrets.mjs`.
import { randomBytes } from 'node:crypto';
import { chmodSync, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const envExample = join(root, '.env.example');
const envFile = join(root, '.env');
const seedExample = join(root, 'deploy/seed.example.json');
const seedFile = join(root, 'deploy/seed.json');
const secretsDirectory = join(root, 'deploy/secrets');

// 32 random bytes, base64url: the KEY_ENCRYPTION_KEY format, and URL-safe for database URLs.
const randomSecret = () => randomBytes(32).toString('base64url');

function parseEnv(text) {
  const values = {};
  for (const line of text.split('\n')) {
    const match = /^([A-Z0-9_]+)=(.*)$/.exec(line);
    if (match) values[match[1]] = match[2];
  }
  return values;
}

// .env is written whole, but only its lines `NAME=` with nothing after them change.
const envSource = existsSync(envFile) ? envFile : envExample;
const filledNames = [];
const envText = readFileSync(envSource, 'utf8')
  .split('\n')
  .map((line) => {
    if (!/^[A-Z0-9_]+=$/.test(line)) return line;
    filledNames.push(line.slice(0, -1));
    return `${line}${randomSecret()}`;
  })
  .join('\n');
if (envSource === envFile && filledNames.length === 0) {
  console.log(`${relative(root, envFile)}: every value is set, kept as it is`);
} else {
  writeFileSync(envFile, envText, { mode: 0o600 });
  chmodSync(envFile, 0o600);
  console.log(
    `wrote ${relative(root, envFile)} (mode 0600), generated: ${filledNames.join(', ') || 'nothing'}`,
  );
}

if (existsSync(seedFile)) {
  console.log(`${relative(root, seedFile)} exists: kept as it is`);
} else {
  const env = parseEnv(readFileSync(envFile, 'utf8'));
  const alicePassword = randomBytes(12).toString('base64url');
  const values = { ...env, ALICE_PASSWORD: alicePassword };
  // Every placeholder sits inside a JSON string: each value is escaped as a string's content, so
  // the copy stays valid JSONC (the auth server checks it at start and names the line and column).
  const seed = readFileSync(seedExample, 'utf8').replace(/\$\{([A-Z0-9_]+)\}/g, (placeholder, name) => {
    const value = values[name];
    if (!value) throw new Error(`${placeholder} in ${relative(root, seedExample)} has no value in .env`);
    return JSON.stringify(value).slice(1, -1);
  });
  // Readable by the container's user (uid 1000), which is not this file's owner in general. It
  // holds plain-text secrets (hashed by the server at every start): keep the directory private.
  writeFileSync(seedFile, seed, { mode: 0o644 });
  console.log(`wrote ${relative(root, seedFile)}; demo user: alice / ${alicePassword}`);
}

// The secret files docker-compose.yml mounts under /run/secrets; each app reads NAME_FILE (README
// "Deployment"). Readable by the containers' users (node, uid 1000; postgres), which are not this
// file's owner in general; the directory itself is private to the operator.
const env = parseEnv(readFileSync(envFile, 'utf8'));
const required = (name) => {
  if (!env[name]) throw new Error(`${name} has no value in ${relative(root, envFile)}`);
  return env[name];
};
const secretFiles = {
  'postgres-password': required('POSTGRES_PASSWORD'),
  'auth-db-password': required('AUTH_DB_PASSWORD'),
  'orders-db-password': required('ORDERS_DB_PASSWORD'),
  'auth-database-url': `postgres://auth:${required('AUTH_DB_PASSWORD')}@postgres:5432/auth`,
  'orders-database-url': `postgres://orders:${required('ORDERS_DB_PASSWORD')}@postgres:5432/orders`,
  'key-encryption-key': required('KEY_ENCRYPTION_KEY'),
  'api-key': required('API_KEY'),
  'session-secret': required('SESSION_SECRET'),
  'oidc-client-secret': required('OIDC_CLIENT_SECRET'),
  'resource-secret': required('RESOURCE_SECRET'),
};
mkdirSync(secretsDirectory, { recursive: true, mode: 0o700 });
chmodSync(secretsDirectory, 0o700);
for (const [name, value] of Object.entries(secretFiles)) {
  writeFileSync(join(secretsDirectory, name), value, { mode: 0o644 });
  chmodSync(join(secretsDirectory, name), 0o644);
}
console.log(`wrote ${relative(root, secretsDirectory)}/: ${Object.keys(secretFiles).join(', ')}`);
