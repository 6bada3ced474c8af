import { type ChildProcess, spawn } from 'node:child_process';
import { isAbsolute, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

/** The monorepo's root: relative `cwd`s below are read from there. */
export const repositoryRoot = fileURLToPath(new URL('../../../..', import.meta.url));

/** `node --import tsx <script> <args>` in `cwd` with exactly `env` plus PATH; stdout and stderr piped. */
function spawnTsx(
  cwd: string,
  script: string,
  args: string[],
  env: Record<string, string>,
  stdin: 'ignore' | 'pipe',
) {
  return spawn(process.execPath, ['--import', 'tsx', script, ...args], {
    cwd: isAbsolute(cwd) ? cwd : resolve(repositoryRoot, cwd),
    env: { PATH: process.env.PATH ?? '', ...env },
    stdio: [stdin, 'pipe', 'pipe'],
  });
}

export interface ManagedProcess {
  readonly name: string;
  readonly child: ChildProcess;
  /** Everything it printed so far (stdout and stderr), for failure messages. */
  output(): string;
  /** Resolves with the first match in stdout; rejects when the process exits first. */
  waitForOutput(pattern: RegExp): Promise<RegExpExecArray>;
  /** The exit code once it has exited (null when killed by a signal). */
  readonly exited: Promise<number | null>;
  /** SIGTERM, then SIGKILL after 10 s; resolves once it has exited. */
  stop(): Promise<void>;
}

/**
 * `node --import tsx <script>` in `cwd` (absolute, or relative to the repository root) with exactly
 * `env` (plus PATH): how every service starts in its container and in `pnpm dev`. tsx as a loader
 * rather than the tsx CLI, so the signals a test sends reach the process that listens.
 */
export function startNodeProcess(
  name: string,
  cwd: string,
  script: string,
  env: Record<string, string>,
  args: string[] = [],
): ManagedProcess {
  const child = spawnTsx(cwd, script, args, env, 'ignore');
  let stdout = '';
  let all = '';
  const listeners = new Set<() => void>();
  child.stdout!.on('data', (chunk: Buffer) => {
    stdout += chunk.toString();
    all += chunk.toString();
    for (const listener of listeners) listener();
  });
  child.stderr!.on('data', (chunk: Buffer) => {
    all += chunk.toString();
  });
  let hasExited = false;
  const exited = new Promise<number | null>((done) =>
    child.once('exit', (code) => {
      hasExited = true;
      for (const listener of listeners) listener();
      done(code);
    }),
  );
  return {
    name,
    child,
    output: () => all,
    exited,
    waitForOutput(pattern) {
      return new Promise((done, fail) => {
        const check = () => {
          const match = pattern.exec(stdout);
          if (match) {
            listeners.delete(check);
            done(match);
          } else if (hasExited) {
            listeners.delete(check);
            fail(new Error(`${name} exited before printing ${pattern}:\n${all}`));
          }
        };
        listeners.add(check);
        check();
      });
    },
    stop: () => stopProcess(child, exited),
  };
}

async function stopProcess(child: ChildProcess, exited: Promise<unknown>): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  child.kill('SIGTERM');
  const killTimer = setTimeout(() => child.kill('SIGKILL'), 10_000);
  await exited;
  clearTimeout(killTimer);
}

/** Polls `url` until `accept(response body)` holds; fails early, with the process's output, when it exits. */
export async function waitUntilReady(
  processHandle: ManagedProcess,
  url: string,
  accept: (body: string) => boolean = () => true,
  timeoutMs = 90_000,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (processHandle.child.exitCode !== null) {
      throw new Error(`${processHandle.name} exited during start:\n${processHandle.output()}`);
    }
    const ready = await fetch(url).then(
      async (response) => response.ok && accept(await response.text()),
      () => false,
    );
    if (ready) return;
    if (Date.now() > deadline) {
      throw new Error(`${processHandle.name} was not ready at ${url}:\n${processHandle.output()}`);
    }
    await new Promise((done) => setTimeout(done, 100));
  }
}

export interface CommandResult {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** `node --import tsx <script> <args>` run to completion with `stdin`, as a package script runs it. */
export function runNodeScript(
  cwd: string,
  script: string,
  args: string[],
  env: Record<string, string>,
  stdin = '',
): Promise<CommandResult> {
  const child = spawnTsx(cwd, script, args, env, 'pipe');
  let stdout = '';
  let stderr = '';
  child.stdout!.on('data', (chunk: Buffer) => {
    stdout += chunk.toString('utf8');
  });
  child.stderr!.on('data', (chunk: Buffer) => {
    stderr += chunk.toString('utf8');
  });
  child.stdin!.end(stdin);
  return new Promise((done, fail) => {
    child.on('error', fail);
    child.on('close', (code) => done({ code, stdout, stderr }));
  });
}
