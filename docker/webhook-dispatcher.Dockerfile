# syntax=docker/dockerfile:1
# Hark webhook dispatcher. Build from the repository root:
#   docker build -f docker/webhook-dispatcher.Dockerfile -t hark-webhook-dispatcher .
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
 && pnpm turbo run build --filter "@hark/webhook-dispatcher..." --output-logs=errors-only

# ---- prod-deps: production dependencies of the dispatcher and its workspace packages ----
# The bundles (scripts/bundle.mjs) inline @hark/* code and leave every other package external;
# --shamefully-hoist (here only: the workspace installs without hoisting) links every installed
# package into the root node_modules, so
# that one folder serves apps/webhook-dispatcher/dist. --no-optional drops the Prisma CLI,
# which the lockfile records as an optional auto-installed peer of @prisma/client.
FROM base AS prod-deps
COPY --from=manifests /manifests/ ./
RUN --mount=type=cache,id=hark-pnpm-store,target=/pnpm/store \
    pnpm install --frozen-lockfile --prod --no-optional --shamefully-hoist --filter "@hark/webhook-dispatcher..." --store-dir /pnpm/store \
 && rm -rf node_modules/@hark

# ---- runtime ----
FROM ${NODE_IMAGE} AS runtime
ENV NODE_ENV=production
WORKDIR /app
COPY --from=prod-deps /app/node_modules ./node_modules
COPY --from=build /app/apps/webhook-dispatcher/dist ./apps/webhook-dispatcher/dist
USER node
CMD ["node", "apps/webhook-dispatcher/dist/main.js"]
