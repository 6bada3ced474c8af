/**
 * The Kubernetes manifests (deploy/k8s/) checked offline: valid against the Kubernetes schemas
 * (npm's kubernetes-models) and a hand-kept schema of CloudNativePG's Cluster (src/k8s-manifests.ts),
 * and consistent with how the apps shut down, where their secrets come from, and what keeps them
 * available (Services, PodDisruptionBudgets, synchronous replication).
 */
import { readFileSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { type ClusterSpec, loadManifests, type Manifest, schemaProblems } from '../src/k8s-manifests.js';

const root = join(import.meta.dirname, '..', '..');
const manifests = loadManifests(join(root, 'deploy', 'k8s'));
const guide = readFileSync(join(root, 'docs', 'high-availability.md'), 'utf8');

interface Container {
  name: string;
  ports: { name: string; containerPort: number }[];
  env: { name: string; value?: string }[];
  readinessProbe: { httpGet: { path: string; port: string } };
  livenessProbe: { httpGet: { path: string; port: string } };
  lifecycle: { preStop: { sleep: { seconds: number } } };
  volumeMounts: { name: string; mountPath: string }[];
}
interface PodSpec {
  terminationGracePeriodSeconds: number;
  containers: Container[];
  volumes: { name: string; secret?: { secretName: string; items?: { key: string; path: string }[] } }[];
}
interface ServiceSpec {
  selector: Record<string, string>;
  ports: { targetPort: string }[];
}
interface BudgetSpec {
  selector: { matchLabels: Record<string, string> };
  maxUnavailable: number;
}
interface DeploymentSpec {
  replicas: number;
  strategy: { rollingUpdate: { maxUnavailable: number } };
  template: { metadata: { labels: Record<string, string> }; spec: PodSpec };
}

const ofKind = (kind: string) => manifests.filter((manifest) => manifest.kind === kind);
const deployments = ofKind('Deployment');
const podSpec = (deployment: Manifest) => (deployment.spec as unknown as DeploymentSpec).template.spec;
const container = (deployment: Manifest) => podSpec(deployment).containers[0] as Container;
const podLabels = (deployment: Manifest) =>
  (deployment.spec as unknown as DeploymentSpec).template.metadata.labels;
const env = (deployment: Manifest, name: string) =>
  container(deployment).env.find((e) => e.name === name)?.value;
const specOf = <T>(kind: string, name: string) =>
  manifests.find((m) => m.kind === kind && m.metadata.name === name)?.spec as T;
/** Sets a member deep inside a copy of a manifest (for the cases that must fail). */
function set(manifest: Manifest | undefined, path: (string | number)[], value: unknown): void {
  let node = manifest as unknown as Record<string | number, unknown>;
  for (const step of path.slice(0, -1)) node = node[step] as Record<string | number, unknown>;
  node[path.at(-1) as string | number] = value;
}
const within = (labels: Record<string, string>, selector: Record<string, string>) =>
  Object.entries(selector).every(([key, value]) => labels[key] === value);

/** After SIGTERM, the app exits 1 past this (apps/auth-server/src/server.ts; orders: SHUTDOWN_TIMEOUT_MS). */
function hardDeadlineMs(deployment: Manifest): number {
  if (deployment.metadata.name === 'orders') return Number(env(deployment, 'SHUTDOWN_TIMEOUT_MS') ?? 25_000);
  const server = readFileSync(join(root, 'apps', 'auth-server', 'src', 'server.ts'), 'utf8');
  const [, value] = server.match(/HARD_SHUTDOWN_DEADLINE_MS = ([\d_]+);/) ?? [];
  return Number(value?.replaceAll('_', ''));
}

describe('the Kubernetes manifests (deploy/k8s/)', () => {
  it('hold two Deployments, their Services and budgets, and two database clusters', () => {
    expect(manifests.map((m) => `${m.kind} ${m.metadata.name}`).sort()).toEqual([
      'Cluster auth-db',
      'Cluster orders-db',
      'Deployment auth-server',
      'Deployment orders',
      'PodDisruptionBudget auth-server',
      'PodDisruptionBudget orders',
      'Service auth-server',
      'Service orders',
    ]);
  });

  it('are valid against the Kubernetes schemas and the CloudNativePG Cluster fields', () => {
    expect(schemaProblems(manifests, import.meta.dirname)).toEqual([]);
  });

  it('a misspelt field or a wrong type fails the check, at any depth, in core objects and in a Cluster', () => {
    const broken = structuredClone(manifests);
    const find = (kind: string) => broken.find((m) => m.kind === kind);
    const probe = ['spec', 'template', 'spec', 'containers', 0, 'readinessProbe', 'httpGet'];
    set(find('Deployment'), [...probe, 'pathh'], '/health/ready');
    set(find('PodDisruptionBudget'), ['spec', 'maxUnavailabel'], 1);
    set(find('Service'), ['spec', 'ports', 0, 'port'], 'http');
    set(find('Cluster'), ['spec', 'postgresql', 'synchronus'], { method: 'any', number: 1 });
    set(find('Cluster'), ['spec', 'postgresql', 'synchronous', 'number'], 0);
    const problems = schemaProblems(broken, import.meta.dirname);
    expect(problems).toEqual(
      expect.arrayContaining([
        expect.stringMatching(/^auth-server\.yaml: Deployment auth-server: .*'"pathh"' does not exist/),
        expect.stringMatching(
          /^auth-server\.yaml: PodDisruptionBudget auth-server: .*'"maxUnavailabel"' does not exist/,
        ),
        expect.stringMatching(
          /^auth-server\.yaml: Service auth-server: .*\/spec\/ports\/0\/port must be integer/,
        ),
        'postgres.yaml: Cluster auth-db: spec.postgresql.synchronus Unexpected property',
        expect.stringMatching(
          /^postgres\.yaml: Cluster auth-db: spec\.postgresql\.synchronous\.number Expected integer to be greater or equal to 1/,
        ),
      ]),
    );
  });

  it.each(deployments.map((d) => [d.metadata.name, d]))(
    '%s: probes on the health routes, and a grace period that outlasts preStop plus the app’s own drain',
    (_name, deployment) => {
      const { terminationGracePeriodSeconds } = podSpec(deployment);
      const app = container(deployment);
      const preStopMs = app.lifecycle.preStop.sleep.seconds * 1000;
      const pauseMs = Number(env(deployment, 'SHUTDOWN_PAUSE_MS'));
      const deadlineMs = hardDeadlineMs(deployment);
      expect(deadlineMs).toBeGreaterThan(0);
      // The kubelet's SIGKILL comes terminationGracePeriodSeconds after preStop began.
      expect(terminationGracePeriodSeconds * 1000).toBeGreaterThan(preStopMs + deadlineMs);
      expect(pauseMs).toBeLessThan(deadlineMs);
      expect(app.readinessProbe.httpGet).toEqual({ path: '/health/ready', port: 'http' });
      expect(app.livenessProbe.httpGet).toEqual({ path: '/health/live', port: 'http' });
      expect(app.ports).toEqual([{ name: 'http', containerPort: Number(env(deployment, 'PORT')) }]);
      expect((deployment.spec as unknown as DeploymentSpec).strategy.rollingUpdate.maxUnavailable).toBe(0);
    },
  );

  it('embed no Secret: every secret file is mounted from a Secret the operator or docs/high-availability.md creates', () => {
    expect(ofKind('Secret')).toEqual([]);
    const fromOperator = new Set(ofKind('Cluster').map((cluster) => `${cluster.metadata.name}-app`));
    const missing: string[] = [];
    for (const deployment of deployments) {
      const { volumes } = podSpec(deployment);
      const app = container(deployment);
      for (const { name, value } of app.env.filter((e) => e.name.endsWith('_FILE'))) {
        const mount = app.volumeMounts.find((m) => dirname(value ?? '') === m.mountPath);
        const secret = volumes.find((v) => v.name === mount?.name)?.secret;
        const key = basename(value ?? '');
        const documented =
          secret !== undefined &&
          (fromOperator.has(secret.secretName)
            ? secret.items?.some((item) => item.path === key) === true
            : new RegExp(
                `kubectl create secret generic ${secret.secretName} [^\\n]*--from-file=${key}=`,
              ).test(guide));
        if (!documented) missing.push(`${deployment.metadata.name}: ${name}=${value}`);
      }
    }
    expect(missing).toEqual([]);
  });

  it.each(deployments.map((d) => [d.metadata.name, d]))(
    '%s: a Service and a PodDisruptionBudget select its pods',
    (name, deployment) => {
      const service = specOf<ServiceSpec>('Service', name);
      const budget = specOf<BudgetSpec>('PodDisruptionBudget', name);
      expect(within(podLabels(deployment), service.selector)).toBe(true);
      expect(service.ports.map((p) => p.targetPort)).toEqual(['http']);
      expect(within(podLabels(deployment), budget.selector.matchLabels)).toBe(true);
      expect(budget.maxUnavailable).toBeLessThan((deployment.spec as unknown as DeploymentSpec).replicas);
    },
  );

  it('each app reads its database URI from the operator’s Secret of a cluster that commits synchronously', () => {
    for (const cluster of ofKind('Cluster').map((c) => c.spec as ClusterSpec)) {
      expect(cluster.instances).toBeGreaterThanOrEqual(3);
      expect(cluster.postgresql?.synchronous).toMatchObject({ number: 1, dataDurability: 'required' });
      expect(cluster.postgresql?.synchronous?.number).toBeLessThan(cluster.instances);
    }
    const databaseSecrets = deployments.map((deployment) => {
      const mount = container(deployment).volumeMounts.find(
        (m) => m.mountPath === dirname(env(deployment, 'DATABASE_URL_FILE') ?? ''),
      );
      return podSpec(deployment).volumes.find((v) => v.name === mount?.name)?.secret?.secretName;
    });
    expect(databaseSecrets).toEqual(['auth-db-app', 'orders-db-app']);
  });
});
