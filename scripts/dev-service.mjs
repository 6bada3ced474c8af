#!/usr/bin/env node
// Runs one service of `pnpm dev` by hand, in the foreground, with the settings `pnpm dev` recorded
// for it at its last start (<data folder>/<service>.env.json): `pnpm dev:service orders` while the
// other services run elsewhere (a debugger, a changed environment). Variables set in the
// environment win over the recorded ones (PORT=3100 pnpm dev:service orders).
import { spawn } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const dataDir = process.env.DEV_DATA_DIR
  ? resolve(process.env.INIT_CWD ?? process.cwd(), process.env.DEV_DATA_DIR)
  : join(root, '.data');
const SERVICES = { 'auth-server': 'apps/auth-server', orders: 'apps/orders' };

function fail(message) {
  process.stderr.write(`[dev:service] ${message}\n`);
  process.exit(1);
}

const [service] = process.argv.slice(2);
if (!(service in SERVICES)) fail(`usage: pnpm dev:service <${Object.keys(SERVICES).join('|')}>`);
const settingsFile = join(dataDir, `${service}.env.json`);
if (!existsSync(settingsFile)) {
  fail(
    `${settingsFile} does not exist yet: start \`pnpm dev\` once, it records each service's settings there`,
  );
}
const recorded = JSON.parse(readFileSync(settingsFile, 'utf8'));
const explicit = Object.fromEntries(Object.entries(process.env).filter(([, value]) => value !== ''));
process.stderr.write(`[dev:service] ${service} with the settings of ${settingsFile}\n`);

const child = spawn(process.execPath, ['--import', 'tsx', 'src/server.ts'], {
  cwd: join(root, SERVICES[service]),
  // Loopback only, as under `pnpm dev`, unless HOST says otherwise.
  env: { HOST: '127.0.0.1', ...recorded, ...explicit },
  stdio: ['ignore', 'inherit', 'inherit'],
  // A process group of its own, as under `pnpm dev`: Ctrl+C reaches this process only, which passes
  // it on once (the server would otherwise get it twice: "shutdown already in progress").
  detached: true,
});
for (const signal of ['SIGINT', 'SIGTERM']) process.on(signal, () => child.kill(signal));
process.on('exit', () => {
  if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
});
child.on('exit', (code) => process.exit(code ?? 1));
