/**
 * A local directory for `pnpm dev` (docs/development.md, "A directory"): `pnpm dev:directory` runs
 * the OpenLDAP server the tests use (the service kit's testing/slapd.ts: slapd in a temporary folder, on a
 * free loopback port) with one person, writes the `LDAP_*` settings that point the auth server at
 * it to <data folder>/directory.env, and keeps it running until Ctrl+C.
 */
import { randomBytes } from 'node:crypto';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { slapdMissing, startSlapd } from '@oidc-orders/service-kit/testing';
import { devDataDirectory } from '../src/cli/command-environment.js';

const say = (line: string) => process.stdout.write(`[dev:directory] ${line}\n`);
const missing = slapdMissing();
if (missing !== undefined) {
  process.stderr.write(`[dev:directory] ${missing}\n`);
  process.exit(1);
}

const dataDir = devDataDirectory(process.env);
mkdirSync(dataDir, { recursive: true });
const slapd = await startSlapd();
const person = { uid: 'grace', cn: 'Grace Directory', mail: 'grace@directory.example' };
const password = randomBytes(9).toString('base64url');
await slapd.addPerson({ ...person, password });

// KEY=value lines with no spaces in them, for `env $(cat .data/directory.env) … dev`.
const settingsFile = join(dataDir, 'directory.env');
const settings = Object.entries(slapd.env()).map(([name, value]) => `${name}=${value}`);
writeFileSync(settingsFile, `${settings.join('\n')}\n`, { mode: 0o600 });
/** A path as typed from where pnpm was started: relative below it, absolute elsewhere. */
function shownPath(file: string): string {
  const path = relative(process.env.INIT_CWD ?? process.cwd(), file);
  return path.startsWith('..') ? file : `./${path}`;
}
const shown = shownPath(settingsFile);
// The password in a file of its own, as pnpm dev keeps alice's: never on the terminal or in a log.
const personFile = join(dataDir, 'directory-person.json');
writeFileSync(personFile, `${JSON.stringify({ username: person.uid, password }, null, 2)}\n`, {
  mode: 0o600,
});
say(`OpenLDAP on ${slapd.url} (base ${slapd.baseDn}), one person: ${person.uid}; DEV-ONLY password:`);
say(`  node -p "require('${shownPath(personFile)}').password"`);
say(`Settings in ${shown}; start pnpm dev with them:`);
say(`  env $(cat ${shown}) npx -y pnpm@10.34.9 dev`);
say('Ctrl+C stops the directory (its folder is removed).');

for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.once(signal, () => {
    void slapd.close().then(() => process.exit(0));
  });
}
