/**
 * Prints the markdown summary of a stored result file again (e.g. for the README):
 * `pnpm --filter bench run render results/<stamp>-full.json`
 */
import { readFileSync } from 'node:fs';
import { type BenchReport, checkTargets, formatMarkdown, summarize } from './report.js';

const file = process.argv[2];
if (!file) {
  console.error('usage: render <results/….json>');
  process.exit(2);
}
const report = JSON.parse(readFileSync(file, 'utf8')) as BenchReport;
const rows = summarize(report);
process.stdout.write(formatMarkdown(report, rows, checkTargets(report, rows)));
