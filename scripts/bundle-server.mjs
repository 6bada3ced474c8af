#!/usr/bin/env node
/**
 * Bundles an app's `src/server.ts` into `dist/server.js` for the production start (`pnpm start`,
 * the Docker images), so the server runs on plain `node` instead of `node --import tsx`.
 *
 *   node scripts/bundle-server.mjs [appDir]     (default: the current directory)
 *
 * Why: tsx compiles every module at start-up on a loader thread with its own V8 isolate and keeps
 * the sources, which cost the auth server about 85 MB of RSS (idle 180 MB under tsx, 95 MB as a
 * bundle; see bench/README.md "The machine, and how to read the numbers"). The bundle is made by
 * esbuild, taken from tsx's own dependency (tsx is a production dependency of the apps, and
 * esbuild one of tsx's), so nothing is added to the lockfile. It takes about 0.2 s.
 *
 * - The app's own code and the workspace packages (`@oidc-orders/*`, whose exports are TypeScript
 *   sources) are bundled; every other package stays an import from node_modules (PGlite's wasm,
 *   pg's optional natives and the like load exactly as under tsx).
 * - `import.meta.url` in a bundled module is replaced by the URL of its source file, relative to
 *   the bundle, so `new URL('../pages/styles.css', import.meta.url)` and the migrations folder
 *   resolve as they do under tsx. `src/`, `drizzle/` and `public/` must therefore sit next to
 *   `dist/`, as they do in the repository and in the deployed image.
 * - A source map is written beside the bundle: `NODE_OPTIONS=--enable-source-maps` maps stack
 *   traces back to the TypeScript lines (off by default: it costs memory).
 */
import { readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { dirname, join, relative, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';

const appDir = resolve(process.argv[2] ?? process.cwd());
const outfile = join(appDir, 'dist', 'server.js');

const requireFromApp = createRequire(join(appDir, 'package.json'));
const requireFromTsx = createRequire(requireFromApp.resolve('tsx/package.json'));
const esbuild = await import(pathToFileURL(requireFromTsx.resolve('esbuild')).href);

/** Bundle our TypeScript, leave every third-party package to node_modules. */
const bundlePlan = {
  name: 'server-bundle',
  setup(build) {
    build.onResolve({ filter: /^[^./]/ }, (args) => {
      if (args.path.startsWith('@oidc-orders/')) return undefined;
      return { path: args.path, external: true };
    });
    build.onLoad({ filter: /\.ts$/ }, async (args) => {
      const source = await readFile(args.path, 'utf8');
      if (!source.includes('import.meta.url')) return undefined;
      const fromBundle = relative(dirname(outfile), args.path).split('\\').join('/');
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

await esbuild.build({
  entryPoints: [join(appDir, 'src', 'server.ts')],
  outfile,
  bundle: true,
  platform: 'node',
  format: 'esm',
  target: 'node20',
  sourcemap: 'linked',
  // Class and function names stay readable in logs and profiles.
  keepNames: true,
  logLevel: 'warning',
  plugins: [bundlePlan],
});
