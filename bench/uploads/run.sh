#!/usr/bin/env bash
# Upload throughput: 512 MiB in 16 MiB chunks through the real API process over loopback, next to
# writing the same chunks with fsync straight to the same disk; prints MB/s, the ratio (target
# >= 0.5) and the API's peak RSS (target < 200 MB); then the same upload with the S3 driver
# against S3Proxy (started here, stopped on exit; BENCH_S3=0 skips it). BENCH_UPLOAD_MIB changes
# the size; `--smoke` uploads one 16 MiB chunk (the test command runs it).
source "$(dirname "${BASH_SOURCE[0]}")/../../scripts/lib.sh"
ensure_secret
prepare_stack hark_bench
(cd "$ROOT/bench/uploads" && node ../../scripts/bundle.mjs src/bench.ts dist/bench.js)
export HARK_BENCH_DIR="$HARK_HOME/bench/uploads"
mkdir -p "$HARK_BENCH_DIR"
if [ "${BENCH_S3:-1}" != 0 ]; then
  start_s3proxy
  trap stop_s3proxy EXIT
fi
node "$ROOT/bench/uploads/dist/bench.js" "$@"
