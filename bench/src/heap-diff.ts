/**
 * `pnpm --filter bench run heap-diff <earlier.heapsnapshot> <later.heapsnapshot>`: what grew between
 * two heap snapshots (written by the soak with `SOAK_HEAP_SNAPSHOTS=<dir>`), by constructor, the
 * largest growth in self size first.
 */
import { heapByConstructor } from './soak/heap-snapshots.js';

const [earlierFile, laterFile, top = '25'] = process.argv.slice(2);
if (!earlierFile || !laterFile) {
  process.stderr.write('usage: heap-diff <earlier.heapsnapshot> <later.heapsnapshot> [rows]\n');
  process.exit(2);
}
const earlier = await heapByConstructor(earlierFile);
const later = await heapByConstructor(laterFile);
const rows = [...new Set([...earlier.keys(), ...later.keys()])].map((key) => {
  const a = earlier.get(key) ?? { count: 0, bytes: 0 };
  const b = later.get(key) ?? { count: 0, bytes: 0 };
  return { key, count: b.count - a.count, bytes: b.bytes - a.bytes, after: b.bytes };
});
rows.sort((x, y) => y.bytes - x.bytes);
const total = (map: typeof earlier) => [...map.values()].reduce((sum, entry) => sum + entry.bytes, 0);
const mb = (bytes: number) => (bytes / 2 ** 20).toFixed(2);
process.stdout.write(`self size ${mb(total(earlier))} MB -> ${mb(total(later))} MB\n`);
for (const row of rows.slice(0, Number(top)))
  process.stdout.write(
    `${mb(row.bytes).padStart(8)} MB ${String(row.count).padStart(8)} objects  (${mb(row.after)} MB now)  ${row.key}\n`,
  );
