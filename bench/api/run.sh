#!/usr/bin/env bash
# GET /v1/balance benchmark: the real API against a bare Express handler, 32 connections.
# Works on a fresh machine: installs what is missing (as root), starts or reuses the private
# Postgres (database hark_bench) and Redis from scripts/lib.sh, applies migrations, bundles the
# bench and runs it. Tunables: BENCH_CONNECTIONS (32), BENCH_THREADS (2), BENCH_WARMUP_S (5),
# BENCH_DURATION_S (4, per round), BENCH_ROUNDS (5), BENCH_ACCOUNTS (1), LOG_LEVEL (info, as in
# production), HARK_DB_POOL_SIZE, HARK_AUTH_CACHE_MS. `--smoke`: one 1 s round after a 1 s warm-up
# (the test command runs it: the bench still runs to its figures).
source "$(dirname "${BASH_SOURCE[0]}")/../../scripts/lib.sh"

ensure_system_packages
if ! command -v wrk >/dev/null 2>&1; then
  [ "$(id -u)" -eq 0 ] || die "wrk is missing (apt-get install wrk, or run as root)"
  log "installing wrk"
  apt-get update -qq >/dev/null
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends wrk >/dev/null
fi
ensure_pnpm
install_deps
start_postgres hark_bench
start_redis
ensure_secret
(cd "$ROOT" && pnpm -s turbo run build --filter @hark/db --output-logs=errors-only >/dev/null)
migrate_db

BENCH="$ROOT/bench/api"
log "bundling the bench"
(cd "$BENCH" && node ../../scripts/bundle.mjs src/bench.ts dist/bench.js \
  && node ../../scripts/bundle.mjs src/server.ts dist/server.js)

mkdir -p "$HARK_HOME/bench"
export BENCH_SERVER_LOG="$HARK_HOME/bench/api-server.log"
# The API's try page, which the bundled bench server cannot find next to itself.
export HARK_TRY_PAGE_DIR="$ROOT/apps/api/public"
: > "$BENCH_SERVER_LOG"
log "running (server log: $BENCH_SERVER_LOG)"
exec node "$BENCH/dist/bench.js" "$@"
