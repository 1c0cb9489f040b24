#!/usr/bin/env bash
# The official `openai` Python package, pinned, in its own venv under .hark/ (as scripts/fuzz-api.sh
# makes one for schemathesis), for the OpenAI compatibility test
# (apps/api/test/openai-compat.test.ts). Idempotent. Prints the venv's python on stdout.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

OPENAI_PYTHON_VERSION=3.57.0
VENV="$HARK_HOME/venv-openai"

installed() {
  "$VENV/bin/python" -c 'import importlib.metadata as m; print(m.version("openai"))' 2>/dev/null || true
}

if [ "$(installed)" != "$OPENAI_PYTHON_VERSION" ]; then
  if ! python3 -m venv --help >/dev/null 2>&1 || ! python3 -c 'import ensurepip' >/dev/null 2>&1; then
    [ "$(id -u)" -eq 0 ] || die "openai-python: python3 venv support missing (apt-get install python3-venv)"
    log "installing python3-venv"
    apt-get update -qq >/dev/null
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends python3-venv >/dev/null
  fi
  log "installing openai $OPENAI_PYTHON_VERSION (Python) into $VENV"
  rm -rf "$VENV"
  python3 -m venv "$VENV"
  "$VENV/bin/pip" install -q --disable-pip-version-check "openai==$OPENAI_PYTHON_VERSION" >&2
fi
echo "$VENV/bin/python"
