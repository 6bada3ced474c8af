# Production image of either app: one recipe, the app named by build arguments. Build context:
# the repository root.
#   docker build -f deploy/app.Dockerfile --build-arg APP=auth-server --build-arg PORT=4000 -t oidc-orders/auth-server .
#   docker build -f deploy/app.Dockerfile --build-arg APP=orders --build-arg PORT=3000 -t oidc-orders/orders .
# (docker compose builds them the same way, see docker-compose.yml.)

ARG NODE_IMAGE=node:22-bookworm-slim

# ---------------------------------------------------------------------------------------------
FROM ${NODE_IMAGE} AS build
# Only where HTTPS to the npm registry passes a TLS-inspecting proxy (our CI, see
# deploy/ci/container-test.sh): PEM certificates to trust besides Node's own, for the two
# networked steps below. A build argument, not a secret mount, so that the classic builder builds
# this file too. It is declared in this stage only and its file is deleted in the step that wrote
# it: neither is in any layer or in the history of the runtime image.
ARG EXTRA_CA_CERTS=""
# pnpm as pinned by package.json's packageManager; installed by npm, not corepack, so nothing is
# downloaded when a pnpm command runs.
RUN if [ -n "$EXTRA_CA_CERTS" ]; then printf '%s\n' "$EXTRA_CA_CERTS" >/tmp/extra-ca.pem; export NODE_EXTRA_CA_CERTS=/tmp/extra-ca.pem; fi \
 && npm install --global pnpm@10.34.9 \
 && rm -f /tmp/extra-ca.pem
ENV CI=true
WORKDIR /repo

# 1. Every package the lockfile lists for production, into pnpm's store. Only the lockfile (and
#    the workspace settings) are copied first, so this networked layer is reused until they change.
COPY pnpm-lock.yaml pnpm-workspace.yaml .npmrc ./
RUN if [ -n "$EXTRA_CA_CERTS" ]; then printf '%s\n' "$EXTRA_CA_CERTS" >/tmp/extra-ca.pem; export NODE_EXTRA_CA_CERTS=/tmp/extra-ca.pem; fi \
 && pnpm fetch --prod \
 && rm -f /tmp/extra-ca.pem

# The workspace package to build (apps/<APP>): auth-server or orders. Declared here, after the
# networked layers, so that both apps' builds share them from the cache.
ARG APP
RUN case "$APP" in auth-server|orders) ;; *) echo "build with --build-arg APP=auth-server or APP=orders" >&2; exit 1 ;; esac

# 2. The workspace sources, then an offline install from that store; --frozen-lockfile fails the
#    build when a package.json and the lockfile disagree.
COPY . .
RUN pnpm install --offline --frozen-lockfile --prod --filter "${APP}..."

# 3. A self-contained folder: the app, its production dependencies from the same lockfile, and the
#    workspace packages (@oidc-orders/oauth-core, @oidc-orders/service-kit) copied in rather than
#    linked. pnpm 10's deploy wants
#    inject-workspace-packages for that; it is set for this command only (the workspace keeps its
#    links for development). `--legacy` would work too, but it re-resolves versions and needs the
#    registry. Its tsconfig extends the root one, which is copied alongside. The server is then
#    bundled into dist/ (server.js and its chunks) by scripts/bundle-server.mjs (esbuild, taken from tsx's
#    dependencies), as `pnpm start` does, so it runs on plain node without tsx's loader thread
#    (about 85 MB less RSS). src/, drizzle/ and public/ stay: the bundle reads its assets and
#    migrations from them. Tests and tool configs stay behind.
RUN pnpm --config.inject-workspace-packages=true --filter "${APP}" deploy --prod --offline /out \
 && cp tsconfig.base.json /out/tsconfig.base.json \
 && sed -i 's#"\.\./\.\./tsconfig\.base\.json"#"./tsconfig.base.json"#' /out/tsconfig.json \
 && node scripts/bundle-server.mjs /out \
 && rm -rf /out/test /out/vitest.config.ts /out/drizzle.config.ts

# ---------------------------------------------------------------------------------------------
FROM ${NODE_IMAGE} AS runtime
# The port the app listens on: 4000 for the auth server, 3000 for orders (their defaults).
ARG PORT
RUN case "$PORT" in ''|*[!0-9]*) echo "build with --build-arg PORT=4000 (auth-server) or PORT=3000 (orders)" >&2; exit 1 ;; esac
ENV NODE_ENV=production \
    PORT=${PORT}
WORKDIR /app
# Owned by root and not writable by the user the process runs as: it cannot change its own code.
COPY --from=build /out ./
# The unprivileged user of the node image (uid 1000).
USER node
EXPOSE ${PORT}

# Readiness, not liveness: unhealthy while the database is unreachable or the process is draining.
# Node's own fetch, because the slim image has no curl. HOST must stay a wildcard or loopback.
HEALTHCHECK --interval=10s --timeout=5s --start-period=60s --retries=3 \
  CMD ["node", "-e", "fetch('http://127.0.0.1:' + process.env.PORT + '/health/ready').then((r) => process.exit(r.ok ? 0 : 1), () => process.exit(1))"]

# Exec form: node is the process that receives SIGTERM (PID 1, or the child of compose's
# `init: true`) and starts the graceful drain. The node flags are those of `pnpm start` (package.json):
# a smaller young generation and an old-space cap keep the heap near its live size (about 22 MB)
# instead of growing lazily under load (bench/README.md "What the profiles showed", RSS).
STOPSIGNAL SIGTERM
CMD ["node", "--max-semi-space-size=4", "--max-old-space-size=96", "dist/server.js"]
