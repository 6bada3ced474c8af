import { randomBytes } from 'node:crypto';
import { createSecretHasher, hashPassword, systemClock } from '@oidc-orders/oauth-core';
import { PgliteDirectoryInUseError } from '@oidc-orders/service-kit';
import { AUDIT_EVENTS, auditLine } from '../audit.js';
import { ConfigError, loadConfig } from '../config.js';
import { openDatabase } from '../db/client.js';
import { deriveSecretHashingKey, KeyDecryptionError } from '../keys/key-encryption.js';
import { KeyRing } from '../keys/key-ring.js';
import { minimumActivationDelaySeconds, rotateSigningKeys } from '../keys/rotation.js';
import { createKeyStore } from '../storage/drizzle/stores.js';
import { commandEnvironment } from './command-environment.js';
import { readStdin } from './stdin.js';

/**
 * Operator commands: `pnpm --filter auth-server keys <command>`.
 * Secrets are read from standard input, never from arguments (which show up in `ps` and shell history).
 */
const USAGE = `usage: keys <command>
  generate-kek                 print a new KEY_ENCRYPTION_KEY (32 random bytes, base64url)
  hash-secret   < secret     print client_secret_hash / secret_hash for the seed (needs KEY_ENCRYPTION_KEY)
  hash-password < password   print a password_hash for the seed
  list                         list the signing keys (needs DATABASE_URL, KEY_ENCRYPTION_KEY)
  rotate [--activate-in S] [--keep-published S] [--force]
                               add new signing keys that activate in S seconds (default 900, at least
                               METADATA_MAX_AGE + 60 unless --force; --publish-delay is the same option) and
                               retire the current ones then, published S more seconds (default 86400)`;

function numberOption(args: string[], name: string, fallback: number): number {
  const index = args.indexOf(name);
  if (index < 0) return fallback;
  const value = Number(args[index + 1]);
  if (!Number.isInteger(value) || value < 0)
    throw new ConfigError(`${name} expects a whole number of seconds`);
  return value;
}

/** Without DATABASE_URL, the `pnpm dev` settings (command-environment.ts). */
const environment = () => commandEnvironment(process.env, (line) => process.stderr.write(`keys: ${line}\n`));

async function withDatabase<T>(
  work: (context: ReturnType<typeof loadConfig>, db: Awaited<ReturnType<typeof openDatabase>>) => Promise<T>,
) {
  const config = loadConfig(environment());
  const database = await openDatabase(config.database);
  try {
    await database.migrate();
    return await work(config, database);
  } finally {
    await database.close();
  }
}

async function main(args: string[]): Promise<void> {
  const [command, ...rest] = args;
  switch (command) {
    case 'generate-kek':
      process.stdout.write(`${randomBytes(32).toString('base64url')}\n`);
      return;
    case 'hash-secret': {
      const config = loadConfig({ DATABASE_URL: 'pglite://memory', ...environment() });
      const secret = await readStdin();
      if (secret === '') throw new ConfigError('no secret on standard input');
      process.stdout.write(
        `${createSecretHasher(deriveSecretHashingKey(config.keyEncryptionKey)).hash(secret)}\n`,
      );
      return;
    }
    case 'hash-password': {
      const password = await readStdin();
      if (password === '') throw new ConfigError('no password on standard input');
      process.stdout.write(`${await hashPassword(password)}\n`);
      return;
    }
    case 'list':
      await withDatabase(async (config, database) => {
        const records = await createKeyStore(database.db).listSigningKeys();
        // Decrypting proves the configured KEY_ENCRYPTION_KEY is the right one.
        await KeyRing.load(records, config.keyEncryptionKey, { clock: systemClock, issuer: config.issuer });
        for (const key of records) {
          process.stdout.write(
            `${key.kid}  ${key.alg}  activates=${iso(key.activatesAt)}  retires=${iso(key.retiresAt)}  remove_after=${iso(key.removeAfter)}\n`,
          );
        }
      });
      return;
    case 'rotate':
      await withDatabase(async (config, database) => {
        const records = await createKeyStore(database.db).listSigningKeys();
        await KeyRing.load(records, config.keyEncryptionKey, { clock: systemClock, issuer: config.issuer });
        const minimum = minimumActivationDelaySeconds(config.metadataMaxAgeSeconds);
        const activateIn = numberOption(
          rest,
          rest.includes('--publish-delay') ? '--publish-delay' : '--activate-in',
          Math.max(900, minimum),
        );
        if (activateIn < minimum && !rest.includes('--force')) {
          // A key that signs before every relying party's cached JWKS has it makes their checks fail.
          throw new ConfigError(
            `--activate-in ${activateIn} is shorter than METADATA_MAX_AGE (${config.metadataMaxAgeSeconds} s) plus the ` +
              `instances' key refresh (60 s): use at least ${minimum}, or --force`,
          );
        }
        const result = await rotateSigningKeys(database.db, config.keyEncryptionKey, systemClock, {
          activateInSeconds: activateIn,
          keepPublishedSeconds: numberOption(rest, '--keep-published', 86_400),
        });
        // The security event goes to stderr as a JSON log line; stdout stays for people.
        process.stderr.write(
          auditLine(AUDIT_EVENTS.keysRotated, {
            added: result.added.map((key) => key.kid),
            retired: result.retired,
            deleted: result.deleted,
          }),
        );
        process.stdout.write(
          `added ${result.added.map((key) => `${key.kid} (${key.alg}, activates ${iso(key.activatesAt)})`).join(', ')}\n` +
            `retired ${result.retired.join(', ') || 'none'}; deleted ${result.deleted.join(', ') || 'none'}\n`,
        );
      });
      return;
    default:
      process.stderr.write(`${USAGE}\n`);
      process.exitCode = command === undefined || command === 'help' ? 0 : 1;
  }
}

function iso(seconds: number | null): string {
  return seconds === null ? '-' : new Date(seconds * 1000).toISOString();
}

main(process.argv.slice(2)).catch((error: unknown) => {
  const known =
    error instanceof ConfigError ||
    error instanceof KeyDecryptionError ||
    error instanceof PgliteDirectoryInUseError;
  process.stderr.write(`keys: ${known ? (error as Error).message : String(error)}\n`);
  process.exit(1);
});
