#!/usr/bin/env node
/**
 * Bundles an app's `src/server.ts` into `dist/server.js` (and the chunks it loads on demand,
 * `dist/*-<hash>.js`) for the production start (`pnpm start`, the Docker images), so the server
 * runs on plain `node` instead of `node --import tsx`.
 *
 *   node scripts/bundle-server.mjs [appDir] [outDir]     (defaults: the current directory, appDir/dist)
 *
 * (A bundle in another outDir still reads src/ and drizzle/ of appDir: test/server-bundle.test.ts
 * inspects one in a new folder without touching dist/.)
 *
 * Why: tsx compiles every module at start-up on a loader thread with its own V8 isolate and keeps
 * the sources, which cost the auth server about 85 MB of RSS (idle 180 MB under tsx, 95 MB as a
 * bundle; see bench/README.md "The machine, and how to read the numbers"). The bundle is made by
 * esbuild, taken from tsx's own dependency (tsx is a production dependency of the apps, and
 * esbuild one of tsx's), so nothing is added to the lockfile.
 *
 * - The app's own code, the workspace packages and the third-party packages are bundled: node then
 *   compiles a few large files instead of resolving, `stat`-ing and compiling some 1,400 small
 *   ones in node_modules, which was most of the start-up time (bench/README.md "Cold start").
 *   KEPT_EXTERNAL below lists the packages left to node_modules, each with its reason.
 * - Code splitting: what the server imports with `import()` (the LDAP client, the mailer, PGlite,
 *   the WebAuthn and QR code libraries, tracing) lands in chunks of its own, read only when that
 *   part is configured or first used. Chunks sit in `dist/` beside `server.js`.
 * - `import.meta.url` in a bundled module of ours is replaced by the URL of its source file,
 *   relative to the bundle, so `new URL('../pages/styles.css', import.meta.url)` and the migrations
 *   folder resolve as they do under tsx. `src/`, `drizzle/` and `public/` must therefore sit next to
 *   `dist/`, as they do in the repository and in the deployed image.
 * - Bundled CommonJS packages get a real `require` (made with `createRequire` in each output file)
 *   for node's built-in modules. `__dirname` is not defined in the bundle: the one bundled package
 *   that reads it (@fastify/swagger, for its own package.json) catches the error and falls back.
 * - A source map is written beside each output: `NODE_OPTIONS=--enable-source-maps` maps stack
 *   traces back to the TypeScript lines (off by default: it costs memory).
 */
import { readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { join, relative, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';

const appDir = resolve(process.argv[2] ?? process.cwd());
const outdir = resolve(process.argv[3] ?? join(appDir, 'dist'));

const requireFromApp = createRequire(join(appDir, 'package.json'));
const requireFromTsx = createRequire(requireFromApp.resolve('tsx/package.json'));
const esbuild = await import(pathToFileURL(requireFromTsx.resolve('esbuild')).href);

/**
 * Packages node loads from node_modules rather than from the bundle. (`kerberos`, a native addon,
 * is imported through a variable and never seen by esbuild.)
 */
const KEPT_EXTERNAL = [
  { name: '@electric-sql/pglite', why: 'reads its WebAssembly PostgreSQL and data files next to its module' },
  { name: '@electric-sql/pglite-socket', why: 'serves the PGlite instance above' },
  {
    name: 'pg',
    why: "the tracing's pg instrumentation patches the pg that node loads (service-kit start-tracing.ts); pg-native is an optional require",
  },
  { name: 'pino', why: 'its transports (pino-pretty) run in worker threads started from files next to pino' },
  {
    name: '@opentelemetry/',
    why: 'loaded only with tracing on; the instrumentations patch modules as node loads them',
    except: ['@opentelemetry/api'],
  },
  { name: '@fastify/otel', why: 'an OpenTelemetry instrumentation, as above' },
];

/**
 * prom-client reads @opentelemetry/api at start, so that one is bundled; its global registry
 * (`Symbol.for('opentelemetry.js.api.1')`) is shared with the copy the tracing SDK loads.
 */
const isKeptExternal = (path) =>
  KEPT_EXTERNAL.some(
    ({ name, except = [] }) =>
      (name.endsWith('/') ? path.startsWith(name) : path === name || path.startsWith(`${name}/`)) &&
      !except.some((kept) => path === kept || path.startsWith(`${kept}/`)),
  );

/**
 * Packages whose `main` is a UMD build esbuild cannot follow (its `require`s sit inside a factory):
 * their ES module build instead, resolved from the importing package.
 */
const ES_MODULE_ENTRIES = { 'jsonc-parser': 'jsonc-parser/lib/esm/main.js' };

/**
 * Bundle everything but KEPT_EXTERNAL. An external import is written as the relative path, from
 * `dist/`, of the file the importing package would load: pnpm links a package's dependencies next
 * to it, not next to the app (fastify's `pino` is not in apps/<app>/node_modules), and the path
 * stays valid when the folder moves with its node_modules (the Docker image's /out → /app).
 */
const bundlePlan = {
  name: 'server-bundle',
  setup(build) {
    const resolveFromImporter = (path, args) =>
      build.resolve(path, { kind: args.kind, resolveDir: args.resolveDir, pluginData: { resolved: true } });
    build.onResolve({ filter: /^[^./]/ }, async (args) => {
      if (args.pluginData?.resolved) return undefined;
      const esModuleEntry = ES_MODULE_ENTRIES[args.path];
      if (esModuleEntry) return resolveFromImporter(esModuleEntry, args);
      if (!isKeptExternal(args.path)) return undefined;
      const found = await resolveFromImporter(args.path, args);
      if (found.errors.length > 0) return { path: args.path, external: true };
      return { path: `./${relative(outdir, found.path).split('\\').join('/')}`, external: true };
    });
    build.onLoad({ filter: /\.ts$/ }, async (args) => {
      const source = await readFile(args.path, 'utf8');
      if (!source.includes('import.meta.url')) return undefined;
      const fromBundle = relative(outdir, args.path).split('\\').join('/');
      return {
        contents: source.replaceAll(
          'import.meta.url',
          `new URL(${JSON.stringify(fromBundle)}, import.meta.url).href`,
        ),
        loader: 'ts',
      };
    });
  },
};

// The chunks of an earlier build are left in place: a server started from it (another instance, a
// benchmark's) imports them on demand, at its first passkey or mail, possibly long after this build.
// A chunk's name carries a hash of its content, so an unchanged chunk is the same file; `rm -rf
// dist` clears the ones no build names any more.
await esbuild.build({
  entryPoints: { server: join(appDir, 'src', 'server.ts') },
  outdir,
  // In dist/ itself, so that the import.meta.url rewrite above holds for chunks too.
  chunkNames: '[name]-[hash]',
  bundle: true,
  splitting: true,
  platform: 'node',
  format: 'esm',
  target: 'node20',
  banner: {
    js: "import { createRequire as __bundleCreateRequire } from 'node:module'; const require = __bundleCreateRequire(import.meta.url);",
  },
  sourcemap: 'linked',
  // No `keepNames`: it wraps every function and class the bundle defines in a `__name()` call, which
  // for the closures Fastify's hook runners make per request cost 13 % of a JWT token request's
  // CPU once the packages are bundled (bench/README.md "Cold start"). Names stay as written except
  // where two modules' top-level names collide; profiles and stack traces map back through the
  // source map (`profile-summary`, `NODE_OPTIONS=--enable-source-maps`).
  keepNames: false,
  logLevel: 'warning',
  plugins: [bundlePlan],
});
