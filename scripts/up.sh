#!/usr/bin/env bash
# Brings the whole service up on this machine: installs what is missing, starts Postgres and
# Redis (unless HARK_EXTERNAL_DATABASE_URL / HARK_EXTERNAL_REDIS_URL are given), applies
# migrations, builds, creates a dev account with credits, starts the API, the worker and the
# webhook dispatcher in the background, and prints a ready API key. Running it again reuses
# the database, the account and the key, and restarts the apps. Stop with `bash scripts/down.sh`.
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

ensure_secret
prepare_stack hark
ensure_whisper

export PORT="${PORT:-3000}"
export HARK_BASE_URL="${HARK_BASE_URL:-http://127.0.0.1:$PORT}"
export HARK_STORAGE_DIR="${HARK_STORAGE_DIR:-$HARK_HOME/storage}"
export WHISPER_BIN="${WHISPER_BIN:-$HARK_HOME/whisper/bin/whisper-cli}"
export HARK_MODELS_DIR="${HARK_MODELS_DIR:-$(shared_dir)/models}"
if [ -z "${WHISPER_MODEL:-}" ]; then
  WHISPER_MODEL="$(ls "$HARK_MODELS_DIR"/ggml-*.bin 2>/dev/null | head -n 1 || true)"
  if [ -z "$WHISPER_MODEL" ]; then
    WHISPER_MODEL="$(ls "$HARK_MODELS_DIR"/for-tests-ggml-*.bin 2>/dev/null | head -n 1 || true)"
    log "no real model in $HARK_MODELS_DIR: using the test model (it transcribes to nothing)."
    log "download one with: bash scripts/download-model.sh base.en"
  fi
fi
export WHISPER_MODEL

# The dev account and its key are kept in .hark/dev-account (mode 600) so a second run reuses them.
DEV="$HARK_HOME/dev-account"
HARK="node $ROOT/packages/cli/dist/hark.js"
if [ -f "$DEV" ] && $HARK --json balance "$(head -n 1 "$DEV")" >/dev/null 2>&1; then
  ACCOUNT_ID="$(sed -n 1p "$DEV")"; API_KEY="$(sed -n 2p "$DEV")"
else
  ACCOUNT_ID="$($HARK --json account create --name dev --trial-credits 10000 | node -pe 'JSON.parse(require("fs").readFileSync(0)).accountId')"
  API_KEY="$($HARK --json key issue "$ACCOUNT_ID" --label dev | node -pe 'JSON.parse(require("fs").readFileSync(0)).key')"
  (umask 077 && printf '%s\n%s\n' "$ACCOUNT_ID" "$API_KEY" > "$DEV")
fi

bash "$ROOT/scripts/down.sh" --apps-only
mkdir -p "$HARK_HOME/logs" "$HARK_HOME/run"
for app in api worker webhook-dispatcher; do
  # shellcheck disable=SC2046 # the app's Node flags (package.json "nodeFlags"), word-split on purpose
  nohup node $(node -p "(require('$ROOT/apps/$app/package.json').nodeFlags || []).join(' ')") \
    "$ROOT/apps/$app/dist/main.js" >> "$HARK_HOME/logs/$app.log" 2>&1 &
  echo $! > "$HARK_HOME/run/$app.pid"
done

for _ in $(seq 1 100); do
  curl -fsS "$HARK_BASE_URL/readyz" >/dev/null 2>&1 && break
  sleep 0.2
done
curl -fsS "$HARK_BASE_URL/readyz" >/dev/null 2>&1 || die "the API did not become ready; see $HARK_HOME/logs/api.log"

cat <<MSG

Hark is up.
  Base URL: $HARK_BASE_URL
  API key:  $API_KEY
  Account:  $ACCOUNT_ID
  Logs:     $HARK_HOME/logs/
  Operator CLI: DATABASE_URL=$DATABASE_URL HARK_SECRET=\$(cat $HARK_HOME/secret) $HARK --help
  Stop:     bash scripts/down.sh

Try: curl -H "Authorization: Bearer $API_KEY" $HARK_BASE_URL/v1/balance
MSG
