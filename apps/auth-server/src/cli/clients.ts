import { PgliteDirectoryInUseError } from '@oidc-orders/service-kit';
import { createClientsAdmin, RegisteredClientNotFoundError } from '../admin/clients-admin.js';
import { AUDIT_EVENTS, auditLine } from '../audit.js';
import { ConfigError, loadConfig } from '../config.js';
import { openDatabase } from '../db/client.js';
import { commandEnvironment } from './command-environment.js';

/**
 * Operator commands for clients that registered themselves (RFC 7591, seed `client_registration`):
 * `pnpm --filter auth-server clients <command>`, against DATABASE_URL while the server runs (which
 * sees a change within its registry snapshot's lifetime). Seed clients live in the seed file.
 */
const USAGE = `usage: clients <command>
  list                   every registered client: id, name, registration time, redirect URIs
  delete <client_id>     deletes a registered client; its tokens stop working
  export <client_id>     prints the client as a seed file entry (its secret as client_secret_hash);
                         adding it to the seed file adopts the client`;

async function main(args: string[]): Promise<void> {
  const [command, clientId] = args;
  if (command === undefined || (command !== 'list' && clientId === undefined)) {
    process.stderr.write(`${USAGE}\n`);
    process.exitCode = 1;
    return;
  }
  const environment = commandEnvironment(process.env, (line) => process.stderr.write(`clients: ${line}\n`));
  const config = loadConfig(environment);
  const database = await openDatabase(config.database);
  try {
    await run(createClientsAdmin(database.db), command, clientId ?? '');
  } finally {
    await database.close();
  }
}

async function run(admin: ReturnType<typeof createClientsAdmin>, command: string, clientId: string) {
  const out = (line: string) => process.stdout.write(`${line}\n`);
  switch (command) {
    case 'list':
      for (const client of await admin.list()) {
        const registered = new Date(client.registeredAt * 1000).toISOString();
        out(
          `${client.clientId}\tname=${client.clientName}\tregistered=${registered}\tdisabled=${client.disabled}\tredirect_uris=${client.redirectUris.join(',')}`,
        );
      }
      return;
    case 'delete':
      await admin.delete(clientId);
      process.stderr.write(
        auditLine(AUDIT_EVENTS.clientDeleted, { client_id: clientId, reason: 'operator' }),
      );
      out(`deleted ${clientId}`);
      return;
    case 'export':
      out(JSON.stringify(await admin.exportSeedEntry(clientId), null, 2));
      return;
    default:
      process.stderr.write(`${USAGE}\n`);
      process.exitCode = 1;
  }
}

main(process.argv.slice(2)).catch((error: unknown) => {
  const known =
    error instanceof ConfigError ||
    error instanceof RegisteredClientNotFoundError ||
    error instanceof PgliteDirectoryInUseError;
  process.stderr.write(`clients: ${known ? (error as Error).message : String(error)}\n`);
  process.exit(1);
});
