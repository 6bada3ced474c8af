/**
 * Offline checks of the Kubernetes manifests in deploy/k8s/ (no cluster, no kubectl):
 * - core objects against the Kubernetes OpenAPI schemas as npm's `kubernetes-models` ships them:
 *   its validators (types, required fields, formats) and, because those let unknown fields
 *   through (the API server would prune them silently), its TypeScript declarations through the
 *   compiler's excess-property check, which names a misspelt field at any depth;
 * - CloudNativePG's `Cluster` against a hand-kept schema of the fields these manifests use (no
 *   npm package ships the CRD's schema): `CLUSTER_SPEC` below, copied by hand from the CRD
 *   `postgresql.cnpg.io_clusters.yaml` (v1.25+) with unknown fields refused.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { type Static, type TSchema, Type } from '@sinclair/typebox';
import { Value } from '@sinclair/typebox/value';
import { Deployment } from 'kubernetes-models/apps/v1/Deployment';
import { PodDisruptionBudget } from 'kubernetes-models/policy/v1/PodDisruptionBudget';
import { Service } from 'kubernetes-models/v1/Service';
import ts from 'typescript';
import { parseAllDocuments } from 'yaml';

export interface Manifest {
  file: string;
  apiVersion: string;
  kind: string;
  metadata: { name: string; labels?: Record<string, string> };
  spec: Record<string, unknown>;
}

/** Every YAML document of every `.yaml` file in `folder`, in file order. */
export function loadManifests(folder: string): Manifest[] {
  const manifests: Manifest[] = [];
  for (const file of readdirSync(folder)
    .filter((name) => name.endsWith('.yaml'))
    .sort()) {
    for (const document of parseAllDocuments(readFileSync(join(folder, file), 'utf8'))) {
      if (document.errors.length > 0) throw new Error(`${file}: ${document.errors[0]?.message}`);
      manifests.push({ file, ...(document.toJS() as Omit<Manifest, 'file'>) });
    }
  }
  return manifests;
}

/** The core kinds these manifests use: the model class and the module its interface comes from. */
const CORE_KINDS: Record<string, { model: new (data: never) => { validate(): void }; module: string }> = {
  'apps/v1 Deployment': { model: Deployment, module: 'kubernetes-models/apps/v1/Deployment' },
  'v1 Service': { model: Service, module: 'kubernetes-models/v1/Service' },
  'policy/v1 PodDisruptionBudget': {
    model: PodDisruptionBudget,
    module: 'kubernetes-models/policy/v1/PodDisruptionBudget',
  },
};

const typeKey = (manifest: Manifest) => `${manifest.apiVersion} ${manifest.kind}`;
const label = (manifest: Manifest) => `${manifest.file}: ${manifest.kind} ${manifest.metadata?.name}`;
const withoutFile = ({ file: _file, ...object }: Manifest) => object;

/** What `kubernetes-models`' validators say about each core object (types, required, formats). */
function modelProblems(manifests: Manifest[]): string[] {
  const problems: string[] = [];
  for (const manifest of manifests) {
    const kind = CORE_KINDS[typeKey(manifest)];
    if (!kind) continue;
    try {
      new kind.model(withoutFile(manifest) as never).validate();
    } catch (error) {
      problems.push(`${label(manifest)}: ${(error as Error).message}`);
    }
  }
  return problems;
}

/**
 * The TypeScript compiler's verdict on each core object typed as its `kubernetes-models`
 * interface: a fresh object literal with a property its type does not declare is an error
 * (excess-property check), at every depth.
 */
function declarationProblems(manifests: Manifest[], moduleFolder: string): string[] {
  const core = manifests.filter((manifest) => CORE_KINDS[typeKey(manifest)]);
  const lines: string[] = [];
  /** The generated line where each object starts, to name the manifest of a diagnostic. */
  const firstLines: number[] = [];
  core.forEach((manifest, index) => {
    lines.push(
      `import type { I${manifest.kind} as T${index} } from '${CORE_KINDS[typeKey(manifest)]?.module}';`,
    );
    firstLines.push(lines.length);
    lines.push(
      ...`export const object${index}: T${index} = ${JSON.stringify(withoutFile(manifest), null, 1)};`.split(
        '\n',
      ),
    );
  });
  const fileName = join(moduleFolder, 'k8s-manifests.generated.ts');
  const options: ts.CompilerOptions = {
    strict: true,
    noEmit: true,
    skipLibCheck: true,
    module: ts.ModuleKind.NodeNext,
    moduleResolution: ts.ModuleResolutionKind.NodeNext,
    target: ts.ScriptTarget.ES2022,
    types: [],
  };
  const host = ts.createCompilerHost(options);
  const readSource = host.getSourceFile.bind(host);
  host.getSourceFile = (name, languageVersion, ...rest) =>
    name === fileName
      ? ts.createSourceFile(name, lines.join('\n'), languageVersion)
      : readSource(name, languageVersion, ...rest);
  const program = ts.createProgram([fileName], options, host);
  const source = program.getSourceFile(fileName);
  return ts.getPreEmitDiagnostics(program, source).map((diagnostic) => {
    const line =
      source && diagnostic.start !== undefined
        ? source.getLineAndCharacterOfPosition(diagnostic.start).line
        : -1;
    const manifest = core[firstLines.filter((first) => first <= line).length - 1];
    const text = ts.flattenDiagnosticMessageText(diagnostic.messageText, ' ');
    return `${manifest ? label(manifest) : 'manifests'}: ${text}`;
  });
}

const Quantity = Type.String({ pattern: '^[0-9]+(\\.[0-9]+)?(Ki|Mi|Gi|Ti|Pi|Ei|k|M|G|T|P|E)?$' });
const strict = <T extends Record<string, TSchema>>(properties: T, required: (keyof T)[] = []) =>
  Type.Object(
    Object.fromEntries(
      Object.entries(properties).map(([key, schema]) =>
        required.includes(key) ? [key, schema] : [key, Type.Optional(schema)],
      ),
    ) as T,
    { additionalProperties: false },
  );

/**
 * The `spec` of CloudNativePG's `Cluster` (postgresql.cnpg.io/v1), the fields these manifests use,
 * as the CRD defines them: names, types, enums, minimums and required members. Hand-kept: a field
 * added to postgres.yaml needs its line here first.
 */
export const CLUSTER_SPEC = strict(
  {
    instances: Type.Integer({ minimum: 1 }),
    imageName: Type.String(),
    primaryUpdateStrategy: Type.Union([Type.Literal('unsupervised'), Type.Literal('supervised')]),
    primaryUpdateMethod: Type.Union([Type.Literal('switchover'), Type.Literal('restart')]),
    enablePDB: Type.Boolean(),
    postgresql: strict({
      parameters: Type.Record(Type.String(), Type.String()),
      synchronous: strict(
        {
          method: Type.Union([Type.Literal('any'), Type.Literal('first')]),
          // CEL rule of the CRD: "self > 0".
          number: Type.Integer({ minimum: 1 }),
          dataDurability: Type.Union([Type.Literal('required'), Type.Literal('preferred')]),
          failoverQuorum: Type.Boolean(),
        },
        ['method', 'number'],
      ),
    }),
    bootstrap: strict({
      initdb: strict({
        database: Type.String(),
        owner: Type.String(),
        secret: strict({ name: Type.String() }, ['name']),
      }),
    }),
    storage: strict({ size: Quantity, storageClass: Type.String(), resizeInUseVolumes: Type.Boolean() }),
    affinity: strict({
      enablePodAntiAffinity: Type.Boolean(),
      topologyKey: Type.String(),
      podAntiAffinityType: Type.Union([Type.Literal('preferred'), Type.Literal('required')]),
    }),
  },
  ['instances'],
);
export type ClusterSpec = Static<typeof CLUSTER_SPEC>;

const CLUSTER_METADATA = strict(
  {
    name: Type.String({ pattern: '^[a-z0-9]([-a-z0-9]*[a-z0-9])?$' }),
    labels: Type.Record(Type.String(), Type.String()),
  },
  ['name'],
);

function clusterProblems(manifests: Manifest[]): string[] {
  return manifests
    .filter((manifest) => typeKey(manifest) === 'postgresql.cnpg.io/v1 Cluster')
    .flatMap((manifest) =>
      [
        ...[...Value.Errors(CLUSTER_METADATA, manifest.metadata)].map(
          (e) => `metadata${e.path} ${e.message}`,
        ),
        ...[...Value.Errors(CLUSTER_SPEC, manifest.spec)].map(
          (e) => `spec${e.path.replaceAll('/', '.')} ${e.message}`,
        ),
        ...Object.keys(manifest)
          .filter((key) => !['file', 'apiVersion', 'kind', 'metadata', 'spec'].includes(key))
          .map((key) => `${key}: not a member of a Cluster`),
      ].map((problem) => `${label(manifest)}: ${problem}`),
    );
}

/** Every problem the schemas find; empty when every manifest is valid. */
export function schemaProblems(manifests: Manifest[], moduleFolder: string): string[] {
  const unknown = manifests
    .filter(
      (manifest) => !CORE_KINDS[typeKey(manifest)] && typeKey(manifest) !== 'postgresql.cnpg.io/v1 Cluster',
    )
    .map((manifest) => `${label(manifest)}: ${typeKey(manifest)} is not a kind these checks know`);
  return [
    ...unknown,
    ...modelProblems(manifests),
    ...declarationProblems(manifests, moduleFolder),
    ...clusterProblems(manifests),
  ];
}
