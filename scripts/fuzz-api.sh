#!/usr/bin/env bash
# Property-based fuzzing of the API from its own OpenAPI document (docs/openapi.json) with
# schemathesis: a real API process on the real Postgres and Redis, a real key with credits, a
# bounded number of examples per operation. Fails on any 500 and on any response outside the
# document (status, content type, headers, body schema). The API runs with its own response
# validator on too, so a response outside the document is also a 500 here.
#
# Assumes what scripts/test.sh sets up first: Postgres and Redis running (REDIS_URL exported),
# the workspace built. Sets up everything else: a Python venv under .hark/venv with a pinned
# schemathesis, its own database (hark_fuzz, migrated), an account, the API process.
#
# Knobs: HARK_FUZZ=0 skips it, HARK_FUZZ_EXAMPLES (default 30 per operation), HARK_FUZZ_SEED (default fixed, so a
# failure reproduces; set "random" for a fresh one), HARK_FUZZ_WORKERS (default 2),
# HARK_FUZZ_SCHEMA (default docs/openapi.json).
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

SCHEMATHESIS_VERSION=4.32.5
EXAMPLES="${HARK_FUZZ_EXAMPLES:-30}"
SEED="${HARK_FUZZ_SEED:-20261123}"
WORKERS="${HARK_FUZZ_WORKERS:-2}"
SCHEMA="${HARK_FUZZ_SCHEMA:-$ROOT/docs/openapi.json}"
VENV="$HARK_HOME/venv"
ST="$VENV/bin/st"

if [ "${HARK_FUZZ:-1}" = 0 ]; then log "fuzz-api: skipped (HARK_FUZZ=0)"; exit 0; fi
[ -n "${REDIS_URL:-}" ] || die "fuzz-api: REDIS_URL must be set (run through scripts/test.sh)"
[ -f "$ROOT/apps/api/dist/main.js" ] || die "fuzz-api: build first (apps/api/dist/main.js missing)"
[ -f "$SCHEMA" ] || die "fuzz-api: $SCHEMA missing (pnpm openapi)"

ensure_venv "$VENV" schemathesis "$SCHEMATHESIS_VERSION"
# Its own database: transcripts the fuzzer leaves processing must not meet the test suite's
# reconciler and sweepers (with HARK_EXTERNAL_DATABASE_URL that database is used as it is).
start_postgres hark_fuzz
migrate_db >/dev/null

WORK="$(mktemp -d "${TMPDIR:-/tmp}/hark-fuzz.XXXXXX")"
API_PID=""
PREFIX="hark-fuzz-$$"
cleanup() {
  [ -n "$API_PID" ] && kill "$API_PID" 2>/dev/null && wait "$API_PID" 2>/dev/null
  redis-cli -u "$REDIS_URL" --scan --pattern "$PREFIX:*" 2>/dev/null | xargs -r redis-cli -u "$REDIS_URL" del >/dev/null 2>&1 || true
  rm -rf "$WORK"
}
trap cleanup EXIT

export HARK_SECRET="${HARK_SECRET:-fuzz-secret-$(head -c 12 /dev/urandom | od -An -tx1 | tr -d ' \n')}"
HARK="node $ROOT/packages/cli/dist/hark.js"

# A topped-up account: no concurrency limit, credits for every create the fuzzer makes.
ACCOUNT_ID="$($HARK --json account create --name "fuzz-$$" | node -pe 'JSON.parse(require("fs").readFileSync(0)).accountId')"
$HARK --json topup "$ACCOUNT_ID" 1000000 >/dev/null
API_KEY="$($HARK --json key issue "$ACCOUNT_ID" --label fuzz | node -pe 'JSON.parse(require("fs").readFileSync(0)).key')"

PORT="$(node -e 'const s=require("net").createServer().listen(0,"127.0.0.1",()=>{console.log(s.address().port);s.close()})')"
BASE="http://127.0.0.1:$PORT"
# No worker runs: transcripts stay processing, which is a state the document covers. Private
# URLs are allowed so generated webhook hosts are not looked up in DNS (nothing is ever sent).
PORT="$PORT" HOST=127.0.0.1 HARK_REDIS_PREFIX="$PREFIX" HARK_STORAGE_DIR="$WORK/storage" \
  HARK_VALIDATE_RESPONSES=1 ALLOW_PRIVATE_URLS=true LOG_LEVEL=warn HARK_SHUTDOWN_DRAIN_MS=0 \
  HARK_RATE_LIMIT_TRANSCRIPTS=100000 HARK_RATE_LIMIT_UPLOADS=100000 HARK_RATE_LIMIT_CHUNKS=100000 HARK_RATE_LIMIT_OTHER=100000 \
  node "$ROOT/apps/api/dist/main.js" > "$WORK/api.log" 2>&1 &
API_PID=$!
for _ in $(seq 1 100); do
  curl -fsS "$BASE/readyz" >/dev/null 2>&1 && break
  kill -0 "$API_PID" 2>/dev/null || { cat "$WORK/api.log" >&2; die "fuzz-api: the API exited"; }
  sleep 0.2
done
curl -fsS "$BASE/readyz" >/dev/null || { cat "$WORK/api.log" >&2; die "fuzz-api: the API did not become ready"; }

SEED_ARGS=()
[ "$SEED" != random ] && SEED_ARGS=(--seed "$SEED")
log "fuzzing $BASE from $SCHEMA (schemathesis $SCHEMATHESIS_VERSION, $EXAMPLES examples per operation)"
set +e
(cd "$WORK" && "$ST" run "$SCHEMA" \
  --url "$BASE" \
  --header "Authorization: Bearer $API_KEY" \
  --checks not_a_server_error,status_code_conformance,content_type_conformance,response_headers_conformance,response_schema_conformance \
  --max-examples "$EXAMPLES" \
  --workers "$WORKERS" \
  --request-timeout 30 \
  --generation-database none \
  --no-color \
  --report junit --report-junit-path "$WORK/junit.xml" \
  "${SEED_ARGS[@]}")
status=$?
set -e

violations="$(grep -c 'response outside the OpenAPI document' "$WORK/api.log" || true)"
if [ "$violations" != 0 ]; then
  log "the API's own validator reported $violations response(s) outside the document:"
  grep 'response outside the OpenAPI document' "$WORK/api.log" | head -20 >&2
fi
if [ "$status" -ne 0 ] || [ "$violations" != 0 ]; then
  log "last lines of the API log:"
  tail -n 30 "$WORK/api.log" >&2
  die "fuzz-api: FAILED (schemathesis exit $status, validator violations $violations)"
fi
log "fuzz-api: passed (no server errors, every response inside the document)"
