#!/usr/bin/env bash
# Hark end to end (src/e2e.ts): run by run.sh after the engine table, with the paths it exports.
source "$(dirname "${BASH_SOURCE[0]}")/../../scripts/lib.sh"
ensure_secret
prepare_stack hark_bench >&2
export BENCH_FW_PYTHON="$HARK_HOME/bench-venv/bin/python"
(cd "$ROOT/bench/engine" && node ../../scripts/bundle.mjs src/e2e.ts dist/e2e.js >&2)
echo "uptime:$(uptime | sed 's/.*load/ load/')"
node "$ROOT/bench/engine/dist/e2e.js"
echo "uptime:$(uptime | sed 's/.*load/ load/')"
