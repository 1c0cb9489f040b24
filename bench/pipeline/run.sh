#!/usr/bin/env bash
# Pipeline overhead: for speech-60s.wav with the same model and threads, the bare whisper-cli time
# next to Hark's create-to-done time (real API + worker processes) and their ratio (target <= 1.25
# with the test model); the wait wake-up latency (completion -> GET ?wait= answer; target 50 ms)
# and the worker's peak RSS. BENCH_RUNS (3) repeats; BENCH_AUDIO picks another file. `--smoke`: one
# run of jfk.wav (11 s; the test command runs it).
source "$(dirname "${BASH_SOURCE[0]}")/../../scripts/lib.sh"
ensure_secret
prepare_stack hark_bench
ensure_whisper
export WHISPER_BIN="${WHISPER_BIN:-$HARK_HOME/whisper/bin/whisper-cli}"
export HARK_MODELS_DIR="${HARK_MODELS_DIR:-$(shared_dir)/models}"
export WHISPER_MODEL="${WHISPER_MODEL:-$HARK_MODELS_DIR/for-tests-ggml-base.en.bin}"
clip=speech-60s.wav
if [[ " $* " == *" --smoke "* ]]; then
  clip=jfk.wav
  export BENCH_RUNS="${BENCH_RUNS:-1}"
fi
export BENCH_AUDIO="${BENCH_AUDIO:-$(shared_dir)/audio/$clip}"
export HARK_BENCH_DIR="$HARK_HOME/bench/pipeline"
mkdir -p "$HARK_BENCH_DIR"
(cd "$ROOT/bench/pipeline" && node ../../scripts/bundle.mjs src/bench.ts dist/bench.js)
exec node "$ROOT/bench/pipeline/dist/bench.js" "$@"
