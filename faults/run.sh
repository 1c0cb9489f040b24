#!/usr/bin/env bash
# pnpm test:faults — fault-injection suite against real processes (see faults/README.md): the
# jest project `faults`, one scenario per file (faults/scenarios/*.fault.ts), run in band.
# Runs on its own Postgres cluster (data under .hark/pg-faults, port $FAULTS_PG_PORT, default
# 25442: below the kernel's ephemeral range, so no outgoing connection holds it when scenario 5
# stops and starts it), and each scenario on its own redis-server on a free port (flushed and
# restarted by the scenarios). Nobody else uses either.
# FAULTS_ONLY=2,7 runs some scenarios (by number; 1 also selects 1b); extra arguments go to jest.
# FAULTS_SUMMARY_FILE=path: "faults <passed>/<total>" is written there (scripts/test.sh prints it).
export HARK_PG_PORT="${FAULTS_PG_PORT:-25442}"
source "$(dirname "${BASH_SOURCE[0]}")/../scripts/lib.sh"
export HARK_PG_DATA="$HARK_HOME/pg-faults"
ensure_system_packages
ensure_pnpm
install_deps
start_postgres hark_faults
# A fresh database every run: leftovers of an earlier (interrupted) run would be picked up by the
# reconciler scenarios and their dead audio URLs would skew the figures.
if [ -z "${HARK_EXTERNAL_DATABASE_URL:-}" ]; then
  as_pg "$(pg_bin)/dropdb" -h 127.0.0.1 -p "$PG_PORT" -U hark --if-exists hark_faults
  as_pg "$(pg_bin)/createdb" -h 127.0.0.1 -p "$PG_PORT" -U hark hark_faults
  # How scenario 5 stops and restarts this cluster.
  export FAULTS_PG_BIN="$(pg_bin)" FAULTS_PG_DATA="$HARK_PG_DATA" FAULTS_PG_OPTS="$(pg_server_opts)"
  [ "$(id -u)" -eq 0 ] && export FAULTS_PG_RUNUSER=postgres
  trap stop_postgres EXIT
fi
build_all
migrate_db
ensure_whisper
# The object-store scenarios (9a, 9b) start, stop and restart an S3Proxy of their own.
s3proxy_runtime
export FAULTS_S3PROXY_JAR="$S3PROXY_JAR" FAULTS_JAVA="$S3PROXY_JAVA"
export HARK_SECRET="${HARK_SECRET:-faults-secret-$(head -c 12 /dev/urandom | od -An -tx1 | tr -d ' \n')}"
export_test_env

pattern='faults/scenarios/'
if [ -n "${FAULTS_ONLY:-}" ]; then pattern="faults/scenarios/(${FAULTS_ONLY//,/|})[a-z]?-"; fi
results="$(mktemp "${TMPDIR:-/tmp}/hark-faults-jest.XXXXXX")"
cd "$ROOT"
set +e
HARK_FAULTS_SUITE=1 pnpm exec jest --selectProjects faults --runInBand --ci --forceExit \
  --json --outputFile="$results" --testPathPatterns "$pattern" "$@"
rc=$?
set -e
# Scenarios passed / run; a file that failed to load counts as one failed scenario.
summary="$(node -e '
  const r = JSON.parse(require("fs").readFileSync(process.argv[1], "utf8") || "{}");
  console.log(`faults ${r.numPassedTests ?? 0}/${(r.numTotalTests ?? 0) + (r.numRuntimeErrorTestSuites ?? 0)}`);
' "$results" 2>/dev/null || echo "faults 0/0 (no jest result)")"
rm -f "$results"
echo "$summary"
[ -z "${FAULTS_SUMMARY_FILE:-}" ] || echo "$summary" > "$FAULTS_SUMMARY_FILE"
exit "$rc"
