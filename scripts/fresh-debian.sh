#!/usr/bin/env bash
# Runs the README's commands on a bare Debian (debootstrap's minbase: no python3, no CA bundle, no
# compiler, no database; bookworm, or HARK_DEBIAN_SUITE=trixie), as the README promises: a fresh
# Debian machine with an older Node (Node 20 here), on which the scripts install and use the Node
# release Hark runs on (scripts/lib.sh). The root is made in DIR (default /tmp/hark-fresh-debian, made
# anew), this machine's Node 20 with npm and corepack is copied in (nothing else of this machine),
# HEAD of this checkout is cloned into DIR/work/main, and ../shared is bound read-only beside it.
# Needs root (debootstrap, chroot, mounts) and the Debian mirror. The command runs with an empty
# environment except for the CA bundle variables this machine sets (so an egress proxy's
# certificate still works).
#   sudo bash scripts/fresh-debian.sh [DIR] [COMMAND]
#   default COMMAND: bash scripts/up.sh && bash scripts/down.sh     (.ci/run for the test command)
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
DIR="$(realpath -m "${1:-/tmp/hark-fresh-debian}")"
COMMAND="${2:-bash scripts/up.sh && bash scripts/down.sh}"
SUITE="${HARK_DEBIAN_SUITE:-bookworm}"
SHARED="$(cd "$ROOT/../shared" && pwd)"
[ "$(id -u)" -eq 0 ] || { echo "fresh-debian: run as root" >&2; exit 1; }
node --version | grep -q '^v20\.' || { echo "fresh-debian: needs this machine's Node 20" >&2; exit 1; }
command -v debootstrap >/dev/null || { apt-get update -qq && apt-get install -y -qq debootstrap >/dev/null; }

unmount_all() {
  local m
  for m in $(awk -v d="$DIR/" 'index($2, d) == 1 { print $2 }' /proc/mounts | sort -r); do
    umount -l "$m" 2>/dev/null || true
  done
}
trap unmount_all EXIT
unmount_all
rm -rf "$DIR"
MIRROR="${HARK_DEBIAN_MIRROR:-http://deb.debian.org/debian}"
debootstrap --variant=minbase "$SUITE" "$DIR" "$MIRROR" >/dev/null
cp /etc/resolv.conf "$DIR/etc/resolv.conf"
# The suite's updates and security archives too, as an installed Debian has them.
rm -f "$DIR/etc/apt/sources.list"
cat > "$DIR/etc/apt/sources.list.d/debian.sources" <<SOURCES
Types: deb
URIs: $MIRROR
Suites: $SUITE $SUITE-updates
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg

Types: deb
URIs: ${MIRROR%/debian}/debian-security
Suites: $SUITE-security
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg
SOURCES

# Node 20 as Debian's nodesource package lays it out (the README's one precondition).
NODE="$(command -v node)"
NODE_MODULES="$(dirname "$(readlink -f "$(command -v npm)")")/../.."
mkdir -p "$DIR/usr/lib/node_modules"
cp "$NODE" "$DIR/usr/bin/node"
cp -a "$NODE_MODULES/npm" "$NODE_MODULES/corepack" "$DIR/usr/lib/node_modules/"
ln -sf ../lib/node_modules/npm/bin/npm-cli.js "$DIR/usr/bin/npm"
ln -sf ../lib/node_modules/npm/bin/npx-cli.js "$DIR/usr/bin/npx"
ln -sf ../lib/node_modules/corepack/dist/corepack.js "$DIR/usr/bin/corepack"

# This network's CA bundle, outside /etc/ssl so that the scripts still find Debian's missing.
# Local certificates go where ca-certificates will add them to the bundle it makes.
ENV=(HOME=/root PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin LANG=C.UTF-8 TERM=dumb)
if [ -n "${SSL_CERT_FILE:-}" ] && [ -f "$SSL_CERT_FILE" ]; then
  cp "$SSL_CERT_FILE" "$DIR/etc/host-ca.crt"
  for v in NODE_EXTRA_CA_CERTS SSL_CERT_FILE PIP_CERT REQUESTS_CA_BUNDLE CURL_CA_BUNDLE GIT_SSL_CAINFO; do
    ENV+=("$v=/etc/host-ca.crt")
  done
fi
if compgen -G '/usr/local/share/ca-certificates/*' >/dev/null; then
  mkdir -p "$DIR/usr/local/share/ca-certificates"
  cp /usr/local/share/ca-certificates/* "$DIR/usr/local/share/ca-certificates/"
fi

mkdir -p "$DIR/work/main" "$DIR/work/shared"
git clone -q "$ROOT" "$DIR/work/main"
mount -t proc proc "$DIR/proc"
mount --rbind /sys "$DIR/sys"
mount --rbind /dev "$DIR/dev"
mount --bind "$SHARED" "$DIR/work/shared"
mount -o remount,bind,ro "$DIR/work/shared"

# Runs a command line in the checkout inside the root, with only ENV.
in_root() { chroot "$DIR" /usr/bin/env -i "${ENV[@]}" bash -c "cd /work/main && $1"; }

echo "fresh-debian: $(git -C "$ROOT" log -1 --format='%h %s' | cut -c1-80) in $DIR ($SUITE): $COMMAND" >&2
start=$(date +%s)
status=0
in_root "$COMMAND" || status=$?
echo "fresh-debian: exit $status after $(($(date +%s) - start)) s" >&2
# Whatever the command left running (a failed run's Postgres or Redis) is stopped before
# unmounting: down.sh, then any process whose root is still DIR.
in_root 'bash scripts/down.sh' >/dev/null 2>&1 || true
for p in /proc/[0-9]*; do
  [ "$(readlink "$p/root" 2>/dev/null)" = "$DIR" ] && kill -KILL "${p#/proc/}" 2>/dev/null
done
exit "$status"
