import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { existsSync, readdirSync } from 'node:fs';
import { chmod, chown, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { findFreePort } from './free-port.js';
import { withPostgresClient } from './test-database.js';

/**
 * A highly available PostgreSQL of the test's own, built from Debian's packages the way operators
 * run it: one etcd member (the distributed configuration store), three PostgreSQL 15 nodes managed
 * by Patroni with `synchronous_mode: true` (a commit is acknowledged once a standby has it), and
 * HAProxy in front, sending connections only to the node whose Patroni REST API answers
 * `GET /primary` with 200 and cutting the sessions of a node marked down
 * (`on-marked-down shutdown-sessions`), so clients never keep talking to a demoted leader.
 * Everything listens on loopback, on free ports, in one temporary folder removed by `stop()`.
 *
 * PostgreSQL refuses to run as root: as root (CI's .ci/run) Patroni, and so every PostgreSQL it
 * starts, runs as the `postgres` OS user (`setpriv`, which execs in place, so a signal to the
 * child reaches Patroni itself), with the folder handed to that user.
 */

export interface PatroniClusterOptions {
  /** PostgreSQL's server binaries (default PG_BIN, else the newest /usr/lib/postgresql/<version>/bin). */
  postgresBinDir?: string;
  /** Default true; false for the cost measurement of synchronous replication. */
  synchronousMode?: boolean;
  /** Extra `postgresql.conf` parameters for every node (bootstrap DCS configuration). */
  parameters?: Record<string, string | number>;
}

export interface PatroniMember {
  name: string;
  role: 'leader' | 'replica' | 'sync_standby' | string;
  state: string;
  port: number;
  lag?: number | string;
}

export interface PatroniCluster {
  /** `postgres://postgres@127.0.0.1:<haproxy>/<database>`: always the current leader. */
  url(database?: string): string;
  /** A node's own URL, bypassing HAProxy (a standby answers reads only). */
  nodeUrl(name: string, database?: string): string;
  readonly haproxyPort: number;
  readonly nodeNames: readonly string[];
  /** The members as Patroni's REST API (`GET /cluster`) lists them now. */
  members(): Promise<PatroniMember[]>;
  /** The current leader's name (waits until there is one that HAProxy reaches). */
  leader(): Promise<string>;
  /**
   * Waits until a leader other than `not` (when given) runs, HAProxy sends connections to it and
   * it accepts a write, and (with synchronous mode) a synchronous standby is in place. Returns its name.
   */
  waitForLeader(options?: { not?: string; timeoutMs?: number }): Promise<string>;
  /**
   * Waits until both other nodes replicate from the leader and (in synchronous mode) one of them is
   * the synchronous standby: after a failover the old leader rejoins as a standby first.
   */
  waitForStandbys(): Promise<void>;
  /** SIGKILL to the leader's postmaster (its PID from postmaster.pid): a crash, not a shutdown. */
  killLeaderPostgres(): Promise<{ name: string; pid: number }>;
  /**
   * A planned switchover, as a runbook does it: writes stopped on the leader and the running ones
   * drained (see `stopWrites`), then the leader's REST API (`POST /switchover`, to `candidate` or
   * the sync standby), then writes allowed again on the former leader.
   */
  switchover(candidate?: string): Promise<{ from: string; to: string }>;
  /** Each running node's postmaster PID (from its postmaster.pid), e.g. to sample their CPU time. */
  postmasterPids(): Promise<number[]>;
  /** What etcd, Patroni and HAProxy printed, for a failed test's message. */
  output(): string;
  stop(): Promise<void>;
}

const NODE_NAMES = ['pg1', 'pg2', 'pg3'] as const;

/** PG_BIN, else the newest of Debian's /usr/lib/postgresql/<version>/bin (15 on Debian 12). */
function defaultPostgresBinDir(): string {
  if (process.env.PG_BIN) return process.env.PG_BIN;
  const root = '/usr/lib/postgresql';
  const versions = existsSync(root)
    ? readdirSync(root).filter((version) => existsSync(join(root, version, 'bin', 'postgres')))
    : [];
  const newest = versions.sort((a, b) => Number(b) - Number(a))[0] ?? '15';
  return join(root, newest, 'bin');
}

interface NodePorts {
  name: string;
  postgres: number;
  rest: number;
}

interface Child {
  name: string;
  process: ChildProcess;
  exited: Promise<void>;
}

/** Starts etcd, three Patroni nodes and HAProxy; resolves once a leader takes writes through HAProxy. */
export async function startPatroniCluster(options: PatroniClusterOptions = {}): Promise<PatroniCluster> {
  const directory = await mkdtemp(join(tmpdir(), 'patroni-cluster-'));
  const owner = postgresOwner();
  if (owner) await chown(directory, owner.uid, owner.gid);
  await chmod(directory, 0o700);

  const etcdPorts = { client: await findFreePort(), peer: await findFreePort() };
  const nodes: NodePorts[] = [];
  for (const name of NODE_NAMES)
    nodes.push({ name, postgres: await findFreePort(), rest: await findFreePort() });
  const haproxyPort = await findFreePort();

  const children: Child[] = [];
  let log = '';
  const spawnLogged = (
    name: string,
    command: string,
    args: string[],
    env: NodeJS.ProcessEnv = process.env,
  ) => {
    const child = spawn(command, args, { stdio: ['ignore', 'pipe', 'pipe'], env });
    const append = (chunk: Buffer) => {
      log += `[${name}] ${chunk.toString()}`;
      if (log.length > 400_000) log = log.slice(-200_000);
    };
    child.stdout?.on('data', append);
    child.stderr?.on('data', append);
    const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
    children.push({ name, process: child, exited });
    return child;
  };

  const synchronous = options.synchronousMode ?? true;
  const cluster = makeHandle({ directory, nodes, haproxyPort, children, synchronous, output: () => log });
  try {
    spawnLogged('etcd', 'etcd', etcdArguments(directory, etcdPorts));
    const binDir = options.postgresBinDir ?? defaultPostgresBinDir();
    for (const node of nodes) {
      const config = join(directory, `${node.name}.yml`);
      await writeFile(config, patroniConfig({ directory, node, etcdPorts, binDir, options }), {
        mode: 0o644,
      });
      const [command, args] = owner
        ? ['setpriv', ['--reuid=postgres', '--regid=postgres', '--init-groups', '--', 'patroni', config]]
        : ['patroni', [config]];
      // HOME: Patroni and psql write nothing there, but PostgreSQL tools look for ~/.pgpass.
      spawnLogged(node.name, command, args, {
        ...process.env,
        HOME: directory,
        PGPASSFILE: join(directory, 'pgpass'),
      });
    }
    const haproxyConfig = join(directory, 'haproxy.cfg');
    await writeFile(haproxyConfig, haproxyConfigText(nodes, haproxyPort));
    spawnLogged('haproxy', 'haproxy', ['-f', haproxyConfig, '-db']);
    await cluster.waitForLeader({ timeoutMs: 180_000 });
    await cluster.waitForStandbys();
  } catch (error) {
    await cluster.stop();
    throw new Error(`the Patroni cluster did not start: ${String(error)}\n${log.slice(-6000)}`);
  }
  return cluster;
}

/** uid/gid of the `postgres` OS user when we are root (PostgreSQL will not run as root), else null. */
function postgresOwner(): { uid: number; gid: number } | null {
  if (process.getuid?.() !== 0) return null;
  const id = (flag: string) => Number(execFileSync('id', [flag, 'postgres']).toString().trim());
  return { uid: id('-u'), gid: id('-g') };
}

function etcdArguments(directory: string, ports: { client: number; peer: number }): string[] {
  const client = `http://127.0.0.1:${ports.client}`;
  const peer = `http://127.0.0.1:${ports.peer}`;
  return [
    '--name=etcd1',
    `--data-dir=${join(directory, 'etcd')}`,
    `--listen-client-urls=${client}`,
    `--advertise-client-urls=${client}`,
    `--listen-peer-urls=${peer}`,
    `--initial-advertise-peer-urls=${peer}`,
    `--initial-cluster=etcd1=${peer}`,
    '--initial-cluster-state=new',
    '--log-level=warn',
  ];
}

/**
 * One node's Patroni configuration (Patroni's YAML; JSON is valid YAML). The DCS part under
 * `bootstrap` is written to etcd by the first node and shared by all: a 1 s loop and a 20 s leader
 * TTL (the smallest Patroni accepts), and `primary_start_timeout: 0`, so a crashed leader's
 * PostgreSQL is not restarted in place while its standby can take over: a real failover.
 */
function patroniConfig(input: {
  directory: string;
  node: NodePorts;
  etcdPorts: { client: number };
  binDir: string;
  options: PatroniClusterOptions;
}): string {
  const { directory, node, etcdPorts, binDir, options } = input;
  const trust = [
    'local all all trust',
    'host all all 127.0.0.1/32 trust',
    'host replication all 127.0.0.1/32 trust',
  ];
  const config = {
    scope: 'test-cluster',
    name: node.name,
    log: { level: 'WARNING' },
    restapi: { listen: `127.0.0.1:${node.rest}`, connect_address: `127.0.0.1:${node.rest}` },
    etcd3: { hosts: [`127.0.0.1:${etcdPorts.client}`] },
    bootstrap: {
      dcs: {
        ttl: 20,
        loop_wait: 1,
        retry_timeout: 5,
        maximum_lag_on_failover: 1048576,
        primary_start_timeout: 0,
        master_start_timeout: 0,
        synchronous_mode: options.synchronousMode ?? true,
        postgresql: {
          use_pg_rewind: true,
          use_slots: true,
          parameters: { max_connections: 200, wal_keep_size: '128MB', ...options.parameters },
        },
      },
      initdb: [{ encoding: 'UTF8' }, { 'auth-local': 'trust' }, { 'auth-host': 'trust' }],
      pg_hba: trust,
    },
    postgresql: {
      listen: `127.0.0.1:${node.postgres}`,
      connect_address: `127.0.0.1:${node.postgres}`,
      data_dir: join(directory, node.name),
      bin_dir: binDir,
      pgpass: join(directory, `pgpass-${node.name}`),
      pg_hba: trust,
      authentication: {
        superuser: { username: 'postgres' },
        replication: { username: 'postgres' },
        rewind: { username: 'postgres' },
      },
      parameters: { unix_socket_directories: directory },
    },
  };
  return JSON.stringify(config, null, 2);
}

/**
 * HAProxy's TCP proxy to the leader: each node's Patroni REST API is checked every second on
 * `GET /primary` (200 only on the leader); two failed checks mark a node down and
 * `on-marked-down shutdown-sessions` closes the connections still open to it.
 */
function haproxyConfigText(nodes: NodePorts[], port: number): string {
  const servers = nodes.map(
    (node) => `  server ${node.name} 127.0.0.1:${node.postgres} check port ${node.rest}`,
  );
  return [
    'global',
    '  maxconn 1000',
    'defaults',
    '  mode tcp',
    '  timeout connect 2s',
    '  timeout client 30m',
    '  timeout server 30m',
    '  timeout check 2s',
    'listen primary',
    `  bind 127.0.0.1:${port}`,
    '  option httpchk GET /primary',
    '  http-check expect status 200',
    '  default-server inter 1s fall 2 rise 1 on-marked-down shutdown-sessions',
    ...servers,
    '',
  ].join('\n');
}

const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

async function restJson(
  port: number,
  path: string,
  init?: RequestInit,
): Promise<{ status: number; body: unknown }> {
  const response = await fetch(`http://127.0.0.1:${port}${path}`, {
    ...init,
    signal: AbortSignal.timeout(5000),
  });
  const text = await response.text();
  try {
    return { status: response.status, body: JSON.parse(text) };
  } catch {
    return { status: response.status, body: text };
  }
}

async function waitForStandbys(
  cluster: Pick<PatroniCluster, 'members'>,
  synchronous: boolean,
): Promise<void> {
  const deadline = Date.now() + 180_000;
  for (;;) {
    const members = await cluster.members().catch(() => []);
    // Patroni 3.0 says `running` for a standby (later versions `streaming`); a lag means it replicates.
    const streaming = members.filter(
      (member) =>
        member.role !== 'leader' &&
        ['running', 'streaming'].includes(member.state) &&
        typeof member.lag === 'number',
    );
    const syncReady = !synchronous || members.some((member) => member.role === 'sync_standby');
    if (streaming.length === NODE_NAMES.length - 1 && syncReady) return;
    if (Date.now() > deadline) throw new Error(`standbys not streaming: ${JSON.stringify(members)}`);
    await pause(250);
  }
}

/** The members as the first Patroni REST API that answers lists them (`GET /cluster`). */
async function clusterMembers(nodes: NodePorts[]): Promise<PatroniMember[]> {
  for (const candidate of nodes) {
    const answer = await restJson(candidate.rest, '/cluster').catch(() => null);
    const list = (answer?.body as { members?: PatroniMember[] } | undefined)?.members;
    if (list) return list;
  }
  return [];
}

/**
 * Whether HAProxy's address reaches the node listening on `leaderPort` and it takes a write (a
 * temporary table): HAProxy may still send to the previous leader for a check interval.
 */
function servesWritesThroughProxy(proxyUrl: string, leaderPort: number): Promise<boolean> {
  return withPostgresClient(proxyUrl, async (client) => {
    const answer = await client.query<{ port: number; leader: boolean }>(
      "select current_setting('port')::int as port, not pg_is_in_recovery() as leader",
    );
    if (answer.rows[0]?.port !== leaderPort || !answer.rows[0]?.leader) return false;
    await client.query('create temporary table write_probe (n int)');
    return true;
  }).catch(() => false);
}

interface HandleParts {
  directory: string;
  nodes: NodePorts[];
  haproxyPort: number;
  children: Child[];
  synchronous: boolean;
  output: () => string;
}

function makeHandle({
  directory,
  nodes,
  haproxyPort,
  children,
  synchronous,
  output,
}: HandleParts): PatroniCluster {
  const url = (database = 'postgres') => `postgres://postgres@127.0.0.1:${haproxyPort}/${database}`;
  const node = (name: string) => {
    const found = nodes.find((candidate) => candidate.name === name);
    if (!found) throw new Error(`no node ${name}`);
    return found;
  };
  const members = () => clusterMembers(nodes);
  const proxyLeads = (leader: string) => servesWritesThroughProxy(url(), node(leader).postgres);

  const handle: PatroniCluster = {
    url,
    nodeUrl: (name, database = 'postgres') =>
      `postgres://postgres@127.0.0.1:${node(name).postgres}/${database}`,
    haproxyPort,
    nodeNames: NODE_NAMES,
    members,
    leader: () => handle.waitForLeader(),
    async waitForLeader({ not, timeoutMs = 120_000 } = {}) {
      const deadline = Date.now() + timeoutMs;
      for (;;) {
        const leader = (await members()).find(
          (member) => member.role === 'leader' && member.state === 'running',
        );
        if (leader && leader.name !== not && (await proxyLeads(leader.name))) return leader.name;
        if (Date.now() > deadline)
          throw new Error(
            `no leader${not ? ` other than ${not}` : ''} within ${timeoutMs} ms: ${JSON.stringify(await members())}`,
          );
        await pause(200);
      }
    },
    waitForStandbys: () => waitForStandbys(handle, synchronous),
    async killLeaderPostgres() {
      const name = await handle.leader();
      const pid = await postmasterPid(directory, name);
      if (pid === 0) throw new Error(`no postmaster.pid for the leader ${name}`);
      process.kill(pid, 'SIGKILL');
      return { name, pid };
    },
    async switchover(candidate) {
      const from = await handle.leader();
      await handle.waitForStandbys();
      const to = candidate ?? (await members()).find((member) => member.role === 'sync_standby')?.name;
      const leaderUrl = `postgres://postgres@127.0.0.1:${node(from).postgres}/postgres`;
      await stopWrites(leaderUrl);
      try {
        const answer = await restJson(node(from).rest, '/switchover', {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ leader: from, ...(to ? { candidate: to } : {}) }),
        });
        if (answer.status !== 200)
          throw new Error(`switchover refused: ${answer.status} ${JSON.stringify(answer.body)}`);
        return { from, to: await handle.waitForLeader({ not: from }) };
      } finally {
        await allowWrites(leaderUrl);
      }
    },
    async postmasterPids() {
      const pids = await Promise.all(nodes.map((candidate) => postmasterPid(directory, candidate.name)));
      return pids.filter((pid) => pid > 0);
    },
    output,
    stop: () => stopAll(directory, nodes, children),
  };
  return handle;
}

const SWITCHOVER_DRAIN_MS = 10_000;

/**
 * The switchover's first step: the leader takes no more writes (every new transaction is read-only,
 * so a write is refused with 25006 and waits for the new leader), and the writes already running
 * finish, their commits acknowledged by the synchronous standby. Patroni's fast shutdown then meets
 * no commit waiting in SyncRepWaitForLSN: such a commit has happened locally, yet its session is
 * ended without an answer (a WARNING, then the connection closes), so its client cannot know it
 * committed and must not send it again.
 */
async function stopWrites(leaderUrl: string): Promise<void> {
  await withPostgresClient(leaderUrl, async (client) => {
    await client.query('alter system set default_transaction_read_only = on');
    await client.query('select pg_reload_conf()');
    const deadline = Date.now() + SWITCHOVER_DRAIN_MS;
    for (;;) {
      const { rows } = await client.query<{ writing: number }>(
        `select count(*)::int as writing from pg_stat_activity
          where pid <> pg_backend_pid() and backend_type = 'client backend'
            and (backend_xid is not null or wait_event = 'SyncRep')`,
      );
      if (rows[0]!.writing === 0 || Date.now() > deadline) return;
      await pause(20);
    }
  });
}

/**
 * Undoes `stopWrites` on the former leader once it runs again (as a standby; ALTER SYSTEM is
 * allowed there), so it takes writes whenever it leads again.
 */
async function allowWrites(formerLeaderUrl: string): Promise<void> {
  const deadline = Date.now() + 60_000;
  for (;;) {
    try {
      await withPostgresClient(formerLeaderUrl, async (client) => {
        await client.query('alter system reset default_transaction_read_only');
        await client.query('select pg_reload_conf()');
      });
      return;
    } catch (error) {
      if (Date.now() > deadline) throw error;
      await pause(250);
    }
  }
}

/** The PID in a node's postmaster.pid, 0 when it has none (not running). */
function postmasterPid(directory: string, name: string): Promise<number> {
  return readFile(join(directory, name, 'postmaster.pid'), 'utf8')
    .then((text) => Number(text.split('\n')[0]) || 0)
    .catch(() => 0);
}

/**
 * HAProxy first, then each Patroni (SIGTERM: it stops its PostgreSQL with a fast shutdown), then
 * etcd; whatever does not exit within 30 s is killed, and so is any postmaster a killed Patroni left.
 */
async function stopAll(directory: string, nodes: NodePorts[], children: Child[]): Promise<void> {
  const stopChild = async (child: Child) => {
    if (child.process.exitCode !== null || child.process.signalCode !== null) return;
    child.process.kill('SIGTERM');
    const timer = setTimeout(() => child.process.kill('SIGKILL'), 30_000);
    await child.exited;
    clearTimeout(timer);
  };
  const named = (prefix: string) => children.filter((child) => child.name.startsWith(prefix));
  await Promise.all(named('haproxy').map(stopChild));
  await Promise.all(children.filter((child) => child.name.startsWith('pg')).map(stopChild));
  for (const node of nodes) {
    const pid = await postmasterPid(directory, node.name);
    if (pid > 0) {
      try {
        process.kill(pid, 'SIGKILL');
      } catch {
        // already gone
      }
    }
  }
  await Promise.all(named('etcd').map(stopChild));
  await rm(directory, { recursive: true, force: true });
}
