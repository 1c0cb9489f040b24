# syntax=docker/dockerfile:1
# Hark transcription worker (CPU). Build from the repository root:
#   docker build -f docker/worker.Dockerfile -t hark-worker .
# GPU variant: docker/worker.cuda.Dockerfile. Models are not baked in: mount them and point
# WHISPER_MODEL at one (docker/compose.yml does both).
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
# whisper.cpp's source comes from the npm package nodejs-whisper (see scripts/build-whisper.sh).
# Copied out on its own so the whisper stage below stays cached until that package changes.
RUN mkdir /opt/nodejs-whisper \
 && cd packages/media/node_modules/nodejs-whisper && cp -r package.json cpp /opt/nodejs-whisper/
COPY . .
RUN pnpm --filter @hark/db generate \
 && pnpm turbo run build --filter "@hark/worker..." --output-logs=errors-only

# ---- whisper: whisper-cli from source, for any x86-64 CPU, not just the build machine's: ggml's
# CPU backend is built once per instruction set (WHISPER_CPU_VARIANTS=all: libggml-cpu-haswell.so
# for AVX2, -skylakex/-icelake/-zen4/... for AVX-512) and whisper-cli loads the best one the host
# runs when it starts, so AVX-512 hosts get AVX-512 kernels; the worker logs which ('engine CPU'). ----
FROM base AS whisper
RUN apt-get update \
 && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends cmake g++ make patch python3 ca-certificates \
 && rm -rf /var/lib/apt/lists/*
COPY --from=build /opt/nodejs-whisper /src/packages/media/node_modules/nodejs-whisper
COPY scripts/build-whisper.sh /src/scripts/build-whisper.sh
COPY scripts/whisper-patches /src/scripts/whisper-patches
RUN WHISPER_CPU_VARIANTS=all bash /src/scripts/build-whisper.sh
# The Silero VAD model for WHISPER_VAD=on (885 kB), made from the silero-vad wheel on PyPI and
# checked against whisper.cpp's published file.
COPY scripts/vad-model.sh scripts/silero-vad-ggml.py /src/scripts/
RUN bash /src/scripts/vad-model.sh /src/.hark/models/ggml-silero-v5.1.2.bin

# ---- prod-deps: production dependencies of the worker and its workspace packages ----
# The bundles (scripts/bundle.mjs) inline @hark/* code and leave every other package external;
# --shamefully-hoist (here only: the workspace installs without hoisting) links every installed
# package into the root node_modules, so
# that one folder serves apps/worker/dist. --no-optional drops the Prisma CLI, which the
# lockfile records as an optional auto-installed peer of @prisma/client.
FROM base AS prod-deps
COPY --from=manifests /manifests/ ./
RUN --mount=type=cache,id=hark-pnpm-store,target=/pnpm/store \
    pnpm install --frozen-lockfile --prod --no-optional --shamefully-hoist --filter "@hark/worker..." --store-dir /pnpm/store \
 && rm -rf node_modules/@hark

# ---- runtime ----
FROM ${NODE_IMAGE} AS runtime
# ffmpeg/ffprobe decode the audio (under util-linux prlimit's address-space limit; setpriv kills the
# engine and ffmpeg with the worker); libgomp1 is
# whisper-cli's OpenMP runtime.
RUN apt-get update \
 && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends ffmpeg libgomp1 util-linux \
 && rm -rf /var/lib/apt/lists/*
ENV NODE_ENV=production \
    HARK_STORAGE_DIR=/var/lib/hark/storage \
    HARK_MODELS_DIR=/models \
    WHISPER_BIN=/usr/local/bin/whisper-cli \
    WHISPER_VAD_MODEL=/usr/local/share/hark/ggml-silero-v5.1.2.bin
WORKDIR /app
# whisper-quantize makes the worker's quantised model from the mounted one at start (WHISPER_QUANTIZE).
# The binaries, their libraries and the CPU variants stay in one folder (they find each other by
# their own real path); the commands are links to them.
COPY --from=whisper /src/.hark/whisper/bin/ /usr/local/lib/hark-whisper/
RUN ln -s /usr/local/lib/hark-whisper/whisper-cli /usr/local/lib/hark-whisper/whisper-quantize /usr/local/bin/
COPY --from=whisper /src/.hark/models/ggml-silero-v5.1.2.bin /usr/local/share/hark/
COPY --from=prod-deps /app/node_modules ./node_modules
COPY --from=build /app/apps/worker/dist ./apps/worker/dist
# The storage volume is shared with the api (same path, same uid 1000 = node).
RUN mkdir -p "$HARK_STORAGE_DIR" /models && chown -R node:node /var/lib/hark \
 && whisper-cli --system-info
USER node
CMD ["node", "apps/worker/dist/main.js"]
