#!/usr/bin/env bash
# Pipeline overhead: for speech-60s.wav with the same model and threads, the bare whisper-cli time
# next to Hark's create-to-done time (real API + worker processes) and their ratio (target <= 1.25
# with the test model); the wait wake-up latency (completion -> GET ?wait= answer; target 50 ms)
# and the worker's peak RSS. BENCH_RUNS (3) repeats; BENCH_AUDIO picks another file.
source "$(dirname "${BASH_SOURCE[0]}")/../../scripts/lib.sh"
ensure_secret
prepare_stack hark_bench
ensure_whisper
export WHISPER_BIN="${WHISPER_BIN:-$HARK_HOME/whisper/bin/whisper-cli}"
export HARK_MODELS_DIR="${HARK_MODELS_DIR:-$(cd "$ROOT/.." && pwd)/shared/models}"
export WHISPER_MODEL="${WHISPER_MODEL:-$HARK_MODELS_DIR/for-tests-ggml-base.en.bin}"
export BENCH_AUDIO="${BENCH_AUDIO:-$(cd "$ROOT/.." && pwd)/shared/audio/speech-60s.wav}"
export HARK_BENCH_DIR="$HARK_HOME/bench/pipeline"
mkdir -p "$HARK_BENCH_DIR"
(cd "$ROOT/bench/pipeline" && node ../../scripts/bundle.mjs src/bench.ts dist/bench.js)
exec node "$ROOT/bench/pipeline/dist/bench.js"
