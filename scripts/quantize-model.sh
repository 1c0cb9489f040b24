#!/usr/bin/env bash
# Makes the quantised model the worker runs from a ggml model (f16, as published) with
# whisper.cpp's whisper-quantize (built by scripts/build-whisper.sh). Never committed: made here,
# at build time, from the real model.
#
# usage: quantize-model.sh SOURCE.bin [TYPE] [OUT_DIR]
#   TYPE     q8_0 (default; see bench/engine/README.md for why), q5_1, q5_0, q4_0, ...
#   OUT_DIR  default <repo>/.hark/models
# Prints the quantised file's path on stdout (logs go to stderr). Idempotent: an existing output
# whose stamp names the same source (path, size, mtime) and type is reused.
# Only scripts in the repository call it, so it uses scripts/lib.sh (build-whisper.sh cannot: the
# worker images copy it alone).
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

SRC="${1:-}"
TYPE="${2:-q8_0}"
OUT_DIR="${3:-$ROOT/.hark/models}"
QUANTIZE="${WHISPER_QUANTIZE_BIN:-$ROOT/.hark/whisper/bin/whisper-quantize}"

[[ -n "$SRC" && -f "$SRC" ]] || die "quantize-model: source model not found: '${SRC}'"
[[ "$TYPE" =~ ^q[0-9]_[0-9K]$|^q[0-9]_K$ ]] || die "quantize-model: unsupported type '$TYPE'"
[[ -x "$QUANTIZE" ]] || die "quantize-model: whisper-quantize not found at $QUANTIZE (run scripts/build-whisper.sh)"

name="$(basename "$SRC" .bin)"
OUT="$OUT_DIR/$name-$TYPE.bin"
STAMP="$OUT.stamp"
STAMP_TEXT="$(cd "$(dirname "$SRC")" && pwd)/$(basename "$SRC") $(stat -c '%s %Y' "$SRC") $TYPE"

if [[ -f "$OUT" && -f "$STAMP" && "$(cat "$STAMP")" == "$STAMP_TEXT" ]]; then
  echo "$OUT"
  exit 0
fi

mkdir -p "$OUT_DIR"
exec 9>"$OUT_DIR/.quantize.lock"
if command -v flock >/dev/null; then flock 9; fi
if [[ -f "$OUT" && -f "$STAMP" && "$(cat "$STAMP")" == "$STAMP_TEXT" ]]; then
  echo "$OUT"
  exit 0
fi

echo "quantize-model: $SRC -> $OUT ($TYPE)" >&2
"$QUANTIZE" "$SRC" "$OUT.tmp" "$TYPE" >&2 || { rm -f "$OUT.tmp"; die "quantize-model: whisper-quantize failed"; }
mv -f "$OUT.tmp" "$OUT"
printf '%s' "$STAMP_TEXT" > "$STAMP"
echo "$OUT"
