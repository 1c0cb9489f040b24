#!/usr/bin/env bash
# Stops what scripts/up.sh started. `--apps-only` leaves Postgres and Redis running.
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
for f in "$HARK_HOME"/run/*.pid; do
  [ -f "$f" ] || continue
  pid="$(cat "$f")"
  if kill -0 "$pid" 2>/dev/null; then
    kill -TERM "$pid" 2>/dev/null || true
    for _ in $(seq 1 150); do kill -0 "$pid" 2>/dev/null || break; sleep 0.2; done
    kill -KILL "$pid" 2>/dev/null || true
  fi
  rm -f "$f"
done
if [ "${1:-}" != "--apps-only" ]; then
  stop_postgres
  redis-cli -p "$REDIS_PORT" shutdown nosave >/dev/null 2>&1 || true
fi
