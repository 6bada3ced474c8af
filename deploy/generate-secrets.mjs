#!/usr/bin/env node
// Writes the two files the docker compose deployment reads and git never sees:
//   .env              from .env.example (or the .env already there), every empty value filled
//                     with a random secret; values already set are kept
//   deploy/seed.json  from deploy/seed.example.json, its ${NAME}s taken from that .env, plus a
//                     random password for the demo user, printed once; an existing one is kept
// Node's standard library only: `node deploy/generate-secrets.mjs`.
import { randomBytes } from 'node:crypto';
import { chmodSync, existsSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const envExample = join(root, '.env.example');
const envFile = join(root, '.env');
const seedExample = join(root, 'deploy/seed.example.json');
const seedFile = join(root, 'deploy/seed.json');

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
  const seed = readFileSync(seedExample, 'utf8').replace(/\$\{([A-Z0-9_]+)\}/g, (placeholder, name) => {
    const value = values[name];
    if (!value) throw new Error(`${placeholder} in ${relative(root, seedExample)} has no value in .env`);
    return value;
  });
  JSON.parse(seed);
  // Readable by the container's user (uid 1000), which is not this file's owner in general. It
  // holds plain-text secrets (hashed by the server at every start): keep the directory private.
  writeFileSync(seedFile, seed, { mode: 0o644 });
  console.log(`wrote ${relative(root, seedFile)}; demo user: alice / ${alicePassword}`);
}
