import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { PROMTOOL_BIN } from '@oidc-orders/service-kit/testing';
import { describe, expect, it } from 'vitest';
import { repositoryRoot } from '../src/processes.js';

/**
 * The alert rules (deploy/prometheus/rules.yml) are valid for Prometheus (`promtool check rules`)
 * and do what their unit tests say (`promtool test rules`: each alert fires on the series that
 * should wake someone and stays quiet next to them). Debian's `prometheus` package provides
 * promtool; e2e/test/prometheus.test.ts runs the same rules in a real Prometheus.
 */
const rulesDir = join(repositoryRoot, 'deploy', 'prometheus');

function promtool(...args: string[]) {
  const run = spawnSync(PROMTOOL_BIN, args, { cwd: rulesDir, encoding: 'utf8', timeout: 60_000 });
  return { status: run.status, output: `${run.stdout}${run.stderr}` };
}

describe('deploy/prometheus', () => {
  it('promtool check rules accepts rules.yml', () => {
    const checked = promtool('check', 'rules', 'rules.yml');
    expect(checked.status, checked.output).toBe(0);
    expect(checked.output).toMatch(/SUCCESS: \d+ rules found/);
  });

  it('promtool test rules passes every unit test in tests.yml', () => {
    const tested = promtool('test', 'rules', 'tests.yml');
    expect(tested.status, tested.output).toBe(0);
    expect(tested.output).toContain('SUCCESS');
  });
});
