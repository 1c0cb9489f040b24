#!/usr/bin/env bash
# Downloads a whisper.cpp model (e.g. `base.en`, `small`, `large-v3-turbo`) into HARK_MODELS_DIR
# (default ../shared/models) as ggml-<name>.bin, verified against the SHA-1 that the pinned
# whisper.cpp source lists in models/README.md. Needs internet; a file that does not verify is
# removed. HARK_MODEL_BASE_URL overrides where models are fetched from (a mirror).
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
name="${1:-}"
[ -n "$name" ] || die "usage: bash scripts/download-model.sh <model> (tiny, base.en, small, large-v3-turbo, ...)"
readme="$(node -p "require('path').dirname(require.resolve('nodejs-whisper/package.json', { paths: [process.argv[1]] }))" "$ROOT/packages/media")/cpp/whisper.cpp/models/README.md"
[ -f "$readme" ] || die "whisper.cpp sources not installed; run pnpm install first"
sha1="$(awk -F'|' -v m="$name" '{gsub(/ /,"",$2); gsub(/[ `]/,"",$4)} $2==m {print $4}' "$readme")"
[ -n "$sha1" ] || die "unknown model '$name'; known: $(awk -F'|' 'NR>2 && $4 ~ /`/ {gsub(/ /,"",$2); printf "%s ", $2}' "$readme")"
dir="${HARK_MODELS_DIR:-$(cd "$ROOT/.." && pwd)/shared/models}"
mkdir -p "$dir"
out="$dir/ggml-$name.bin"
if [ -f "$out" ] && [ "$(sha1sum "$out" | cut -d' ' -f1)" = "$sha1" ]; then
  log "$out is present and verified"; exit 0
fi
base="${HARK_MODEL_BASE_URL:-https://huggingface.co/ggerganov/whisper.cpp/resolve/main}"
log "downloading ggml-$name.bin"
curl -fL --retry 3 -o "$out.part" "$base/ggml-$name.bin" || { rm -f "$out.part"; die "download failed"; }
got="$(sha1sum "$out.part" | cut -d' ' -f1)"
if [ "$got" != "$sha1" ]; then
  rm -f "$out.part"
  die "checksum mismatch for ggml-$name.bin (expected $sha1, got $got); nothing installed"
fi
mv "$out.part" "$out"
log "installed $out (sha1 $sha1). Start with: WHISPER_MODEL=$out bash scripts/up.sh"
