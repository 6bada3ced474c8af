/** `pnpm --filter bench run rounds <result.json>…`: medians over rounds (src/rounds.ts) as markdown. */
import { readFileSync } from 'node:fs';
import type { BenchReport } from './report.js';
import { formatRounds, summarizeRounds } from './rounds.js';

const files = process.argv.slice(2);
if (files.length === 0) {
  console.error('usage: rounds <results/….json> <results/….json> …');
  process.exit(2);
}
const reports = files.map((file) => JSON.parse(readFileSync(file, 'utf8')) as BenchReport);
process.stdout.write(
  `CPU per 2xx, µs: medians of ${reports.length} rounds (each round's sum in brackets)\n\n${formatRounds(summarizeRounds(reports))}\n`,
);
