#!/usr/bin/env node
// Checks that the GitHub workflow (.github/workflows/ci.yml) runs what .ci/run runs: the system
// packages from the one list before `pnpm install`, every suite, the database tier on PostgreSQL on
// one Node version, and in its compose job the workspace installed before deploy/smoke-test.mjs and
// only steps that deploy/ci/container-test.sh also takes (so .ci/run's container test proves them).
// Needs the workspace installed (the `yaml` parser).
//
//   node deploy/ci/check-workflow.mjs   prints each problem, exits 1 when there is one
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parse } from 'yaml';

const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..');

/**
 * Each command of the compose job and the text in container-test.sh that takes the same step.
 * A compose step whose command matches none of these is a step the container test does not prove.
 */
export const COMPOSE_STEPS = [
  {
    job: /pnpm install/,
    containerTest: /test -f apps\/auth-server\/node_modules\/jsonc-parser/,
    what: 'the workspace installed',
  },
  {
    job: /node deploy\/generate-secrets\.mjs/,
    containerTest: /node deploy\/generate-secrets\.mjs/,
    what: 'secrets and seed generated',
  },
  { job: /openssl req -x509/, containerTest: /openssl req -x509/, what: 'the gateway certificate' },
  {
    job: /\/etc\/hosts/,
    containerTest: /--connect-to|SMOKE_CONNECT_TO/,
    what: 'the host names reach the gateway',
  },
  { job: /docker compose config/, containerTest: /config --quiet/, what: 'docker compose config' },
  {
    job: /docker compose up --build/,
    containerTest: /up --detach --no-build/,
    what: 'docker compose up (images built)',
  },
  {
    job: /--scale auth-server=2 --scale orders=2/,
    containerTest: /--scale auth-server=2 --scale orders=2/,
    what: 'two instances of each app',
  },
  { job: /node deploy\/smoke-test\.mjs/, containerTest: /smoke-test\.mjs/, what: 'the smoke test' },
  {
    job: /docker compose stop/,
    containerTest: /stop "\$\{APP_SERVICES\[@\]\}"/,
    what: 'SIGTERM and exit codes',
  },
  { job: /docker compose logs/, containerTest: /logs --no-color/, what: 'the logs' },
  { job: /docker compose down/, containerTest: /down --volumes/, what: 'docker compose down' },
];

const stepText = (step) => [step.run, step.uses, step.name].filter(Boolean).join('\n');
const firstIndex = (steps, pattern) => steps.findIndex((step) => pattern.test(step.run ?? ''));

function testJobProblems(job) {
  const problems = [];
  const steps = job?.steps ?? [];
  if (String(job?.env?.CI) !== 'true')
    problems.push('test job: CI is not "true" (the suites then leave out what is missing)');
  const packages = firstIndex(steps, /node deploy\/ci\/system-packages\.mjs install/);
  const install = firstIndex(steps, /pnpm install/);
  if (packages < 0)
    problems.push(
      'test job: no step installs deploy/ci/system-packages.json (node deploy/ci/system-packages.mjs install --sudo)',
    );
  else if (install >= 0 && packages > install)
    problems.push('test job: system packages installed after pnpm install (libkrb5-dev must come first)');
  if (firstIndex(steps, /pnpm test:suites/) < 0)
    problems.push('test job: no step runs every suite (pnpm test:suites)');
  const database = steps.find((step) => /pnpm test:database/.test(step.run ?? ''));
  if (!database?.env?.TEST_DATABASE_URL)
    problems.push('test job: no step runs pnpm test:database with TEST_DATABASE_URL');
  else if (job.strategy?.matrix?.node?.length > 1 && !/matrix\.node ==/.test(String(database.if ?? ''))) {
    problems.push('test job: the database tier runs on PostgreSQL on every Node version (one is enough)');
  }
  return problems;
}

function composeJobProblems(job, containerTest) {
  const problems = [];
  const steps = job?.steps ?? [];
  const install = firstIndex(steps, /pnpm install/);
  const smoke = firstIndex(steps, /node deploy\/smoke-test\.mjs/);
  if (smoke >= 0 && (install < 0 || install > smoke)) {
    problems.push('compose job: deploy/smoke-test.mjs runs before the workspace is installed (pnpm install)');
  }
  for (const step of steps.filter((s) => s.run)) {
    if (!COMPOSE_STEPS.some((entry) => entry.job.test(step.run))) {
      problems.push(
        `compose job: the step "${step.name ?? step.run.split('\n')[0]}" is not one deploy/ci/container-test.sh takes`,
      );
    }
  }
  for (const entry of COMPOSE_STEPS) {
    if (steps.some((s) => entry.job.test(stepText(s))) && !entry.containerTest.test(containerTest)) {
      problems.push(`compose job: ${entry.what}: deploy/ci/container-test.sh no longer takes this step`);
    }
  }
  return problems;
}

/** What keeps the workflow from running what .ci/run runs; empty when nothing does. */
export function workflowProblems(workflowText, containerTestText) {
  const workflow = parse(workflowText);
  return [
    ...testJobProblems(workflow?.jobs?.test),
    ...composeJobProblems(workflow?.jobs?.compose, containerTestText),
  ];
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const read = (path) => readFileSync(join(root, path), 'utf8');
  const problems = workflowProblems(read('.github/workflows/ci.yml'), read('deploy/ci/container-test.sh'));
  for (const problem of problems) console.error(problem);
  if (problems.length === 0) console.log('.github/workflows/ci.yml runs what .ci/run runs');
  process.exit(problems.length === 0 ? 0 : 1);
}
