/**
 * Metric names: the ones a PromQL expression reads, and the ones an app's /metrics exposition
 * declares. Used to prove that the alert rules and the Grafana dashboard read only series the apps
 * really export (a renamed metric would otherwise leave an alert that can never fire).
 */

const KEYWORDS = new Set([
  'and',
  'or',
  'unless',
  'bool',
  'offset',
  'by',
  'without',
  'on',
  'ignoring',
  'group_left',
  'group_right',
  'inf',
  'nan',
]);

/**
 * The metric names an expression selects. Strings, label matchers, range and subquery brackets,
 * grouping and matching clauses and Grafana's `$variables` are removed first; what remains are
 * function names (followed by `(`), keywords, numbers and metric names.
 */
export function metricNamesIn(expression: string): Set<string> {
  const stripped = expression
    .replace(/"(?:[^"\\]|\\.)*"|'(?:[^'\\]|\\.)*'/g, '""')
    .replace(/\{[^}]*\}/g, ' ')
    .replace(/\[[^\]]*\]/g, ' ')
    .replace(/\b(?:by|without|on|ignoring|group_left|group_right)\s*\([^)]*\)/g, ' ')
    .replace(/\$\{?\w+\}?/g, ' ');
  const names = new Set<string>();
  for (const match of stripped.matchAll(/(?<![\w.:])([a-zA-Z_:][\w:]*)(\s*\()?/g)) {
    const [, name, call] = match;
    if (!name || call || KEYWORDS.has(name.toLowerCase())) continue;
    names.add(name);
  }
  return names;
}

/**
 * Every series name an exposition declares (`# TYPE <name> <type>`), with the `_bucket`, `_sum`
 * and `_count` series of histograms and the `_sum`, `_count` of summaries: a labelled counter
 * nobody has incremented yet has no sample line, but its TYPE line is there.
 */
export function exportedSeriesNames(exposition: string): Set<string> {
  const names = new Set<string>();
  for (const [, name, type] of exposition.matchAll(/^# TYPE (\S+) (\S+)$/gm)) {
    if (!name) continue;
    names.add(name);
    if (type === 'histogram') for (const suffix of ['_bucket', '_sum', '_count']) names.add(name + suffix);
    if (type === 'summary') for (const suffix of ['_sum', '_count']) names.add(name + suffix);
  }
  return names;
}
