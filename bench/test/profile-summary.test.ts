import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';

const folder = mkdtempSync(join(tmpdir(), 'profile-summary-'));
afterAll(() => rmSync(folder, { recursive: true, force: true }));

/** A one-function profile whose only frame is line 1 of a bundle, with or without its source map. */
function summarise(withSourceMap: boolean): string {
  const bundle = join(folder, withSourceMap ? 'mapped.js' : 'unmapped.js');
  writeFileSync(bundle, 'function compile() {}\n');
  if (withSourceMap) {
    const source = '../node_modules/.pnpm/ajv@8.20.0/node_modules/ajv/dist/compile/index.js';
    writeFileSync(
      `${bundle}.map`,
      JSON.stringify({ version: 3, sources: [source], names: [], mappings: 'AAAA' }),
    );
  }
  const frame = { functionName: 'compile', url: pathToFileURL(bundle).href, lineNumber: 0, columnNumber: 0 };
  const profile = {
    nodes: [
      {
        id: 1,
        callFrame: { functionName: '(root)', url: '', lineNumber: -1, columnNumber: -1 },
        children: [2],
      },
      { id: 2, callFrame: frame },
    ],
    samples: [2, 2],
    timeDeltas: [1000, 1000],
  };
  const file = join(folder, `${withSourceMap ? 'mapped' : 'unmapped'}.cpuprofile`);
  writeFileSync(file, JSON.stringify(profile));
  return execFileSync(process.execPath, ['--import', 'tsx', 'src/profile-summary.ts', file], {
    cwd: join(import.meta.dirname, '..'),
    encoding: 'utf8',
  });
}

describe('profile-summary of a bundled server', () => {
  it('names a bundle frame by the package its source map points to', () => {
    const summary = summarise(true);
    expect(summary).toMatch(/^100\.0 %\s+2 ms {2}ajv$/m);
    expect(summary).toMatch(
      /compile node_modules\/\.pnpm\/ajv@8\.20\.0\/node_modules\/ajv\/dist\/compile\/index\.js:1/,
    );
  });

  it('names it by the bundle when there is no source map', () => {
    expect(summarise(false)).toMatch(/unmapped\.js/);
  });
});
