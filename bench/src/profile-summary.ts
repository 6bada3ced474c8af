/**
 * Summarises a V8 `.cpuprofile` (from `pnpm bench --profile`): self time by function and by
 * package, the evidence that goes into a performance finding.
 * Usage: `pnpm --filter bench run profile-summary <file.cpuprofile> [top]`
 *
 * A bundled server's frames (dist/server.js and its chunks, which hold the third-party packages
 * too) are read through the bundle's source maps, so each is named by the module and package it
 * came from rather than by the bundle.
 */
import { existsSync, readFileSync } from 'node:fs';
import { SourceMap } from 'node:module';
import { fileURLToPath } from 'node:url';

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number; columnNumber: number };
  hitCount?: number;
  children?: number[];
}

interface Profile {
  nodes: ProfileNode[];
  samples: number[];
  timeDeltas: number[];
}

const [file, topArgument] = process.argv.slice(2);
if (!file) {
  console.error('usage: profile-summary <file.cpuprofile> [top]');
  process.exit(2);
}
const top = Number(topArgument ?? 25);
const profile = JSON.parse(readFileSync(file, 'utf8')) as Profile;

/** The source map written beside a bundle output (`<file>.map`), or null when there is none. */
function sourceMapOf(url: string): SourceMap | null {
  if (!url.startsWith('file:')) return null;
  const path = `${fileURLToPath(url)}.map`;
  return existsSync(path) ? new SourceMap(JSON.parse(readFileSync(path, 'utf8'))) : null;
}

/** Each frame of a bundle output moved to its original file and line (both 0-based, as V8's). */
function mapFramesToSources(nodes: ProfileNode[]): void {
  const maps = new Map<string, SourceMap | null>();
  for (const node of nodes) {
    const frame = node.callFrame;
    if (!maps.has(frame.url)) maps.set(frame.url, sourceMapOf(frame.url));
    const entry = maps.get(frame.url)?.findEntry(frame.lineNumber, frame.columnNumber);
    if (!entry || !('originalSource' in entry) || !entry.originalSource) continue;
    node.callFrame = {
      ...frame,
      url: new URL(entry.originalSource, frame.url).href,
      lineNumber: entry.originalLine,
      columnNumber: entry.originalColumn,
    };
  }
}
mapFramesToSources(profile.nodes);

const nodeById = new Map(profile.nodes.map((node) => [node.id, node]));
const selfMicros = new Map<number, number>();
profile.samples.forEach((id, index) => {
  selfMicros.set(id, (selfMicros.get(id) ?? 0) + (profile.timeDeltas[index] ?? 0));
});
const total = [...selfMicros.values()].reduce((sum, value) => sum + value, 0);

function packageOf(url: string): string {
  const match = /node_modules\/(?:\.pnpm\/[^/]+\/node_modules\/)?((?:@[^/]+\/)?[^/]+)/.exec(url);
  if (match?.[1]) return match[1];
  if (url.startsWith('node:') || url === '') return url === '' ? '(native / idle / gc)' : 'node core';
  const workspace = /\/(apps\/[^/]+|packages\/[^/]+|bench)\//.exec(url);
  return workspace?.[1] ?? url;
}

const parentOf = new Map<number, number>();
for (const node of profile.nodes) for (const child of node.children ?? []) parentOf.set(child, node.id);

function label(id: number | undefined): string {
  const frame = id === undefined ? undefined : nodeById.get(id)?.callFrame;
  if (!frame) return '(root)';
  const file = frame.url.split('/').pop() ?? '';
  return `${frame.functionName || '(anonymous)'}${file ? ` ${file}:${frame.lineNumber + 1}` : ''}`;
}

/** The caller chain (up to `depth` frames) of a node, innermost first. */
function callers(id: number, depth: number): string {
  const chain: string[] = [];
  let current = parentOf.get(id);
  while (current !== undefined && chain.length < depth) {
    chain.push(label(current));
    current = parentOf.get(current);
  }
  return chain.join(' ← ');
}

const byFunction = new Map<string, number>();
const byPackage = new Map<string, number>();
for (const [id, micros] of selfMicros) {
  const frame = nodeById.get(id)?.callFrame;
  if (!frame) continue;
  const where = frame.url
    ? `${frame.url.replace(/^file:\/\/.*?\/(node_modules|apps|packages)\//, '$1/')}:${frame.lineNumber + 1}`
    : '';
  const key = `${frame.functionName || '(anonymous)'} ${where}`.trim();
  byFunction.set(key, (byFunction.get(key) ?? 0) + micros);
  const pkg = packageOf(frame.url);
  byPackage.set(pkg, (byPackage.get(pkg) ?? 0) + micros);
}

const print = (title: string, entries: Map<string, number>) => {
  console.log(`\n${title}`);
  for (const [key, micros] of [...entries].sort((a, b) => b[1] - a[1]).slice(0, top)) {
    console.log(
      `${((micros / total) * 100).toFixed(1).padStart(5)} %  ${(micros / 1000).toFixed(0).padStart(7)} ms  ${key}`,
    );
  }
};
console.log(`${file}: ${(total / 1e6).toFixed(1)} s sampled`);
print('self time by package', byPackage);
print('self time by function', byFunction);

// Where the heaviest native frames (writev, GC, …) are called from: the frames above them.
const byCallers = new Map<string, number>();
for (const [id, micros] of selfMicros) {
  const name = nodeById.get(id)?.callFrame.functionName ?? '';
  if (name === '(idle)' || name === '(program)' || name === '(garbage collector)') continue;
  const key = `${label(id)} ← ${callers(id, 4)}`;
  byCallers.set(key, (byCallers.get(key) ?? 0) + micros);
}
print(
  'self time by stack (4 callers)',
  new Map([...byCallers].sort((a, b) => b[1] - a[1]).slice(0, Math.min(top, 12))),
);

// Inclusive ("total") time: a sample counts for every distinct function on its stack, once. This
// is what a function and everything it calls cost, e.g. a route handler or a Fastify hook.
const inclusive = new Map<string, number>();
const stackKeys = new Map<number, readonly string[]>();
function functionsOnStack(id: number): readonly string[] {
  const cached = stackKeys.get(id);
  if (cached) return cached;
  const keys = new Set<string>();
  for (let current: number | undefined = id; current !== undefined; current = parentOf.get(current)) {
    const name = nodeById.get(current)?.callFrame.functionName ?? '';
    if (name === '(root)' || name === '') continue;
    keys.add(label(current));
  }
  const list = [...keys];
  stackKeys.set(id, list);
  return list;
}
for (const [id, micros] of selfMicros) {
  for (const key of functionsOnStack(id)) inclusive.set(key, (inclusive.get(key) ?? 0) + micros);
}
print('inclusive time by function (itself and what it calls)', inclusive);
