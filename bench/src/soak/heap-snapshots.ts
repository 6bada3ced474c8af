import { readdir, readFile } from 'node:fs/promises';
import { setTimeout as sleep } from 'node:timers/promises';
import type { ServerProcess } from '../processes.js';

/**
 * Heap snapshots of a server during a soak, for finding what grows: with `SOAK_HEAP_SNAPSHOTS=<dir>`
 * our servers start with these flags, and the harness signals the orders service at the end of the
 * warm-up and at the end of the run. Only on request: writing a snapshot stops the server for
 * seconds and doubles its memory for a moment, which the run's own numbers would then show.
 */
export function heapSnapshotFlags(dir: string): string[] {
  return ['--heapsnapshot-signal=SIGUSR2', `--diagnostic-dir=${dir}`];
}

/** Signals `server` and waits until its snapshot is written (it answers again: writing blocks it). */
export async function takeHeapSnapshot(server: ServerProcess, dir: string): Promise<string | undefined> {
  const before = new Set(await snapshotFiles(dir));
  process.kill(server.pid, 'SIGUSR2');
  for (let attempt = 0; attempt < 240; attempt += 1) {
    await sleep(250);
    const written = (await snapshotFiles(dir)).find((file) => !before.has(file));
    if (written === undefined) continue;
    await fetch(`${server.baseUrl}/metrics`, { signal: AbortSignal.timeout(120_000) });
    return written;
  }
  return undefined;
}

async function snapshotFiles(dir: string): Promise<string[]> {
  return (await readdir(dir)).filter((file) => file.endsWith('.heapsnapshot'));
}

interface HeapSnapshot {
  snapshot: { meta: { node_fields: string[]; node_types: [string[], ...unknown[]] } };
  nodes: number[];
  strings: string[];
}

/** Self size and count per `type:name` (constructor or kind) of one snapshot. */
export async function heapByConstructor(
  file: string,
): Promise<Map<string, { count: number; bytes: number }>> {
  const heap = JSON.parse(await readFile(file, 'utf8')) as HeapSnapshot;
  const fields = heap.snapshot.meta.node_fields;
  const [typeNames] = heap.snapshot.meta.node_types;
  const at = (name: string) => fields.indexOf(name);
  const [typeAt, nameAt, sizeAt] = [at('type'), at('name'), at('self_size')];
  const totals = new Map<string, { count: number; bytes: number }>();
  for (let i = 0; i < heap.nodes.length; i += fields.length) {
    const type = typeNames[heap.nodes[i + typeAt] ?? 0] ?? '?';
    // Strings and code are grouped by kind; their names are their contents.
    const name =
      type === 'object' || type === 'closure' ? (heap.strings[heap.nodes[i + nameAt] ?? 0] ?? '?') : '';
    const key = `${type}:${name}`;
    const total = totals.get(key) ?? { count: 0, bytes: 0 };
    total.count += 1;
    total.bytes += heap.nodes[i + sizeAt] ?? 0;
    totals.set(key, total);
  }
  return totals;
}
