#!/usr/bin/env bash
# The API's memory under OpenAI-route requests that wait: 200 concurrent
# POST /v1/audio/transcriptions with 20 MiB files against the real API process (no worker, so
# every request stores its file, creates its transcript and waits), printing the API's RSS idle,
# while all wait, and its peak (goal: under 300 MB whatever the number waiting). Arguments go to
# the bench: --smoke (2 requests of 1 MiB, seconds), --requests N, --mib M, --api PATH (another
# build's apps/api/dist/main.js: the baseline). See README.md.
source "$(dirname "${BASH_SOURCE[0]}")/../../scripts/lib.sh"
ensure_secret
prepare_stack hark_bench
(cd "$ROOT/bench/openai-memory" && node ../../scripts/bundle.mjs src/bench.ts dist/bench.js)
export HARK_BENCH_DIR="$HARK_HOME/bench/openai-memory"
mkdir -p "$HARK_BENCH_DIR"
if [[ " $* " == *" --s3 "* ]]; then
  start_s3proxy
  trap stop_s3proxy EXIT
fi
node "$ROOT/bench/openai-memory/dist/bench.js" "$@"
