# Shared shell functions for up.sh and test.sh. Sourced, not run.
# Everything here is idempotent: a second run reuses what the first one set up.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
HARK_HOME="${HARK_HOME:-$ROOT/.hark}"
PG_PORT="${HARK_PG_PORT:-55432}"
REDIS_PORT="${HARK_REDIS_PORT:-56379}"
export COREPACK_ENABLE_DOWNLOAD_PROMPT=0 TURBO_TELEMETRY_DISABLED=1 TURBO_NO_UPDATE_NOTIFIER=1
# corepack's bundled registry keys can be older than pnpm's signing keys; the lockfile pins
# integrity for every dependency, so skip corepack's own signature check of pnpm itself.
export COREPACK_INTEGRITY_KEYS=0

log() { printf '\033[1;34m[hark]\033[0m %s\n' "$*" >&2; }
die() { printf '\033[1;31m[hark] %s\033[0m\n' "$*" >&2; exit 1; }

# Installs, as root, the Debian packages of the given `command:package` pairs whose command is
# missing (`postgres` is looked up under /usr/lib/postgresql, where Debian puts it).
ensure_debian_packages() {
  local want=() cmd pkg pair
  for pair in "$@"; do
    cmd="${pair%%:*}"; pkg="${pair#*:}"
    if [ "$cmd" = postgres ]; then
      ls /usr/lib/postgresql/*/bin/postgres >/dev/null 2>&1 && continue
    elif command -v "$cmd" >/dev/null 2>&1; then continue; fi
    want+=("$pkg")
  done
  [ ${#want[@]} -eq 0 ] && return 0
  if [ "$(id -u)" -ne 0 ]; then
    die "missing packages: ${want[*]} (install them with apt-get, or run as root)"
  fi
  log "installing ${want[*]}"
  apt-get update -qq >/dev/null
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${want[@]}" >/dev/null
}

# Debian packages the service needs: Postgres, Redis, ffmpeg, a C++ toolchain for whisper.cpp,
# and the audio tools the tests use to make speech.
ensure_system_packages() {
  ensure_debian_packages postgres:postgresql redis-server:redis-server ffmpeg:ffmpeg ffprobe:ffmpeg \
    cmake:cmake g++:g++ make:make curl:curl espeak-ng:espeak-ng sox:sox flock:util-linux
}

# The browser the test of the try page drives (puppeteer-core, headless): Debian's chromium.
# Only the test command needs it, so scripts/up.sh does not install it.
ensure_test_browser() {
  ensure_debian_packages chromium:chromium
}

ensure_pnpm() {
  if ! command -v pnpm >/dev/null 2>&1 || ! pnpm --version >/dev/null 2>&1; then
    log "enabling pnpm through corepack"
    corepack enable >/dev/null 2>&1 || npm install -g corepack >/dev/null && corepack enable
  fi
}

install_deps() {
  log "installing dependencies"
  (cd "$ROOT" && pnpm install --frozen-lockfile --reporter=silent)
}

pg_bin() { ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -n 1; }

# Runs a command as the postgres OS user when we are root (Postgres refuses to run as root).
as_pg() {
  if [ "$(id -u)" -eq 0 ]; then runuser -u postgres -- "$@"; else "$@"; fi
}

# Server options of the private Postgres (also used by the fault suite to restart its own).
pg_server_opts() {
  echo "-p $PG_PORT -k ${HARK_PG_DATA:-$HARK_HOME/pg} -c listen_addresses=127.0.0.1 -c fsync=${HARK_PG_FSYNC:-on} -c max_connections=300"
}

# Starts a private Postgres on 127.0.0.1:$PG_PORT with data under $HARK_HOME/pg (or $HARK_PG_DATA),
# unless HARK_EXTERNAL_DATABASE_URL is given. Exports DATABASE_URL for database $1.
start_postgres() {
  local db="$1"
  if [ -n "${HARK_EXTERNAL_DATABASE_URL:-}" ]; then export DATABASE_URL="$HARK_EXTERNAL_DATABASE_URL"; return 0; fi
  local bin data; bin="$(pg_bin)"; data="${HARK_PG_DATA:-$HARK_HOME/pg}"
  [ -n "$bin" ] || die "PostgreSQL server binaries not found"
  mkdir -p "$HARK_HOME"
  if [ ! -f "$data/PG_VERSION" ]; then
    log "initialising Postgres in $data"
    mkdir -p "$data"
    [ "$(id -u)" -eq 0 ] && chown postgres:postgres "$data"
    as_pg "$bin/initdb" -D "$data" -U hark --auth=trust -E UTF8 >/dev/null
  fi
  if ! as_pg "$bin/pg_ctl" -D "$data" status >/dev/null 2>&1; then
    log "starting Postgres on 127.0.0.1:$PG_PORT"
    as_pg "$bin/pg_ctl" -D "$data" -l "$data/server.log" -w -t 60 -o "$(pg_server_opts)" start >/dev/null
  fi
  if ! as_pg "$bin/psql" -h 127.0.0.1 -p "$PG_PORT" -U hark -d postgres -tAc "SELECT 1 FROM pg_database WHERE datname='$db'" | grep -q 1; then
    as_pg "$bin/createdb" -h 127.0.0.1 -p "$PG_PORT" -U hark "$db"
  fi
  export DATABASE_URL="postgresql://hark@127.0.0.1:$PG_PORT/$db"
}

stop_postgres() {
  local bin; bin="$(pg_bin)"
  as_pg "$bin/pg_ctl" -D "${HARK_PG_DATA:-$HARK_HOME/pg}" -m fast stop >/dev/null 2>&1 || true
}

# Starts a private Redis on 127.0.0.1:$REDIS_PORT unless REDIS_URL is given.
start_redis() {
  if [ -n "${HARK_EXTERNAL_REDIS_URL:-}" ]; then export REDIS_URL="$HARK_EXTERNAL_REDIS_URL"; return 0; fi
  mkdir -p "$HARK_HOME/redis"
  if ! redis-cli -p "$REDIS_PORT" ping >/dev/null 2>&1; then
    log "starting Redis on 127.0.0.1:$REDIS_PORT"
    redis-server --port "$REDIS_PORT" --bind 127.0.0.1 --dir "$HARK_HOME/redis" --daemonize yes \
      --logfile "$HARK_HOME/redis/redis.log" --save "" --appendonly no --maxmemory-policy noeviction >/dev/null
    for _ in $(seq 1 50); do redis-cli -p "$REDIS_PORT" ping >/dev/null 2>&1 && break; sleep 0.1; done
  fi
  export REDIS_URL="redis://127.0.0.1:$REDIS_PORT"
}

# A stable operator secret for this checkout, created once.
ensure_secret() {
  if [ -z "${HARK_SECRET:-}" ]; then
    mkdir -p "$HARK_HOME"
    [ -f "$HARK_HOME/secret" ] || (umask 077 && head -c 32 /dev/urandom | base64 | tr -d '\n' > "$HARK_HOME/secret")
    HARK_SECRET="$(cat "$HARK_HOME/secret")"
    export HARK_SECRET
  fi
}

build_all() {
  log "building"
  (cd "$ROOT" && pnpm -s turbo run build --output-logs=errors-only >/dev/null)
}

migrate_db() {
  (cd "$ROOT" && node packages/db/dist/migrate-cli.js)
}

# Everything a run against real services needs: packages, dependencies, Postgres (database $1)
# and Redis, the build, the migrations.
prepare_stack() {
  ensure_system_packages
  ensure_pnpm
  install_deps
  start_postgres "$1"
  start_redis
  build_all
  migrate_db
}

ensure_whisper() {
  bash "$ROOT/scripts/build-whisper.sh"
}
