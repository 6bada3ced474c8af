/**
 * A throw-away Redis for the oidc-provider peer: Debian's `redis-server` started by the harness on
 * a free loopback port with its own temporary folder, never the machine's own instance, and
 * stopped (folder removed) when the peer stops. Its pid is sampled like PostgreSQL's backends, so
 * the peer's rows carry the CPU of its store too.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { createWriteStream, existsSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort, trackChild } from '../processes.js';

/** Where Debian's `redis-server` package puts the binary; `BENCH_REDIS_SERVER` overrides it. */
export function redisServerBinary(): string {
  return process.env.BENCH_REDIS_SERVER ?? '/usr/bin/redis-server';
}

/** Undefined when the binary is there, else the line to print (what to install). */
export function redisServerMissing(): string | undefined {
  const binary = redisServerBinary();
  if (existsSync(binary)) return undefined;
  return `${binary} not found: install Debian's redis-server (apt-get install redis-server) to bench the oidc-provider peer on Redis`;
}

export interface RedisServerProcess {
  readonly pid: number;
  readonly port: number;
  readonly url: string;
  /** The temporary folder holding its append-only file; removed by `stop`. */
  readonly dir: string;
  stop(): Promise<void>;
}

export interface RedisServerOptions {
  /** Receives `redis-server.log` (stdout and stderr); none when absent. */
  logDir?: string;
  readyTimeoutMs?: number;
}

const STOP_GRACE_MS = 10_000;

/**
 * Persistence as a production session store runs it: the append-only file fsynced once a second
 * (redis.io "Persistence": the recommended trade-off), RDB snapshots off so no fork lands in a
 * measured window. Loopback only, protected mode on.
 */
function serverArguments(port: number, dir: string): string[] {
  return [
    '--port',
    String(port),
    '--bind',
    '127.0.0.1',
    '--protected-mode',
    'yes',
    '--dir',
    dir,
    '--save',
    '',
    '--appendonly',
    'yes',
    '--appendfsync',
    'everysec',
    '--daemonize',
    'no',
    '--logfile',
    '',
  ];
}

export async function startRedisServer(options: RedisServerOptions = {}): Promise<RedisServerProcess> {
  const missing = redisServerMissing();
  if (missing) throw new Error(missing);
  const dir = await mkdtemp(join(tmpdir(), 'bench-redis-'));
  const port = await freePort();
  const child = spawn(redisServerBinary(), serverArguments(port, dir), { stdio: ['ignore', 'pipe', 'pipe'] });
  trackChild(child);
  const pid = child.pid;
  if (pid === undefined) throw new Error('redis-server: spawn failed');
  const output: string[] = [];
  const log = options.logDir
    ? createWriteStream(join(options.logDir, 'redis-server.log'), { flags: 'a' })
    : undefined;
  const onOutput = (chunk: Buffer) => {
    log?.write(chunk);
    output.push(chunk.toString('utf8'));
    if (output.length > 40) output.shift();
  };
  child.stdout?.on('data', onOutput);
  child.stderr?.on('data', onOutput);
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));

  const stop = async () => {
    await stopChild(child, exited);
    log?.end();
    await rm(dir, { recursive: true, force: true });
  };
  try {
    await waitForPong(port, options.readyTimeoutMs ?? 15_000, child);
  } catch (error) {
    await stop();
    const reason = error instanceof Error ? error.message : String(error);
    throw new Error(`redis-server did not become ready: ${reason}\n${output.join('')}`);
  }
  return { pid, port, url: `redis://127.0.0.1:${port}`, dir, stop };
}

async function stopChild(child: ChildProcess, exited: Promise<void>): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  // SIGTERM: redis-server flushes the append-only file and exits (redis.io "Signals handling").
  child.kill('SIGTERM');
  const killer = setTimeout(() => child.kill('SIGKILL'), STOP_GRACE_MS);
  await exited;
  clearTimeout(killer);
}

/** One inline `PING` over a raw socket: ready once it answers `+PONG` (RESP simple string). */
function ping(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect({ host: '127.0.0.1', port });
    let answer = '';
    const done = (ok: boolean) => {
      socket.destroy();
      resolve(ok);
    };
    socket.setTimeout(1_000, () => done(false));
    socket.on('error', () => done(false));
    socket.on('connect', () => socket.write('PING\r\n'));
    socket.on('data', (chunk) => {
      answer += chunk.toString('utf8');
      if (answer.includes('\r\n')) done(answer.startsWith('+PONG'));
    });
  });
}

async function waitForPong(port: number, timeoutMs: number, child: ChildProcess): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (child.exitCode !== null || child.signalCode !== null)
      throw new Error(`exited with ${child.signalCode ?? child.exitCode}`);
    if (await ping(port)) return;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  throw new Error(`no PONG on port ${port} within ${timeoutMs} ms`);
}
