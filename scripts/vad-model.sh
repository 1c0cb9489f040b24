#!/usr/bin/env bash
# Makes whisper.cpp's Silero VAD model (ggml-silero-v5.1.2.bin, for WHISPER_VAD=on) from the
# silero-vad 5.1.2 wheel on PyPI, without torch (scripts/silero-vad-ggml.py; the result is
# checked byte for byte against whisper.cpp's published file). Idempotent.
#   bash scripts/vad-model.sh [OUT]   (default: .hark/models/ggml-silero-v5.1.2.bin)
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
OUT="${1:-${HARK_HOME:-$ROOT/.hark}/models/ggml-silero-v5.1.2.bin}"
SHA256=29940d98d42b91fbd05ce489f3ecf7c72f0a42f027e4875919a28fb4c04ea2cf
if [[ -f "$OUT" ]] && [[ "$(sha256sum "$OUT" | cut -d' ' -f1)" == "$SHA256" ]]; then
  exit 0
fi
command -v python3 >/dev/null || { echo "vad-model: python3 is needed to make $OUT" >&2; exit 1; }
python3 "$ROOT/scripts/silero-vad-ggml.py" "$OUT"
