#!/usr/bin/env bash
# Completion-notice bench: latency from `done` to the receiver (p50/p99 over 200 notices) and
# notices per second at 50 concurrent receivers, through the real dispatcher process.
# Works on a fresh machine: installs what is missing (as root), starts or reuses the private
# Postgres (database hark_bench) and Redis from scripts/lib.sh, applies migrations, builds the
# dispatcher, bundles the bench and runs it. Tunables: BENCH_LATENCY_NOTICES (200),
# BENCH_WARMUP_NOTICES (20), BENCH_NOTICES (1000), BENCH_RECEIVERS (50),
# HARK_DISPATCHER_CONCURRENCY (50), LOG_LEVEL (info, as in production). `--smoke`: 5 notices one at
# a time and 20 at once to 5 receivers (the test command runs it).
source "$(dirname "${BASH_SOURCE[0]}")/../../scripts/lib.sh"

ensure_system_packages
ensure_pnpm
install_deps
start_postgres hark_bench
start_redis
ensure_secret
(cd "$ROOT" && pnpm -s turbo run build --filter @hark/db --filter @hark/webhook-dispatcher --output-logs=errors-only >/dev/null)
migrate_db

BENCH="$ROOT/bench/webhooks"
log "bundling the bench"
(cd "$BENCH" && node ../../scripts/bundle.mjs src/bench.ts dist/bench.js)
log "running"
exec node "$BENCH/dist/bench.js" "$@"
