import { type ChildProcess, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import {
  type AuthServer as KitAuthServer,
  type OrdersService,
  startAuthServer as startKitAuthServer,
  startOrdersService as startKitOrdersService,
} from '@oidc-orders/service-kit/testing';

const CLI_DIR = fileURLToPath(new URL('../..', import.meta.url));

export const DEVICE_GRANT = 'urn:ietf:params:oauth:grant-type:device_code';
export const ORDERS_API = 'orders-api';
export const ALICE = { username: 'alice', password: randomBytes(12).toString('base64url') };

/** The seed of CONTRACT.md's shape: the public `orders-cli` client, the orders API, Alice. */
export function cliSeed(resourceSecret: string) {
  return {
    clients: [
      {
        client_id: 'orders-cli',
        client_name: 'Orders CLI',
        grant_types: [DEVICE_GRANT, 'refresh_token'],
        scope: 'openid profile email offline_access orders.read',
      },
    ],
    resources: [
      {
        id: ORDERS_API,
        scopes: ['orders.read', 'orders.write'],
        access_token_format: 'jwt',
        access_token_ttl: 300,
        secret: resourceSecret,
        claims: ['email'],
      },
    ],
    users: [
      {
        sub: 'u-alice',
        username: ALICE.username,
        password: ALICE.password,
        name: 'Alice Example',
        email: 'alice@example.com',
      },
    ],
  };
}

export { findFreePort, type OrdersService } from '@oidc-orders/service-kit/testing';

export type AuthServer = KitAuthServer & { readonly resourceSecret: string };

/** apps/auth-server seeded with cliSeed() and a random resource secret (the kit's startAuthServer). */
export async function startAuthServer(env: Record<string, string> = {}): Promise<AuthServer> {
  const resourceSecret = randomBytes(24).toString('base64url');
  const server = await startKitAuthServer({
    seed: cliSeed(resourceSecret),
    // Polls every second instead of five: the tests wait less, the protocol is the same.
    env: { DEVICE_CODE_POLL_INTERVAL: '1', ...env },
  });
  return Object.assign(server, { resourceSecret });
}

export interface CliProcess {
  readonly child: ChildProcess;
  stdout(): string;
  stderr(): string;
  /** The exit code once the process has exited. */
  readonly exited: Promise<number | null>;
  /** Resolves with the first match in stdout; rejects if the process exits first. */
  waitForStdout(pattern: RegExp): Promise<RegExpExecArray>;
}

/**
 * `orders <args>` as a child process (`node --import tsx src/main.ts`, what bin/orders.js does),
 * with only the given environment. `umask` runs it under that file-creation mask (through sh).
 */
export function startCli(
  args: string[],
  env: Record<string, string>,
  options: { umask?: string } = {},
): CliProcess {
  const command = [process.execPath, '--import', 'tsx', 'src/main.ts', ...args];
  const child =
    options.umask === undefined
      ? spawn(command[0]!, command.slice(1), { cwd: CLI_DIR, env: { PATH: process.env.PATH ?? '', ...env } })
      : spawn('/bin/sh', ['-c', `umask ${options.umask} && exec "$@"`, 'sh', ...command], {
          cwd: CLI_DIR,
          env: { PATH: process.env.PATH ?? '', ...env },
        });
  let stdout = '';
  let stderr = '';
  const listeners = new Set<() => void>();
  child.stdout!.on('data', (chunk: Buffer) => {
    stdout += chunk.toString();
    for (const listener of listeners) listener();
  });
  child.stderr!.on('data', (chunk: Buffer) => {
    stderr += chunk.toString();
  });
  let hasExited = false;
  const exited = new Promise<number | null>((resolve) =>
    child.on('exit', (code) => {
      hasExited = true;
      for (const listener of listeners) listener();
      resolve(code);
    }),
  );
  return {
    child,
    stdout: () => stdout,
    stderr: () => stderr,
    exited,
    waitForStdout(pattern) {
      return new Promise((resolve, reject) => {
        const check = () => {
          const match = pattern.exec(stdout);
          if (match) {
            listeners.delete(check);
            resolve(match);
          } else if (hasExited) {
            listeners.delete(check);
            reject(new Error(`orders exited before printing ${pattern}:\n${stdout}\n${stderr}`));
          }
        };
        listeners.add(check);
        check();
      });
    },
  };
}

/** Runs `orders <args>` to completion. */
export async function runCli(args: string[], env: Record<string, string>) {
  const cli = startCli(args, env);
  const code = await cli.exited;
  return { code, stdout: cli.stdout(), stderr: cli.stderr() };
}

/** apps/orders verifying bearer tokens of `issuer` for the `orders-api` resource (apps/orders README). */
export function startOrdersService(issuer: string, resourceSecret: string): Promise<OrdersService> {
  return startKitOrdersService({ issuer, resourceSecret });
}
