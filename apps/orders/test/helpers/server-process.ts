import { type ChildProcess, spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';

const APP_DIR = fileURLToPath(new URL('../..', import.meta.url));

/** The real entry point, `tsx src/server.ts`, as a child process with only the given environment. */
export interface ServerProcess {
  readonly child: ChildProcess;
  stdout(): string;
  stderr(): string;
  /** Resolves with the exit code once the process has exited. */
  readonly exited: Promise<number | null>;
  /** Resolves once the combined output matches, rejects if the process exits first or after `withinMs`. */
  waitForOutput(pattern: RegExp, withinMs?: number): Promise<void>;
}

export function startServer(environment: Record<string, string>): ServerProcess {
  // tsx as a loader (`node --import tsx`) rather than the tsx CLI, so the signals the tests send
  // reach the process that listens, with no relaying process in between.
  const child = spawn(process.execPath, ['--import', 'tsx', 'src/server.ts'], {
    cwd: APP_DIR,
    env: { PATH: process.env.PATH ?? '', ...environment },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  const outputListeners = new Set<() => void>();
  const notify = () => {
    for (const listener of outputListeners) listener();
  };
  child.stdout!.on('data', (chunk: Buffer) => {
    stdout += chunk.toString();
    notify();
  });
  child.stderr!.on('data', (chunk: Buffer) => {
    stderr += chunk.toString();
    notify();
  });
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  let hasExited = false;
  void exited.then(() => {
    hasExited = true;
    notify();
  });

  return {
    child,
    stdout: () => stdout,
    stderr: () => stderr,
    exited,
    waitForOutput(pattern, withinMs = 20_000) {
      return new Promise<void>((resolve, reject) => {
        const timer = setTimeout(
          () => finish(new Error(`no output matching ${pattern} within ${withinMs} ms`)),
          withinMs,
        );
        const finish = (error?: Error) => {
          clearTimeout(timer);
          outputListeners.delete(check);
          if (error) reject(error);
          else resolve();
        };
        const check = () => {
          if (pattern.test(stdout + stderr)) finish();
          else if (hasExited) finish(new Error(`exited before printing ${pattern}:\n${stdout}\n${stderr}`));
        };
        outputListeners.add(check);
        check();
      });
    },
  };
}

export { findFreePort } from '@oidc-orders/service-kit/testing';

/** Stops a server a failed test left running; only ever the child this helper started. */
export function killIfRunning(server: ServerProcess | undefined): void {
  if (server && server.child.exitCode === null && server.child.signalCode === null)
    server.child.kill('SIGKILL');
}
