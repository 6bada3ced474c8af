/**
 * Judges a past soak run again from its CSV, with the current criterion (`memoryTrends`,
 * `FLAT_BOUND_MB_PER_HOUR` in soak/series.ts): `pnpm --filter bench run soak-verdict <csv>
 * [--warmup=300]`. Prints what the soak prints at its end; exit status 0 when memory is flat, 1
 * when not.
 */
import { readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { describeTrends, fromCsv, memoryFlat, memoryTrends } from './soak/series.js';

const { values, positionals } = parseArgs({
  args: process.argv.slice(2).filter((argument) => argument !== '--'),
  allowPositionals: true,
  options: { warmup: { type: 'string' } },
});
const [file] = positionals;
if (file === undefined) {
  process.stderr.write('usage: soak-verdict <soak csv> [--warmup=seconds]\n');
  process.exit(2);
}
const trends = memoryTrends(fromCsv(readFileSync(file, 'utf8')), Number(values.warmup ?? 300));
for (const line of describeTrends(trends)) process.stdout.write(`${line}\n`);
process.exit(memoryFlat(trends) ? 0 : 1);
