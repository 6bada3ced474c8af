import { type ChildProcess, spawn } from 'node:child_process';
import { createWriteStream, mkdirSync, type WriteStream } from 'node:fs';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { readCpuMs, readRssBytes } from './proc.js';

/**
 * Child processes of the harness: every server under test runs in its own process, never in the
 * harness (which runs autocannon and would otherwise share the event loop with the server).
 */

export interface ServerSpec {
  /** Short name used in logs and the report, e.g. `auth-server (postgres)`. */
  name: string;
  /** Working directory; `entry` is resolved from it. */
  cwd: string;
  /**
   * Script run by node itself, so the child pid is node (RSS is the server's): a `.js` file as
   * `node <entry>`, anything else (TypeScript) as `node --import tsx <entry>`.
   */
  entry: string;
  port: number;
  env: Record<string, string>;
  /** Path answered with 200 once the server can take traffic. */
  readyPath?: string;
  readyTimeoutMs?: number;
  /** Directory that receives `<name>.log` with the child's stdout and stderr. */
  logDir: string;
  /** Extra node flags, e.g. `--cpu-prof` (written when the server exits after SIGTERM). */
  nodeFlags?: string[];
  /**
   * `--pin`: the only CPU the server may run on. node is started through `taskset -c <cpu>`, which
   * execs it (same pid) before any of its threads exist, so every thread inherits the affinity.
   */
  cpu?: number;
}

export interface ServerProcess {
  readonly name: string;
  readonly pid: number;
  readonly baseUrl: string;
  readonly logFile: string;
  /** Highest VmRSS seen so far, in bytes (sampled every 500 ms). */
  maxRssBytes(): number;
  /** VmRSS right after the server became ready, before any load. */
  readyRssBytes(): number;
  /** VmRSS now (0 when the process is gone). */
  currentRssBytes(): Promise<number>;
  /** CPU time (user + system, every thread) used so far, ms; 0 when the process is gone. */
  cpuMs(): Promise<number>;
  /** Set when the process exited without the harness stopping it (someone else signalled it, or it crashed). */
  unexpectedExit(): string | undefined;
  /** The last lines the child wrote, for error messages. */
  logTail(): string;
  stop(): Promise<void>;
}

const RSS_SAMPLE_MS = 500;
const STOP_GRACE_MS = 10_000;
const TAIL_LINES = 40;

const live = new Set<ChildProcess>();

/** Adds a child the harness started elsewhere (the peer's Redis) to those killed on exit. */
export function trackChild(child: ChildProcess): void {
  live.add(child);
  child.once('exit', () => live.delete(child));
}

/** Kills every child still running, synchronously: safe to call from `process.on('exit')`. */
export function killAllChildrenNow(): void {
  for (const child of live) {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  }
  live.clear();
}

export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.unref();
    server.on('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() => {
        if (address && typeof address === 'object') resolve(address.port);
        else reject(new Error('could not allocate a port'));
      });
    });
  });
}

export async function startServer(spec: ServerSpec): Promise<ServerProcess> {
  mkdirSync(spec.logDir, { recursive: true });
  const logFile = join(spec.logDir, `${spec.name.replace(/[^a-z0-9.-]+/gi, '_')}.log`);
  const log: WriteStream = createWriteStream(logFile, { flags: 'a' });
  const tail: string[] = [];
  const baseUrl = `http://127.0.0.1:${spec.port}`;

  const loader = spec.entry.endsWith('.js') ? [] : ['--import', 'tsx'];
  const nodeArgs = [...(spec.nodeFlags ?? []), ...loader, spec.entry];
  const [command, args] =
    spec.cpu === undefined
      ? [process.execPath, nodeArgs]
      : ['taskset', ['-c', String(spec.cpu), process.execPath, ...nodeArgs]];
  const child = spawn(command, args, {
    cwd: spec.cwd,
    env: { ...inheritedEnvironment(), ...spec.env },
    // stdin is a pipe so our own peers can exit when the harness dies (they watch for its end).
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  live.add(child);
  const pid = child.pid;
  if (pid === undefined) throw new Error(`${spec.name}: spawn failed`);

  const onOutput = (chunk: Buffer) => {
    log.write(chunk);
    for (const line of chunk.toString('utf8').split('\n')) {
      if (line.trim() === '') continue;
      tail.push(line);
      if (tail.length > TAIL_LINES) tail.shift();
    }
  };
  child.stdout?.on('data', onOutput);
  child.stderr?.on('data', onOutput);

  let stopping = false;
  let unexpected: string | undefined;
  const exited = new Promise<void>((resolve) => {
    child.once('exit', (code, signal) => {
      live.delete(child);
      if (!stopping)
        unexpected = `exited with ${signal ?? code} at ${new Date().toISOString()} without being stopped by the harness`;
      log.write(`\n[bench] ${spec.name} exited with ${signal ?? code}\n`);
      resolve();
    });
  });
  let hasExited = false;
  void exited.then(() => {
    hasExited = true;
  });

  let maxRss = 0;
  let readyRss = 0;
  const sample = async () => {
    const rss = await readRssBytes(pid);
    if (rss !== undefined && rss > maxRss) maxRss = rss;
    return rss;
  };
  const sampler = setInterval(() => void sample(), RSS_SAMPLE_MS);
  sampler.unref();

  const stop = async () => {
    stopping = true;
    clearInterval(sampler);
    if (!hasExited) {
      child.kill('SIGTERM');
      const killer = setTimeout(() => child.kill('SIGKILL'), STOP_GRACE_MS);
      await exited;
      clearTimeout(killer);
    }
    child.stdin?.destroy();
    await new Promise<void>((resolve) => log.end(resolve));
  };

  const handle: ServerProcess = {
    name: spec.name,
    pid,
    baseUrl,
    logFile,
    maxRssBytes: () => maxRss,
    readyRssBytes: () => readyRss,
    currentRssBytes: async () => (await sample()) ?? 0,
    cpuMs: async () => (await readCpuMs(pid)) ?? 0,
    unexpectedExit: () => unexpected,
    logTail: () => tail.join('\n'),
    stop,
  };

  try {
    await waitUntilReady(baseUrl + (spec.readyPath ?? '/health/ready'), spec.readyTimeoutMs ?? 60_000, () =>
      hasExited ? `exited with ${child.signalCode ?? child.exitCode}` : undefined,
    );
  } catch (error) {
    await stop();
    const message = error instanceof Error ? error.message : String(error);
    throw new Error(
      `${spec.name} did not become ready: ${message}\n--- last output (${logFile}) ---\n${handle.logTail()}`,
    );
  }
  readyRss = (await sample()) ?? 0;
  return handle;
}

async function waitUntilReady(
  url: string,
  timeoutMs: number,
  exitReason: () => string | undefined,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  let last = 'no answer yet';
  while (Date.now() < deadline) {
    const reason = exitReason();
    if (reason) throw new Error(`the process ${reason}`);
    try {
      const response = await fetch(url, { signal: AbortSignal.timeout(2_000) });
      await response.arrayBuffer();
      if (response.status === 200) return;
      last = `HTTP ${response.status}`;
    } catch (error) {
      last = error instanceof Error ? error.message : String(error);
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  throw new Error(`timed out after ${timeoutMs} ms waiting for ${url} (${last})`);
}

/**
 * The harness's own environment minus anything that would reconfigure a server behind our back
 * (a developer's DATABASE_URL, PORT, …): each server gets exactly the variables its spec names.
 */
function inheritedEnvironment(): Record<string, string> {
  const keep = ['PATH', 'HOME', 'TMPDIR', 'LANG', 'TZ', 'SystemRoot'];
  const env: Record<string, string> = {};
  for (const key of keep) {
    const value = process.env[key];
    if (value !== undefined) env[key] = value;
  }
  return env;
}
