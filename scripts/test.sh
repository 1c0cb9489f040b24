#!/usr/bin/env bash
# Runs every test against real services: Postgres, Redis, ffmpeg, whisper.cpp and an S3 server
# (S3Proxy, started here and stopped on exit: the storage contract runs on both drivers).
# Installs and starts what is missing (Debian packages as root, pnpm via corepack, a private
# Postgres and Redis under .hark/ unless HARK_EXTERNAL_DATABASE_URL / HARK_EXTERNAL_REDIS_URL are
# given), builds whisper-cli from source once, then runs jest. Extra arguments go to jest.
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

export_test_env
export HARK_EVAL_DIR="${HARK_EVAL_DIR:-$HARK_SHARED_DIR/eval/diar}"

prepare_stack hark_test
ensure_whisper
# The worker image's engine (every x86-64 CPU variant, chosen at start), which
# packages/media/test/whisper-portable.test.ts runs: built here, once, rather than inside a test's
# time limit (about twice the native build's time; returns at once when up to date).
log "whisper.cpp, the portable build (WHISPER_CPU_VARIANTS=all)"
export HARK_WHISPER_PORTABLE_DIR="${HARK_WHISPER_PORTABLE_DIR:-$HARK_HOME/whisper-portable}"
WHISPER_CPU_VARIANTS=all WHISPER_OUT_DIR="$HARK_WHISPER_PORTABLE_DIR" bash "$ROOT/scripts/build-whisper.sh"
ensure_test_tools

# The compose files as Docker Compose reads them, with no variables set (every profile, and the
# S3 overlay on top): a typo there fails here rather than on a user's `up`.
compose="$(compose_command)"
if [ -n "$compose" ]; then
  log "checking docker/compose.yml and docker/compose.s3.yml"
  $compose -f "$ROOT/docker/compose.yml" --profile cuda config --quiet
  $compose -f "$ROOT/docker/compose.yml" -f "$ROOT/docker/compose.s3.yml" --profile cuda config --quiet
else
  log "docker compose unavailable and not buildable here (no Go): compose files not checked"
fi

cd "$ROOT"
log "typecheck, lint and formatting"
pnpm -s turbo run typecheck --output-logs=errors-only
pnpm -s turbo run lint --output-logs=errors-only
pnpm -s exec prettier --check . --log-level warn

bash "$ROOT/scripts/fuzz-api.sh"

# Every bench in its smoke mode (bench/common/smoke.sh: the same code path, smallest input, one
# round): each still builds and runs to its figures. A failure is reported again before jest and
# fails the run once the other suites have run, as the fault suite's does.
log "bench smoke runs"
smoke_rc=0
bash "$ROOT/bench/common/smoke.sh" || smoke_rc=$?

# The fault-injection suite (faults/README.md): real processes, its own Postgres cluster and
# Redis. HARK_FAULTS=0 skips it. Its result ("faults <passed>/<run>") is reported again just
# before jest, so jest's summary stays last.
faults_rc=0
faults_summary="faults skipped (HARK_FAULTS=0)"
if [ "${HARK_FAULTS:-1}" != 0 ]; then
  log "fault-injection suite"
  faults_summary_file="$(mktemp "${TMPDIR:-/tmp}/hark-faults-summary.XXXXXX")"
  FAULTS_SUMMARY_FILE="$faults_summary_file" bash "$ROOT/faults/run.sh" || faults_rc=$?
  faults_summary="$(cat "$faults_summary_file" 2>/dev/null || true)"
  rm -f "$faults_summary_file"
  [ -n "$faults_summary" ] || faults_summary="faults: no result (exit $faults_rc)"
fi

log "running tests"
start_s3proxy
trap stop_s3proxy EXIT
log "$faults_summary"
[ "$faults_rc" -eq 0 ] || log "the fault-injection suite FAILED (exit $faults_rc); see its table above"
[ "$smoke_rc" -eq 0 ] || log "bench smoke runs FAILED; see 'bench smoke:' above"
set +e
pnpm exec jest --ci --maxWorkers=2 --forceExit "$@"
jest_rc=$?
[ "$faults_rc" -eq 0 ] || exit "$faults_rc"
[ "$smoke_rc" -eq 0 ] || exit "$smoke_rc"
exit "$jest_rc"
