import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';

/**
 * The container image installs production dependencies only (`pnpm deploy --prod`): a package that
 * `src/` imports but package.json lists under devDependencies works in every test and breaks the
 * server at its first start in production. Checked for both apps.
 */

// A re-export is `export * from` or `export { … } from`: a wider pattern would read the words
// `from '…'` inside an exported object of strings as an import.
const IMPORT =
  /(?:^import\s[^;]*?from\s*|^export\s+(?:type\s+)?(?:\*(?:\s+as\s+\w+)?|\{[^}]*\})\s*from\s*|\bimport\()\s*'([^'.][^']*)'/gms;

function packageOf(specifier: string): string | null {
  if (specifier.startsWith('node:')) return null;
  const parts = specifier.split('/');
  return specifier.startsWith('@') ? parts.slice(0, 2).join('/') : (parts[0] ?? null);
}

function importedPackages(appRoot: string): Map<string, string> {
  const found = new Map<string, string>();
  const sourceRoot = join(appRoot, 'src');
  for (const file of readdirSync(sourceRoot, { recursive: true, encoding: 'utf8' })) {
    if (!file.endsWith('.ts')) continue;
    const text = readFileSync(join(sourceRoot, file), 'utf8');
    for (const match of text.matchAll(IMPORT)) {
      if (/^import type\s|^export type\s/.test(match[0])) continue;
      const name = packageOf(match[1] ?? '');
      if (name !== null && !found.has(name)) found.set(name, file);
    }
  }
  return found;
}

describe.each(['auth-server', 'orders'])('%s: what src/ imports', (app) => {
  it('is a production dependency', () => {
    const appRoot = join(import.meta.dirname, '..', '..', app);
    const manifest = JSON.parse(readFileSync(join(appRoot, 'package.json'), 'utf8')) as {
      dependencies?: Record<string, string>;
    };
    const production = new Set(Object.keys(manifest.dependencies ?? {}));
    const missing = [...importedPackages(appRoot)]
      .filter(([name]) => !production.has(name))
      .map(([name, file]) => `${name} (src/${file})`);
    expect(missing).toEqual([]);
  });
});
