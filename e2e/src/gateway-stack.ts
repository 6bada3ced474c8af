/**
 * The production topology on one machine: Debian's nginx running the repository's gateway
 * template (deploy/nginx/templates/default.conf.template) in front of the real authorization
 * server and orders service, each started as in the container (`node --import tsx src/server.ts`).
 *
 * Host-based routing without DNS: the authorization server's public host is `127.0.0.1` and the
 * orders service's is `localhost`. Both resolve everywhere, they are different hosts for cookies
 * and for nginx's `server_name`, and one certificate from a throw-away CA names both. Only the ports differ
 * from docker-compose.yml (high ports, so no privileges are needed).
 */
import { type ChildProcess, execFile, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { chmod, mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import {
  findFreePort,
  makeThrowAwayCa,
  type RunningService,
  startAuthServer,
  startOrdersService,
} from '@oidc-orders/service-kit/testing';

const execFileAsync = promisify(execFile);

export const repositoryRoot = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
export const gatewayTemplatePath = join(repositoryRoot, 'deploy/nginx/templates/default.conf.template');

/** The nginx binary: NGINX_BIN, else Debian's. */
export function nginxBinary(): string {
  return process.env.NGINX_BIN ?? '/usr/sbin/nginx';
}

export interface GatewayStack {
  /** `https://127.0.0.1:<port>`: the issuer, as the gateway publishes it. */
  authUrl: string;
  /** `https://localhost:<port>`: the orders service's public base URL. */
  ordersUrl: string;
  /** `http://localhost:<port>`: the gateway's plain-HTTP listener. */
  ordersHttpUrl: string;
  httpsPort: number;
  /** PEM of the CA that signed the gateway certificate, to trust in test requests. */
  ca: string;
  user: { username: string; password: string; name: string; sub: string };
  /** The rendered gateway configuration, as nginx runs it. */
  renderedConfig: string;
  /** Everything the three processes wrote, for failure messages. */
  logs(): string;
  stop(): Promise<void>;
}

/** A port nothing listens on right now (the test kit's). */
export const freePort = findFreePort;

/**
 * What the nginx image's entrypoint does with a template (20-envsubst-on-templates.sh): replace
 * `${NAME}` and `$NAME` for the given names only, so nginx's own `$variables` survive. A name the
 * template uses but the caller did not give is an error here (envsubst would leave it as is and
 * nginx would fail on it).
 */
export function renderTemplate(template: string, values: Record<string, string>): string {
  let rendered = template;
  for (const [name, value] of Object.entries(values)) {
    rendered = rendered.replace(new RegExp(`\\$\\{${name}\\}|\\$${name}(?![A-Za-z0-9_])`, 'g'), () => value);
  }
  const missing = [...rendered.matchAll(/\$\{([A-Z0-9_]+)\}/g)].map((match) => match[1]);
  if (missing.length > 0) throw new Error(`template variables without a value: ${missing.join(', ')}`);
  return rendered;
}

/**
 * The nginx image's own /etc/nginx/nginx.conf, with every path moved into `prefix`: the same
 * http-level directives (so a template that repeats one of them fails here as it would there),
 * then the rendered template where the image includes /etc/nginx/conf.d/*.conf.
 */
function mainConfig(prefix: string, siteConfig: string): string {
  // Running as root (a CI container), nginx would switch its workers to a user that may not exist.
  const user = process.getuid?.() === 0 ? 'user nobody nogroup;\n' : '';
  return `${user}worker_processes 1;
daemon off;
pid ${prefix}/nginx.pid;
error_log ${prefix}/error.log notice;
events { worker_connections 1024; }
http {
    default_type application/octet-stream;
    log_format main '$remote_addr - $remote_user [$time_local] "$request" '
                    '$status $body_bytes_sent "$http_referer" '
                    '"$http_user_agent" "$http_x_forwarded_for"';
    access_log ${prefix}/access.log main;
    sendfile on;
    keepalive_timeout 65;
    client_body_temp_path ${prefix}/client_body;
    proxy_temp_path ${prefix}/proxy;
    fastcgi_temp_path ${prefix}/fastcgi;
    uwsgi_temp_path ${prefix}/uwsgi;
    scgi_temp_path ${prefix}/scgi;
    include ${siteConfig};
}
`;
}

interface ManagedProcess {
  name: string;
  child: ChildProcess;
  output: string[];
}

/** What the stack stops and shows: nginx (started here) and the two services (the test kit's). */
interface StackMember {
  name: string;
  output(): string;
  stop(): Promise<void>;
  exited(): boolean;
}

function nginxMember(managed: ManagedProcess): StackMember {
  return {
    name: managed.name,
    output: () => managed.output.join(''),
    stop: () => stopProcess(managed, 'SIGTERM'),
    exited: () => managed.child.exitCode !== null || managed.child.signalCode !== null,
  };
}

function serviceMember(service: RunningService): StackMember {
  const child = () => service.process().child;
  return {
    name: service.process().name,
    output: () => service.output(),
    stop: () => service.stop(),
    exited: () => child().exitCode !== null || child().signalCode !== null,
  };
}

function startProcess(
  name: string,
  command: string,
  args: string[],
  options: { cwd: string; env: NodeJS.ProcessEnv },
): ManagedProcess {
  const child = spawn(command, args, {
    cwd: options.cwd,
    env: options.env,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const managed: ManagedProcess = { name, child, output: [] };
  const keep = (chunk: Buffer) => {
    managed.output.push(chunk.toString('utf8'));
    if (managed.output.length > 2000) managed.output.splice(0, 1000);
  };
  child.stdout?.on('data', keep);
  child.stderr?.on('data', keep);
  return managed;
}

async function stopProcess(managed: ManagedProcess, signal: NodeJS.Signals): Promise<void> {
  const { child } = managed;
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise<void>((resolveExit) => child.once('exit', () => resolveExit()));
  child.kill(signal);
  const timer = setTimeout(() => child.kill('SIGKILL'), 15_000);
  await exited;
  clearTimeout(timer);
}

async function waitFor(
  what: string,
  check: () => Promise<boolean>,
  processes: StackMember[],
  timeoutMs = 60_000,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    const dead = processes.find((p) => p.exited());
    if (dead) throw new Error(`${dead.name} exited while waiting for ${what}:\n${dead.output()}`);
    if (await check().catch(() => false)) return;
    await new Promise((r) => setTimeout(r, 200));
  }
  throw new Error(`timed out waiting for ${what}`);
}

function accepts(port: number): Promise<boolean> {
  return new Promise((resolveConnect) => {
    const socket = connect(port, '127.0.0.1');
    socket.once('connect', () => {
      socket.destroy();
      resolveConnect(true);
    });
    socket.once('error', () => resolveConnect(false));
  });
}

const secret = () => randomBytes(32).toString('base64url');

/** The child processes get a clean environment: nothing from the test runner leaks in. */
function baseEnvironment(): NodeJS.ProcessEnv {
  const keep = ['PATH', 'HOME', 'TMPDIR', 'LANG', 'SYSTEMROOT'];
  return Object.fromEntries(keep.filter((k) => process.env[k] !== undefined).map((k) => [k, process.env[k]]));
}

export async function startGatewayStack(): Promise<GatewayStack> {
  const dir = await mkdtemp(join(tmpdir(), 'gateway-'));
  // nginx's workers may run as another user (see mainConfig): they must reach the temp paths.
  await chmod(dir, 0o755);
  const processes: StackMember[] = [];
  const stop = async () => {
    // nginx first (fast shutdown), then the apps (graceful SIGTERM drain; the pause is 0 here).
    for (const member of [...processes].reverse()) {
      await member.stop();
    }
    await rm(dir, { recursive: true, force: true });
  };
  try {
    const [httpsPort, httpPort, authPort, ordersPort] = [
      await freePort(),
      await freePort(),
      await freePort(),
      await freePort(),
    ];
    const authUrl = `https://127.0.0.1:${httpsPort}`;
    const ordersUrl = `https://localhost:${httpsPort}`;
    // Removed with `dir`; nginx serves the server certificate, the test requests trust the CA.
    const certificate = makeThrowAwayCa(dir);
    const ca = certificate.caPem;

    const clientSecret = secret();
    const resourceSecret = secret();
    const user = { sub: 'u-alice', username: 'alice', password: secret(), name: 'Alice Example' };
    const seed = {
      clients: [
        {
          client_id: 'orders-web',
          client_secret: clientSecret,
          redirect_uris: [`${ordersUrl}/signin-oidc`],
          post_logout_redirect_uris: [`${ordersUrl}/signed-out`],
          backchannel_logout_uri: `${ordersUrl}/backchannel-logout`,
          grant_types: ['authorization_code', 'refresh_token'],
          scope: 'openid profile email offline_access orders.read',
          skip_consent: true,
        },
      ],
      resources: [
        {
          id: 'orders-api',
          scopes: ['orders.read', 'orders.write'],
          access_token_format: 'jwt',
          secret: resourceSecret,
          claims: ['email'],
        },
      ],
      users: [{ ...user, email: 'alice@example.com' }],
    };

    // The gateway, from the repository's template with this machine's ports and files.
    const siteConfigPath = join(dir, 'default.conf');
    const renderedConfig = renderTemplate(await readFile(gatewayTemplatePath, 'utf8'), {
      AUTH_HOST: '127.0.0.1',
      ORDERS_HOST: 'localhost',
      AUTH_UPSTREAM: `127.0.0.1:${authPort}`,
      ORDERS_UPSTREAM: `127.0.0.1:${ordersPort}`,
      HTTPS_PORT: String(httpsPort),
      HTTP_PORT: String(httpPort),
      HTTPS_PUBLIC_PORT_SUFFIX: `:${httpsPort}`,
      TLS_CERTIFICATE: certificate.certFile,
      TLS_CERTIFICATE_KEY: certificate.keyFile,
      // Never asked: both upstreams are addresses, not names.
      DNS_RESOLVER: '127.0.0.1',
    });
    await writeFile(siteConfigPath, renderedConfig);
    for (const temp of ['client_body', 'proxy', 'fastcgi', 'uwsgi', 'scgi']) {
      await mkdir(join(dir, temp), { recursive: true });
    }
    const mainConfigPath = join(dir, 'nginx.conf');
    await writeFile(mainConfigPath, mainConfig(dir, siteConfigPath));

    const nginx = nginxBinary();
    if (!existsSync(nginx))
      throw new Error(`nginx not found at ${nginx} (apt-get install nginx, or set NGINX_BIN)`);
    const nginxArgs = ['-p', dir, '-e', join(dir, 'error.log'), '-c', mainConfigPath];
    try {
      await execFileAsync(nginx, [...nginxArgs, '-t', '-q']);
    } catch (error) {
      const { stderr } = error as { stderr?: string };
      throw new Error(`nginx -t rejected the gateway configuration:\n${stderr}\n${renderedConfig}`);
    }
    const gateway = startProcess('nginx', nginx, nginxArgs, { cwd: dir, env: baseEnvironment() });
    processes.push(nginxMember(gateway));
    await waitFor('nginx to listen', () => accepts(httpsPort), processes);

    const common: Record<string, string> = {
      ...(baseEnvironment() as Record<string, string>),
      NODE_ENV: 'production',
      HOST: '127.0.0.1',
      LOG_LEVEL: 'info',
      TRUST_PROXY: '1',
      SHUTDOWN_PAUSE_MS: '0',
      // The apps call each other through the gateway (discovery, token, back-channel logout).
      NODE_EXTRA_CA_CERTS: certificate.caFile,
    };
    const authServer = await startAuthServer({
      seed,
      port: authPort,
      publicUrl: authUrl,
      database: { url: 'pglite://memory' },
      env: common,
    });
    processes.push(serviceMember(authServer));
    // Ready, and discovery through the gateway (https, the throw-away CA) succeeded.
    const orders = await startOrdersService({
      issuer: authUrl,
      resourceSecret,
      port: ordersPort,
      publicUrl: ordersUrl,
      database: { url: 'pglite://memory' },
      waitForProvider: true,
      env: { ...common, OIDC_CLIENT_SECRET: clientSecret },
    });
    processes.push(serviceMember(orders));

    return {
      authUrl,
      ordersUrl,
      ordersHttpUrl: `http://localhost:${httpPort}`,
      httpsPort,
      ca,
      user,
      renderedConfig,
      logs: () => processes.map((p) => `--- ${p.name}\n${p.output()}`).join('\n'),
      stop,
    };
  } catch (error) {
    const logs = processes.map((p) => `--- ${p.name}\n${p.output()}`).join('\n');
    await stop();
    if (error instanceof Error) error.message += `\n${logs}`;
    throw error;
  }
}
