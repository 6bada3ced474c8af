/**
 * Every command in every README works as written. Each fenced `sh` block is read
 * and each command is checked: the pnpm scripts and packages it names exist, the files it runs
 * exist, it uses no credential that no seed contains, and the relative links of every README
 * resolve. The commands that are safe to run here (they start an app on an embedded database) are
 * run as written, on a free port, until the app answers its health check.
 */
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { findFreePort, freeDevPorts, repositoryRoot, runShell, startDevLauncher } from '../src/processes.js';

interface ReadmeCommand {
  readme: string;
  command: string;
  /** The text after `# needs:`: something the reader provides (their seed, their database). */
  needs: string | undefined;
}

function readmes(): string[] {
  const found = ['README.md'];
  for (const group of ['apps', 'packages']) {
    for (const name of readdirSync(join(repositoryRoot, group))) {
      if (existsSync(join(repositoryRoot, group, name, 'README.md')))
        found.push(`${group}/${name}/README.md`);
    }
  }
  for (const name of ['e2e', 'bench'])
    if (existsSync(join(repositoryRoot, name, 'README.md'))) found.push(`${name}/README.md`);
  // The topic pages the root README links to carry commands and links too.
  for (const name of readdirSync(join(repositoryRoot, 'docs')))
    if (name.endsWith('.md')) found.push(`docs/${name}`);
  return found;
}

/** The folders and files named in the second column of the root README's "Where does my change go". */
function changeTableTargets(): string[] {
  const text = readFileSync(join(repositoryRoot, 'README.md'), 'utf8');
  const section = /^## Where does my change go\n([\s\S]*?)(?=^## )/m.exec(text)?.[1] ?? '';
  const targets: string[] = [];
  for (const row of section.split('\n').filter((line) => line.startsWith('| '))) {
    const where = row.split(' | ')[1] ?? '';
    for (const match of where.matchAll(/`([^`\s]*\/[^`\s]*)`/g)) targets.push(match[1]!);
  }
  return targets;
}

/** GitHub's heading anchors of a markdown file (lower case, punctuation dropped, spaces → `-`). */
function headingAnchors(file: string): Set<string> {
  const text = readFileSync(join(repositoryRoot, file), 'utf8').replace(/```[\s\S]*?```/g, '');
  const anchors = new Set<string>();
  for (const match of text.matchAll(/^#{1,6} (.+)$/gm)) {
    const base = match[1]!
      .trim()
      .toLowerCase()
      .replace(/[^\p{L}\p{N}\s_-]/gu, '')
      .replace(/\s/g, '-');
    let anchor = base;
    for (let n = 1; anchors.has(anchor); n++) anchor = `${base}-${n}`;
    anchors.add(anchor);
  }
  return anchors;
}

function commandsOf(readme: string): ReadmeCommand[] {
  const text = readFileSync(join(repositoryRoot, readme), 'utf8');
  const commands: ReadmeCommand[] = [];
  for (const block of text.matchAll(/```(?:sh|bash|shell)\n([\s\S]*?)```/g)) {
    for (const rawLine of block[1]!.replace(/\\\n\s*/g, ' ').split('\n')) {
      const line = rawLine.trim();
      if (line === '' || line.startsWith('#')) continue;
      const needs = /#\s*needs:\s*(.*)$/.exec(line)?.[1];
      commands.push({ readme, command: line.replace(/\s+#.*$/, '').trim(), needs });
    }
  }
  return commands;
}

const ALL = readmes().flatMap(commandsOf);
const rootPackage = JSON.parse(readFileSync(join(repositoryRoot, 'package.json'), 'utf8')) as {
  scripts: Record<string, string>;
};

/** Workspace packages by name, with their scripts. */
function workspacePackages(): Map<string, Record<string, string>> {
  const packages = new Map<string, Record<string, string>>();
  for (const group of ['apps', 'packages', '.']) {
    const base = join(repositoryRoot, group);
    for (const name of group === '.' ? ['e2e', 'bench'] : readdirSync(base)) {
      const file = join(base, name, 'package.json');
      if (!existsSync(file)) continue;
      const manifest = JSON.parse(readFileSync(file, 'utf8')) as {
        name: string;
        scripts?: Record<string, string>;
      };
      packages.set(manifest.name, manifest.scripts ?? {});
    }
  }
  return packages;
}

describe('README commands', () => {
  it('finds the commands (the check is not vacuous)', () => {
    expect(ALL.length).toBeGreaterThan(20);
  });

  it('every pnpm script and package a command names exists', () => {
    const packages = workspacePackages();
    const problems: string[] = [];
    for (const { readme, command } of ALL) {
      for (const match of command.matchAll(/pnpm(?:@[\d.]+)? --filter (\S+) (?:run )?([\w:-]+)/g)) {
        const scripts = packages.get(match[1]!);
        if (!scripts) problems.push(`${readme}: no package ${match[1]} in: ${command}`);
        else if (!scripts[match[2]!])
          problems.push(`${readme}: ${match[1]} has no script ${match[2]} in: ${command}`);
      }
      for (const match of command.matchAll(
        /(?:^|&& |\s)(?:npx -y )?pnpm(?:@[\d.]+)? (?!--filter|install|-r)([\w:-]+)/g,
      )) {
        if (!rootPackage.scripts[match[1]!])
          problems.push(`${readme}: no root script ${match[1]} in: ${command}`);
      }
    }
    expect(problems).toEqual([]);
  });

  it('every file a command runs with node exists', () => {
    const problems: string[] = [];
    for (const { readme, command } of ALL) {
      // Inside a container the paths are the image's (apps/auth-server is its working directory).
      if (/docker[ -]compose exec/.test(command)) continue;
      for (const match of command.matchAll(/\bnode (?:--import tsx )?([\w./-]+\.(?:m?js|ts))/g)) {
        if (!existsSync(join(repositoryRoot, match[1]!)))
          problems.push(`${readme}: ${match[1]} missing in: ${command}`);
      }
    }
    expect(problems).toEqual([]);
  });

  it('no command uses a secret or password that no seed contains', () => {
    const invented = ALL.filter(({ command }) => /dev-only-secret|alice-pass\b/.test(command));
    expect(invented).toEqual([]);
  });

  it('every relative link of every README resolves to a file', () => {
    const problems: string[] = [];
    for (const readme of readmes()) {
      const text = readFileSync(join(repositoryRoot, readme), 'utf8');
      for (const match of text.matchAll(/\]\(((?!https?:|#|mailto:)[^)\s#]+)(?:#[^)]*)?\)/g)) {
        const target = resolve(repositoryRoot, dirname(readme), match[1]!);
        if (!existsSync(target)) problems.push(`${readme}: ${match[1]}`);
      }
    }
    expect(problems).toEqual([]);
  });

  it('every anchor of a link names a heading of its page', () => {
    const problems: string[] = [];
    for (const readme of readmes()) {
      const text = readFileSync(join(repositoryRoot, readme), 'utf8');
      for (const match of text.matchAll(/\]\(((?!https?:|mailto:)[^)\s#]*)#([^)\s]+)\)/g)) {
        const page = match[1] === '' ? readme : join(dirname(readme), match[1]!);
        if (!existsSync(join(repositoryRoot, page))) continue; // reported by the test above
        if (!headingAnchors(page).has(match[2]!)) problems.push(`${readme}: ${match[1]}#${match[2]}`);
      }
    }
    expect(problems).toEqual([]);
  });

  it('every folder and file of the "Where does my change go" table exists', () => {
    const targets = changeTableTargets();
    expect(targets.length).toBeGreaterThan(20);
    expect(targets.filter((target) => !existsSync(join(repositoryRoot, target)))).toEqual([]);
  });

  it('each sub-README says once, at the top, how to get pnpm', () => {
    for (const readme of readmes().filter((file) => file.startsWith('apps/'))) {
      const top = readFileSync(join(repositoryRoot, readme), 'utf8').split('\n').slice(0, 12).join('\n');
      expect(top, readme).toContain('npm i -g pnpm@');
    }
  });

  const runnable = ALL.filter(
    ({ command, needs }) =>
      needs === undefined &&
      /^[A-Z_]+=\S+( [A-Z_]+=\S+)* pnpm --filter (auth-server|orders) start$/.test(command),
  );

  it('the app start commands are found', () => {
    expect(runnable.map(({ command }) => command.split(' pnpm')[0])).toHaveLength(3);
  });

  it.each(runnable.map(({ readme, command }) => [readme, command]))(
    '%s: `%s` starts and answers its health check',
    async (_readme, command) => {
      const port = await findFreePort();
      // A folder of its own under .data/, so a running `pnpm dev` (.data/orders) is never touched.
      const scratch = `.data/readme-check-${port}`;
      const runWith = command.replace(/\bpnpm\b/, 'npx -y pnpm@10.34.9').replaceAll('.data/', `${scratch}/`);
      const child = spawn('sh', ['-c', runWith], {
        cwd: repositoryRoot,
        detached: true,
        // PORT: a free one; nothing else is added to what the README says.
        env: {
          PATH: process.env.PATH ?? '',
          HOME: process.env.HOME ?? '/tmp',
          PORT: String(port),
          CI: 'true',
        },
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      let output = '';
      child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
      child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
      try {
        await expect
          .poll(
            async () => {
              if (child.exitCode !== null) return `exited ${child.exitCode}: ${output}`;
              return fetch(`http://127.0.0.1:${port}/health/live`).then(
                (response) => response.status,
                () => 'not yet',
              );
            },
            { timeout: 110_000, interval: 500 },
          )
          .toBe(200);
      } finally {
        // The whole group at once: pnpm, sh and the server node process (which would otherwise
        // outlive sh and hold its port and database folder). Startup is what is checked here.
        try {
          process.kill(-child.pid!, 'SIGKILL');
        } catch {
          // the group has already exited
        }
        await new Promise((done) =>
          child.exitCode === null && child.signalCode === null ? child.once('exit', done) : done(null),
        );
        rmSync(join(repositoryRoot, scratch), { recursive: true, force: true });
      }
    },
  );

  // The operator commands as the READMEs write them for development: no setting at all.
  const adminInDevelopment = ALL.filter(
    ({ command, needs }) =>
      needs === undefined && /^pnpm --filter auth-server (users|keys) [\w -]+$/.test(command),
  );

  it('the admin commands for development are found (users and keys)', () => {
    const names = new Set(adminInDevelopment.map(({ command }) => command.split(' ')[3]));
    expect([...names].sort()).toEqual(['keys', 'users']);
  });

  it('each admin command for development works as written, in order, against a running pnpm dev', async () => {
    const ports = await freeDevPorts();
    // pnpm dev's data in a folder of its own (DEV_DATA_DIR), which the commands then find as well.
    const dataDir = join(mkdtempSync(join(tmpdir(), 'readme-admin-')), 'data');
    const dev = startDevLauncher(dataDir, ports);
    try {
      await dev.waitForOutput(/Everything is running/);
      for (const { readme, command } of adminInDevelopment) {
        // Asynchronously: pnpm dev keeps logging into this process while the command runs.
        const result = await runShell(command.replace(/^pnpm\b/, 'npx -y pnpm@10.34.9'), {
          PATH: process.env.PATH ?? '',
          HOME: process.env.HOME ?? '/tmp',
          DEV_DATA_DIR: dataDir,
        });
        expect(result.status, `${readme}: ${command}\n${result.stderr}`).toBe(0);
        expect(result.stdout.trim(), `${readme}: ${command}`).not.toBe('');
      }
    } finally {
      await dev.stop();
      rmSync(dirname(dataDir), { recursive: true, force: true });
    }
    // pnpm dev's start and each command through npx and pnpm: minutes on a busy machine.
  }, 300_000);
});
