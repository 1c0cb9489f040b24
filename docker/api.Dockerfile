# syntax=docker/dockerfile:1
# Hark API image. Build from the repository root:
#   docker build -f docker/api.Dockerfile -t hark-api .
# The same image runs the one-shot migration (`node packages/db/dist/migrate-cli.js`) and holds
# the operator CLI (`node packages/cli/dist/hark.js`: accounts, keys, top-ups).
# The Node release Hark runs on (packages/core/src/node-runtime.ts; scripts/lib.sh pins the same).
ARG NODE_IMAGE=node:26.12.1-bookworm-slim

# ---- base: Node with pnpm from corepack (version pinned by package.json "packageManager") ----
FROM ${NODE_IMAGE} AS base
# corepack's bundled keys can be older than pnpm's signing keys; the lockfile pins the
# integrity of every dependency, so corepack's own signature check of pnpm is skipped.
ENV COREPACK_ENABLE_DOWNLOAD_PROMPT=0 COREPACK_INTEGRITY_KEYS=0 \
    TURBO_TELEMETRY_DISABLED=1 TURBO_NO_UPDATE_NOTIFIER=1 CI=true
# Node 25 and later ship without corepack: it comes from the npm registry, pinned (as in
# scripts/lib.sh), in place of the yarn links some images still carry.
RUN rm -f /usr/local/bin/yarn /usr/local/bin/yarnpkg \
 && npm install -g corepack@0.36.0 && corepack enable
WORKDIR /app

# ---- manifests: only what `pnpm install` reads, so dependency layers survive source edits ----
FROM base AS manifests
COPY . /src
RUN mkdir /manifests && cd /src \
 && cp package.json pnpm-lock.yaml pnpm-workspace.yaml .npmrc /manifests/ \
 && find . -name package.json -not -path '*/node_modules/*' -exec cp --parents {} /manifests/ \;

# ---- build: every dependency, Prisma client, bundles ----
FROM base AS build
COPY --from=manifests /manifests/ ./
RUN --mount=type=cache,id=hark-pnpm-store,target=/pnpm/store \
    pnpm install --frozen-lockfile --store-dir /pnpm/store
COPY . .
RUN pnpm --filter @hark/db generate \
 && pnpm turbo run build --filter "@hark/api..." --filter "@hark/cli..." --output-logs=errors-only

# ---- prod-deps: production dependencies of the api, the CLI and their workspace packages ----
# The bundles (scripts/bundle.mjs) inline @hark/* code and leave every other package external,
# so the runtime needs those packages resolvable from apps/api/dist, packages/db/dist and
# packages/cli/dist.
# --shamefully-hoist (here only: the workspace installs without hoisting) links every installed
# package into the root node_modules, so
# that one folder serves all three. --no-optional drops the Prisma CLI, which the lockfile records
# as an optional auto-installed peer of @prisma/client and which nothing runs in production.
FROM base AS prod-deps
COPY --from=manifests /manifests/ ./
RUN --mount=type=cache,id=hark-pnpm-store,target=/pnpm/store \
    pnpm install --frozen-lockfile --prod --no-optional --shamefully-hoist --filter "@hark/api..." --filter "@hark/cli..." --store-dir /pnpm/store \
 && rm -rf node_modules/@hark

# ---- runtime ----
FROM ${NODE_IMAGE} AS runtime
ENV NODE_ENV=production PORT=3000 HOST=0.0.0.0 HARK_STORAGE_DIR=/var/lib/hark/storage
WORKDIR /app
COPY --from=prod-deps /app/node_modules ./node_modules
COPY --from=build /app/apps/api/dist ./apps/api/dist
# The try page (GET /, /try): static files the API reads at boot from apps/api/public.
COPY apps/api/public ./apps/api/public
COPY --from=build /app/packages/db/dist ./packages/db/dist
COPY --from=build /app/packages/cli/dist ./packages/cli/dist
# migrate-cli reads ../../../prisma/migrations relative to its bundle.
COPY prisma/migrations ./prisma/migrations
# The storage volume is shared with the workers (same path, same uid 1000 = node); a named
# volume mounted here starts with this folder's owner.
RUN mkdir -p "$HARK_STORAGE_DIR" && chown -R node:node /var/lib/hark
USER node
EXPOSE 3000
HEALTHCHECK --interval=10s --timeout=3s --start-period=10s --retries=3 \
  CMD ["node", "-e", "fetch('http://127.0.0.1:'+(process.env.PORT||3000)+'/healthz').then(r=>process.exit(r.ok?0:1),()=>process.exit(1))"]
# Node flags: apps/api/package.json "nodeFlags" (a 4 MB young generation: the API streams
# uploads, and a small nursery lets V8 collect spent socket buffers sooner; see bench/uploads).
CMD ["node", "--max-semi-space-size=4", "apps/api/dist/main.js"]
