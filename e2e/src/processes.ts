import { spawn } from 'node:child_process';
import {
  findFreePort,
  type ManagedProcess,
  repositoryRoot,
  startNodeProcess,
} from '@oidc-orders/service-kit/testing';

export {
  findFreePort,
  type ManagedProcess,
  repositoryRoot,
  startNodeProcess,
  waitUntilReady,
} from '@oidc-orders/service-kit/testing';

/** Free ports for the three services of `pnpm dev`, in the variables scripts/dev.mjs reads. */
export async function freeDevPorts(): Promise<Record<'AUTH_PORT' | 'ORDERS_PORT' | 'SPA_PORT', string>> {
  return {
    AUTH_PORT: String(await findFreePort()),
    ORDERS_PORT: String(await findFreePort()),
    SPA_PORT: String(await findFreePort()),
  };
}

/** `pnpm dev` (scripts/dev.mjs) with its data in `dataDir` (DEV_DATA_DIR) and JSON logs (CI). */
export function startDevLauncher(dataDir: string, ports: Record<string, string>): ManagedProcess {
  return startNodeProcess('pnpm dev', '.', 'scripts/dev.mjs', {
    CI: 'true',
    DEV_DATA_DIR: dataDir,
    ...ports,
  });
}

export interface ShellResult {
  status: number | null;
  stdout: string;
  stderr: string;
}

/**
 * `sh -c <command>` at the repository root with exactly `env`, collected without blocking: a
 * process this one also reads (a running `pnpm dev`) keeps logging meanwhile.
 */
export function runShell(command: string, env: Record<string, string>): Promise<ShellResult> {
  const child = spawn('sh', ['-c', command], { cwd: repositoryRoot, env, stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  return new Promise((done) => child.on('close', (status) => done({ status, stdout, stderr })));
}
