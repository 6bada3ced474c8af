import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

/**
 * The production bundle (scripts/bundle-server.mjs, what `pnpm start` and the image run): what a
 * start loads is the static import graph of dist/server.js; the optional parts are chunks read only
 * when configured or first used, so a start on PostgreSQL without them never compiles them.
 */

const repositoryRoot = fileURLToPath(new URL('../../..', import.meta.url));
const BUNDLER = join(repositoryRoot, 'scripts', 'bundle-server.mjs');

/** Per app: packages that must stay out of the start and still be in the bundle, on demand. */
const LOADED_ON_DEMAND = [
  {
    app: 'auth-server',
    packages: [
      '@electric-sql/pglite',
      '@simplewebauthn/server',
      'qrcode',
      'ldapts',
      'nodemailer',
      '@zxcvbn-ts/language-common',
      '@opentelemetry/sdk-trace',
    ],
  },
  { app: 'orders', packages: ['@electric-sql/pglite', '@opentelemetry/sdk-trace'] },
];

const STATIC_IMPORT = /^import\s(?:[^;]*?\sfrom\s*)?"([^"]+)";?$/gm;
const DYNAMIC_IMPORT = /\bimport\("([^"]+)"\)/g;

interface OutputFile {
  text: string;
  staticImports: string[];
  dynamicImports: string[];
}

function readOutputs(outDir: string): Map<string, OutputFile> {
  const outputs = new Map<string, OutputFile>();
  for (const name of readdirSync(outDir).filter((file) => file.endsWith('.js'))) {
    const text = readFileSync(join(outDir, name), 'utf8');
    outputs.set(name, {
      text,
      staticImports: [...text.matchAll(STATIC_IMPORT)].map((match) => match[1] ?? ''),
      dynamicImports: [...text.matchAll(DYNAMIC_IMPORT)].map((match) => match[1] ?? ''),
    });
  }
  return outputs;
}

/** server.js and every output file it imports statically: what node compiles before it runs. */
function loadedAtStart(outputs: Map<string, OutputFile>): OutputFile[] {
  const seen = new Set<string>();
  const visit = (name: string) => {
    if (seen.has(name) || !outputs.has(name)) return;
    seen.add(name);
    for (const path of outputs.get(name)?.staticImports ?? []) {
      if (path.startsWith('./') && !path.includes('/node_modules/')) visit(path.slice(2));
    }
  };
  visit('server.js');
  return [...seen].map((name) => outputs.get(name) as OutputFile);
}

/** esbuild names each bundled module's path in a comment; an external import names its file. */
const mentions = (file: OutputFile, pkg: string) => file.text.includes(`/node_modules/${pkg}/`);

function bundle(app: string): { outDir: string; outputs: Map<string, OutputFile> } {
  const outDir = mkdtempSync(join(tmpdir(), `${app}-bundle-`));
  execFileSync(process.execPath, [BUNDLER, join(repositoryRoot, 'apps', app), outDir]);
  return { outDir, outputs: readOutputs(outDir) };
}

describe.each(LOADED_ON_DEMAND)('the $app bundle', ({ app, packages }) => {
  let built: ReturnType<typeof bundle>;
  beforeAll(() => {
    built = bundle(app);
  });
  afterAll(() => rmSync(built.outDir, { recursive: true, force: true }));

  it.each(packages)('has %s in a chunk of its own, out of what a start loads', (pkg) => {
    const atStart = loadedAtStart(built.outputs);
    expect(atStart.filter((file) => mentions(file, pkg))).toEqual([]);
    expect([...built.outputs.values()].some((file) => mentions(file, pkg))).toBe(true);
  });

  it('imports, besides node built-ins, only its own chunks and files that exist in node_modules', () => {
    const imports = [...built.outputs.values()].flatMap((file) => [
      ...file.staticImports,
      ...file.dynamicImports,
    ]);
    const unresolved = imports.filter(
      (path) =>
        !path.startsWith('node:') && !(path.startsWith('./') && existsSync(resolve(built.outDir, path))),
    );
    expect(unresolved).toEqual([]);
    expect(imports.some((path) => path.includes('/node_modules/'))).toBe(true);
  });
});
