#!/usr/bin/env bash
# The diarization peer for `bench -- --peer`: sherpa-onnx (k2-fsa), a pyannote-style pipeline
# (segmentation-3.0 local speakers, one embedding per local speaker, agglomerative clustering)
# in C++ onnxruntime, run on the same two models as Hark's neural pipeline. Installs it from PyPI
# into a virtualenv (default <repo>/.hark/der-peer-venv, HARK_DER_PEER_VENV overrides) once and
# prints the virtualenv's python.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../../.." && pwd)"
VENV="${HARK_DER_PEER_VENV:-$ROOT/.hark/der-peer-venv}"
PACKAGES=(sherpa-onnx==2.0.1 onnx==1.23.2 numpy==2.4.6)
STAMP="$VENV/.hark-peer-stamp"
if [[ ! -x "$VENV/bin/python" || "$(cat "$STAMP" 2>/dev/null)" != "${PACKAGES[*]}" ]]; then
  python3 -m venv "$VENV" >&2
  "$VENV/bin/pip" install -q "${PACKAGES[@]}" >&2
  echo "${PACKAGES[*]}" > "$STAMP"
fi
echo "$VENV/bin/python"
