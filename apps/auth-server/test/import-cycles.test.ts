/**
 * No import circle in the source of any package: a circle makes the load order decide what a
 * module sees, and hides which side of a boundary owns a type. Type-only imports count too (they
 * tie the files together just the same). Imports are read with TypeScript's own pre-processor, so
 * comments and strings are not mistaken for them.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '../../..');

const SOURCE_FOLDERS = [
  'apps/auth-server/src',
  'apps/orders/src',
  'apps/spa/src',
  'packages/oauth-core/src',
  'packages/service-kit/src',
  'packages/cli/src',
];

function sourceFiles(folder: string): string[] {
  return readdirSync(folder, { recursive: true, encoding: 'utf8' })
    .filter((name) => name.endsWith('.ts') && !name.endsWith('.d.ts'))
    .map((name) => join(folder, name));
}

/** The files of the same folder tree a file imports (`./x.js` is `./x.ts` in the source). */
function relativeImports(file: string, files: ReadonlySet<string>): string[] {
  const { importedFiles } = ts.preProcessFile(readFileSync(file, 'utf8'), true, false);
  return importedFiles
    .map((imported) => imported.fileName)
    .filter((name) => name.startsWith('.'))
    .map((name) => resolve(dirname(file), name.replace(/\.js$/, '.ts')))
    .filter((target) => files.has(target));
}

/** Every circle, each once, as the files along it (depth-first search, white/grey/black). */
function importCycles(folder: string): string[][] {
  const files = new Set(sourceFiles(folder));
  const graph = new Map([...files].map((file) => [file, relativeImports(file, files)]));
  const state = new Map<string, 'open' | 'done'>();
  const path: string[] = [];
  const cycles: string[][] = [];
  const visit = (file: string) => {
    state.set(file, 'open');
    path.push(file);
    for (const next of graph.get(file) ?? []) {
      if (state.get(next) === 'open')
        cycles.push(path.slice(path.indexOf(next)).map((f) => relative(folder, f)));
      else if (state.get(next) === undefined) visit(next);
    }
    path.pop();
    state.set(file, 'done');
  };
  for (const file of files) if (state.get(file) === undefined) visit(file);
  return cycles;
}

describe('import graph', () => {
  it.each(SOURCE_FOLDERS)('%s has no import circle', (folder) => {
    expect(importCycles(join(root, folder))).toEqual([]);
  });
});
