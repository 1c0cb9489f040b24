# Shared shell functions for up.sh and test.sh. Sourced, not run.
# Everything here is idempotent: a second run reuses what the first one set up.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
HARK_HOME="${HARK_HOME:-$ROOT/.hark}"
PG_PORT="${HARK_PG_PORT:-55432}"
REDIS_PORT="${HARK_REDIS_PORT:-56379}"
# Below the kernel's ephemeral range (32768-60999): a port the test run's own outgoing
# connections can never be holding when a server starts late in the run.
S3PROXY_PORT="${HARK_S3PROXY_PORT:-25490}"
S3PROXY_VERSION=2.6.0
export COREPACK_ENABLE_DOWNLOAD_PROMPT=0 TURBO_TELEMETRY_DISABLED=1 TURBO_NO_UPDATE_NOTIFIER=1
# corepack's bundled registry keys can be older than pnpm's signing keys; the lockfile pins
# integrity for every dependency, so skip corepack's own signature check of pnpm itself.
export COREPACK_INTEGRITY_KEYS=0

# Node.js: Hark runs on the 26 LTS line and its processes refuse an older Node at start-up
# (packages/core/src/node-runtime.ts, which also says why 26). Where the machine's `node` is older
# (or missing), the official build of the pinned release comes from the npm registry's
# node-linux-<arch> package (the one the `node` package installs per platform), is checked
# against the registry's integrity recorded here, and is kept under $HARK_HOME/node, so a second
# run downloads nothing. It goes first on PATH when this file is sourced, so pnpm (corepack's
# shim runs under the first `node`), turbo, jest, the bundles, the apps, the fault suite, the
# fuzzer, the benches and the CLI all run on it. A machine with this release or later uses its own.
HARK_NODE_VERSION=26.12.1
declare -gA HARK_NODE_INTEGRITY=(
  [x64]=sha512-jk5LMAmgHlPlPMWpsUrSOqNaEZG+11UNd35hWQ+p5/XGaelWuTqJ69IcAy/5xtPPN4d5ZRBNOGB6gLMCh2kL9A==
  [arm64]=sha512-8Oxs6Y7rDcKufVIM/zYRSwytj46WOrZk7yFCLTKDcs17bBjAeD9HMAqo97hMfMyxozIud0S4vZCs5WB/3iavNQ==
)

# Whether the node at $1 is HARK_NODE_VERSION or later.
node_is_recent() {
  local v
  v="$("$1" -p 'process.versions.node' 2>/dev/null)" || return 1
  [ "$(printf '%s\n' "$HARK_NODE_VERSION" "$v" | sort -V | head -n 1)" = "$HARK_NODE_VERSION" ]
}

# Downloads node-linux-<arch>@HARK_NODE_VERSION (npm pack, which reads the user's npm
# configuration: registry, proxy, CA; else curl from the registry) and unpacks its bin/node into $1
# once its SHA-512 matches the pinned integrity.
install_node() {
  local dest="$1" arch pkg want tmp tgz
  case "$(uname -m)" in
    x86_64) arch=x64 ;;
    aarch64 | arm64) arch=arm64 ;;
    *) die "no pinned Node.js build for $(uname -m): install Node.js $HARK_NODE_VERSION or later yourself" ;;
  esac
  pkg="node-linux-$arch"; want="${HARK_NODE_INTEGRITY[$arch]}"
  mkdir -p "$(dirname "$dest")"
  tmp="$(mktemp -d "$(dirname "$dest")/.fetch.XXXXXX")"
  tgz="$tmp/$pkg-$HARK_NODE_VERSION.tgz"
  log "installing Node.js $HARK_NODE_VERSION ($pkg from the npm registry) into $dest"
  if command -v npm >/dev/null 2>&1; then
    # Outside the checkout, so the project's .npmrc (pnpm settings) does not apply.
    (cd "$tmp" && npm pack --silent "$pkg@$HARK_NODE_VERSION" >/dev/null 2>&1) || true
  fi
  if [ ! -f "$tgz" ]; then
    command -v curl >/dev/null 2>&1 || { rm -rf "$tmp"; die "Node.js $HARK_NODE_VERSION: neither npm nor curl can fetch $pkg"; }
    local registry="${npm_config_registry:-https://registry.npmjs.org/}"
    curl -fsSL -o "$tgz" "${registry%/}/$pkg/-/$pkg-$HARK_NODE_VERSION.tgz" \
      || { rm -rf "$tmp"; die "Node.js $HARK_NODE_VERSION: could not download $pkg from $registry"; }
  fi
  if [ "$(sha512sum "$tgz" | cut -d' ' -f1)" != "$(printf '%s' "${want#sha512-}" | base64 -d | od -An -v -tx1 | tr -d ' \n')" ]; then
    rm -rf "$tmp"
    die "Node.js $HARK_NODE_VERSION: $pkg does not match the registry's integrity pinned in scripts/lib.sh"
  fi
  mkdir -p "$tmp/node"
  tar -xzf "$tgz" -C "$tmp/node" --strip-components=1 package/bin/node package/LICENSE
  node_is_recent "$tmp/node/bin/node" || { rm -rf "$tmp"; die "Node.js $HARK_NODE_VERSION from $pkg does not run here"; }
  rm -rf "$dest" && mv "$tmp/node" "$dest" && rm -rf "$tmp"
}

ensure_node() {
  node_is_recent node && return 0
  local dir="$HARK_HOME/node/v$HARK_NODE_VERSION"
  node_is_recent "$dir/bin/node" || install_node "$dir"
  export PATH="$dir/bin:$PATH"
}

# The folder of models and real audio (models/, audio/, eval/): HARK_SHARED_DIR, else the one beside
# this checkout, else the one beside the repository it was cloned from (a CI clone in /tmp).
shared_dir() {
  local origin d
  origin="$(git -C "$ROOT" config --get remote.origin.url 2>/dev/null || true)"
  for d in "${HARK_SHARED_DIR:-}" "$ROOT/../shared" "${origin:+$origin/../shared}"; do
    if [ -n "$d" ] && [ -d "$d/models" ]; then (cd "$d" && pwd); return; fi
  done
  echo "$(cd "$ROOT/.." && pwd)/shared"
}

# What the tests and the processes they start read (packages/testing/src/test-env.ts): the shared
# models and audio, whisper-cli as ensure_whisper builds it, and the test model.
export_test_env() {
  HARK_SHARED_DIR="$(shared_dir)"
  export HARK_SHARED_DIR
  export HARK_MODELS_DIR="${HARK_MODELS_DIR:-$HARK_SHARED_DIR/models}"
  export WHISPER_BIN="${WHISPER_BIN:-$HARK_HOME/whisper/bin/whisper-cli}"
  export WHISPER_MODEL="${WHISPER_MODEL:-$HARK_MODELS_DIR/for-tests-ggml-base.en.bin}"
  [ -f "$WHISPER_MODEL" ] || die "test model not found at $WHISPER_MODEL (set HARK_MODELS_DIR)"
}

log() { printf '\033[1;34m[hark]\033[0m %s\n' "$*" >&2; }
die() { printf '\033[1;31m[hark] %s\033[0m\n' "$*" >&2; exit 1; }

# Installs, as root, the Debian packages of the given `command:package` pairs whose command is
# missing (`postgres` is looked up under /usr/lib/postgresql, where Debian puts it; a "command"
# that is an absolute path is a file the package installs).
ensure_debian_packages() {
  local want=() cmd pkg pair
  for pair in "$@"; do
    cmd="${pair%%:*}"; pkg="${pair#*:}"
    if [ "$cmd" = postgres ]; then
      ls /usr/lib/postgresql/*/bin/postgres >/dev/null 2>&1 && continue
    elif [[ "$cmd" == /* ]]; then
      [ -e "$cmd" ] && continue
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
# the CA certificates for downloads (curl, python3), python3 for the VAD model (scripts/vad-model.sh),
# and the audio tools the tests use to make speech.
ensure_system_packages() {
  ensure_debian_packages postgres:postgresql redis-server:redis-server ffmpeg:ffmpeg ffprobe:ffmpeg \
    cmake:cmake g++:g++ make:make patch:patch curl:curl /etc/ssl/certs/ca-certificates.crt:ca-certificates \
    python3:python3 espeak-ng:espeak-ng sox:sox flock:util-linux prlimit:util-linux
}

# What only the test command needs, so scripts/up.sh does not install it: the browser the test of
# the try page drives (puppeteer-core, headless; Debian's chromium), and GNU time, which measures
# the media tools' peak memory in the hostile-input tests.
ensure_test_tools() {
  ensure_debian_packages chromium:chromium /usr/bin/time:time
}

# pnpm through corepack: the machine's corepack, or where its Node ships none (25 and later), this
# release from the npm registry (the Docker images install the same).
COREPACK_VERSION=0.36.0
ensure_pnpm() {
  if ! command -v pnpm >/dev/null 2>&1 || ! pnpm --version >/dev/null 2>&1; then
    log "enabling pnpm through corepack"
    if ! corepack enable >/dev/null 2>&1; then
      npm install -g "corepack@$COREPACK_VERSION" >/dev/null && corepack enable
    fi
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

# S3Proxy (Maven Central, org.gaul:s3proxy, jar-with-dependencies), cached under .hark/ and
# checked against Maven Central's SHA-1 of it.
ensure_s3proxy_jar() {
  local dir="$HARK_HOME/s3proxy" url
  S3PROXY_JAR="$dir/s3proxy-$S3PROXY_VERSION.jar"
  [ -f "$S3PROXY_JAR" ] && return 0
  mkdir -p "$dir"
  url="https://repo1.maven.org/maven2/org/gaul/s3proxy/$S3PROXY_VERSION/s3proxy-$S3PROXY_VERSION-jar-with-dependencies.jar"
  log "downloading S3Proxy $S3PROXY_VERSION"
  curl -fsSL -o "$S3PROXY_JAR.tmp" "$url"
  [ "$(sha1sum "$S3PROXY_JAR.tmp" | cut -d' ' -f1)" = "$(curl -fsSL "$url.sha1" | cut -c1-40)" ] \
    || { rm -f "$S3PROXY_JAR.tmp"; die "S3Proxy download does not match Maven Central's checksum"; }
  mv "$S3PROXY_JAR.tmp" "$S3PROXY_JAR"
}

# What runs S3Proxy: Java (Debian's default: 17 on bookworm, 21 on trixie, which has no
# openjdk-17) and the jar. Sets S3PROXY_JAVA and S3PROXY_JAR.
s3proxy_runtime() {
  ensure_debian_packages java:default-jre-headless
  ensure_s3proxy_jar
  S3PROXY_JAVA=java
  [ -x /usr/lib/jvm/java-17-openjdk-amd64/bin/java ] && S3PROXY_JAVA=/usr/lib/jvm/java-17-openjdk-amd64/bin/java
  return 0
}

# Starts S3Proxy on 127.0.0.1:$S3PROXY_PORT with its filesystem backend in a fresh folder under
# .hark/, with credentials made up for this run, and exports what the S3 tests read:
# HARK_TEST_S3_ENDPOINT and the usual AWS variables. Stop it with stop_s3proxy (trap it).
start_s3proxy() {
  s3proxy_runtime
  local dir="$HARK_HOME/s3proxy" java="$S3PROXY_JAVA"
  stop_s3proxy
  rm -rf "$dir/data" && mkdir -p "$dir/data"
  AWS_ACCESS_KEY_ID="hark-test-$(head -c 6 /dev/urandom | od -An -tx1 | tr -d ' \n')"
  AWS_SECRET_ACCESS_KEY="$(head -c 24 /dev/urandom | base64 | tr -d '\n/+=')"
  # A port someone else holds ("Failed to bind") moves it to the next one, up to 5 tries.
  local try up
  for try in 1 2 3 4 5; do
    (umask 077 && printf '%s\n' \
      "s3proxy.endpoint=http://127.0.0.1:$S3PROXY_PORT" \
      "s3proxy.authorization=aws-v2-or-v4" \
      "s3proxy.identity=$AWS_ACCESS_KEY_ID" \
      "s3proxy.credential=$AWS_SECRET_ACCESS_KEY" \
      "jclouds.provider=filesystem" \
      "jclouds.identity=hark" \
      "jclouds.credential=hark" \
      "jclouds.filesystem.basedir=$dir/data" > "$dir/s3proxy.properties")
    log "starting S3Proxy on 127.0.0.1:$S3PROXY_PORT"
    "$java" -jar "$S3PROXY_JAR" --properties "$dir/s3proxy.properties" >"$dir/s3proxy.log" 2>&1 &
    echo $! > "$dir/s3proxy.pid"
    up=
    for _ in $(seq 1 120); do
      # Any HTTP answer (403 without credentials) means it is listening.
      [ "$(curl -s --max-time 2 -o /dev/null -w '%{http_code}' "http://127.0.0.1:$S3PROXY_PORT/" || true)" != 000 ] && { up=1; break; }
      kill -0 "$(cat "$dir/s3proxy.pid")" 2>/dev/null || break
      sleep 0.25
    done
    [ -n "$up" ] && break
    if grep -q "Failed to bind" "$dir/s3proxy.log" && [ "$try" -lt 5 ]; then
      log "S3Proxy: 127.0.0.1:$S3PROXY_PORT is taken, trying the next port"
      S3PROXY_PORT=$((S3PROXY_PORT + 1))
      continue
    fi
    die "S3Proxy did not start: $(tail -n 5 "$dir/s3proxy.log")"
  done
  export HARK_TEST_S3_ENDPOINT="http://127.0.0.1:$S3PROXY_PORT" AWS_ACCESS_KEY_ID AWS_SECRET_ACCESS_KEY AWS_REGION=us-east-1
}

# Stops the S3Proxy start_s3proxy started (its own pid only) and removes its data.
stop_s3proxy() {
  local pidfile="$HARK_HOME/s3proxy/s3proxy.pid" pid
  [ -f "$pidfile" ] || return 0
  pid="$(cat "$pidfile")"
  if kill -0 "$pid" 2>/dev/null; then
    kill "$pid" 2>/dev/null || true
    for _ in $(seq 1 40); do kill -0 "$pid" 2>/dev/null || break; sleep 0.25; done
    kill -9 "$pid" 2>/dev/null || true
  fi
  rm -f "$pidfile"
  rm -rf "$HARK_HOME/s3proxy/data"
}

# A Python venv at $1 with the PyPI package $2 pinned at version $3, for tools the tests drive
# (schemathesis, openai). Made afresh (python3-venv installed first, as root) when the installed
# version differs; otherwise nothing is done. pip's output goes to stderr.
ensure_venv() {
  local venv="$1" pkg="$2" version="$3"
  if [ "$("$venv/bin/python" -c "import importlib.metadata as m; print(m.version('$pkg'))" 2>/dev/null || true)" = "$version" ]; then
    return 0
  fi
  if ! python3 -m venv --help >/dev/null 2>&1 || ! python3 -c 'import ensurepip' >/dev/null 2>&1; then
    [ "$(id -u)" -eq 0 ] || die "$pkg: python3 venv support missing (apt-get install python3-venv)"
    log "installing python3-venv"
    apt-get update -qq >/dev/null
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends python3-venv >/dev/null
  fi
  log "installing $pkg $version (Python) into $venv"
  rm -rf "$venv"
  python3 -m venv "$venv"
  "$venv/bin/pip" install -q --disable-pip-version-check "$pkg==$version" >&2
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
  # The VAD model for WHISPER_VAD=on (and its tests): 885 kB made from a PyPI wheel, once. Off by
  # default, so a machine that cannot reach PyPI still comes up (the VAD tests then fail, saying so).
  bash "$ROOT/scripts/vad-model.sh" || log "VAD model not made (scripts/vad-model.sh failed): WHISPER_VAD=on will refuse to start"
}

# Docker Compose v2, for checking docker/compose*.yml where Docker is not installed (CI): the
# `docker compose` plugin when there is one, else a standalone build of the pinned release from
# the Go module proxy into $HARK_HOME/tools (once; a few minutes, then the Go caches make it
# seconds). Prints the command to run it, or nothing when neither is possible (no Go, no proxy).
COMPOSE_VERSION=v2.40.3
compose_command() {
  if docker compose version >/dev/null 2>&1; then
    echo "docker compose"
    return
  fi
  local bin="$HARK_HOME/tools/docker-compose-$COMPOSE_VERSION"
  if [ ! -x "$bin" ] && command -v go >/dev/null 2>&1; then
    log "building docker compose $COMPOSE_VERSION from the Go module proxy (once)"
    # `go install` refuses a module whose go.mod has exclude directives: build it as the main module.
    local module="github.com/docker/compose/v2@$COMPOSE_VERSION"
    if go mod download "$module" >/dev/null 2>&1; then
      local src
      src="$(go env GOMODCACHE)/$module"
      mkdir -p "$HARK_HOME/tools"
      (cd "$src" && GOFLAGS=-mod=mod go build -o "$bin.tmp" ./cmd) >/dev/null 2>&1 && mv "$bin.tmp" "$bin"
    fi
  fi
  [ -x "$bin" ] && echo "$bin"
  return 0
}

# Every script that sources this file runs on the pinned Node (or the machine's, if recent).
ensure_node
