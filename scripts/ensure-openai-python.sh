#!/usr/bin/env bash
# The official `openai` Python package, pinned, in its own venv under .hark/ (as scripts/fuzz-api.sh
# makes one for schemathesis), for the OpenAI compatibility test
# (apps/api/test/openai-compat.test.ts). Idempotent. Prints the venv's python on stdout.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

OPENAI_PYTHON_VERSION=3.57.0
VENV="$HARK_HOME/venv-openai"

ensure_venv "$VENV" openai "$OPENAI_PYTHON_VERSION"
echo "$VENV/bin/python"
