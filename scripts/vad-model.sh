#!/usr/bin/env bash
# Makes whisper.cpp's Silero VAD model (ggml-silero-v5.1.2.bin, for WHISPER_VAD=on) from the
# silero-vad 5.1.2 wheel on PyPI, without torch (scripts/silero-vad-ggml.py, which checks the
# result byte for byte against whisper.cpp's published file, and does nothing when OUT holds it).
#   bash scripts/vad-model.sh [OUT]   (default: .hark/models/ggml-silero-v5.1.2.bin)
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
OUT="${1:-${HARK_HOME:-$ROOT/.hark}/models/ggml-silero-v5.1.2.bin}"
command -v python3 >/dev/null || { echo "vad-model: python3 is needed to make $OUT" >&2; exit 1; }
python3 "$ROOT/scripts/silero-vad-ggml.py" "$OUT"
