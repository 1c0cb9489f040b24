#!/usr/bin/env bash
# Every bench in its smoke mode (`run.sh --smoke`: the same code path, the smallest input, one
# round, seconds), so a bench that stops running fails the test command instead of rotting until
# someone next wants figures. A bench passes when its run.sh exits 0 and printed each of its
# figure lines below; the figures themselves are never judged (a shared machine decides them).
# Every bench runs even after one fails; the exit status is 1 if any failed.
#   bash bench/common/smoke.sh              all benches
#   bash bench/common/smoke.sh api der      some of them
# Output of each run goes to .hark/bench/smoke-<name>.log; the summary names the failures.
source "$(dirname "${BASH_SOURCE[0]}")/../../scripts/lib.sh"
set +e # every bench runs; their results are gathered below
LOGS="$HARK_HOME/bench"
# The shared models and audio wherever this clone is (a CI clone in /tmp too), as the test command
# finds them; bench/der reads its excerpts from HARK_EVAL_DIR.
HARK_SHARED_DIR="$(shared_dir)"
export HARK_SHARED_DIR
export HARK_MODELS_DIR="${HARK_MODELS_DIR:-$HARK_SHARED_DIR/models}"
export HARK_EVAL_DIR="${HARK_EVAL_DIR:-$HARK_SHARED_DIR/eval/diar}"

# The lines (extended regexes, one per line) each bench's smoke run must print: its figures.
figures() {
  case "$1" in
    api)
      echo '^1 hark api +[0-9.]+ +[0-9.]+'
      echo '^1 bare express +[0-9.]+ +[0-9.]+'
      echo '^ratio hark/bare req/s \(median of rounds\): [0-9.]+'
      echo '^hark p99 \(median of rounds\): [0-9.]+ ms' ;;
    uploads)
      echo "hark API, local driver: [0-9.]+ MB/s, API peak RSS [0-9]+ MB"
      echo "fsync'ed disk write: +[0-9.]+ MB/s"
      echo 'ratio: +[0-9.]+' ;;
    webhooks)
      echo '^  p50 [0-9.]+ ms   p99 [0-9.]+ ms'
      echo '^  [0-9]+ notices/s received' ;;
    pipeline)
      echo 'bare whisper-cli: +[0-9.]+ s'
      echo 'hark create -> done: +[0-9.]+ s'
      echo 'ratio: +[0-9.]+'
      echo 'worker peak RSS: +[0-9]+ MB' ;;
    engine)
      echo '^  hark +[0-9.]+ +[0-9.]+ +[0-9.]+ +[0-9]+'
      echo '^  faster-whisper +[0-9.]+ +[0-9.]+'
      echo '^  10 s file +[0-9.]+ s +[0-9.]+ s'
      echo 'worker \(node\) peak RSS: [0-9]+ MB' ;;
    der)
      echo '^classic +DER +[0-9.]+% \(collar 0\)'
      echo '^neural +DER +[0-9.]+% \(collar 0\)' ;;
    openai-memory)
      echo 'stored and waiting: [0-9]+ after [0-9.]+ s'
      echo 'API RSS: [0-9]+ MB idle, [0-9]+ MB while all wait, peak [0-9]+ MB' ;;
    *) return 1 ;;
  esac
}

# How each bench is started in its smoke mode.
smoke_command() {
  case "$1" in
    der) echo "pnpm -s --filter @hark/bench-der bench -- --smoke" ;;
    *) echo "bash bench/$1/run.sh --smoke" ;;
  esac
}

benches=("$@")
[ ${#benches[@]} -gt 0 ] || benches=(api uploads webhooks pipeline engine der openai-memory)
mkdir -p "$LOGS"
failed=()
summary=()
started_all=$SECONDS
for name in "${benches[@]}"; do
  if ! figures "$name" >/dev/null; then
    echo "bench smoke: no bench named $name" >&2
    failed+=("$name")
    summary+=("$name: no such bench")
    continue
  fi
  log="$LOGS/smoke-$name.log"
  started=$SECONDS
  echo "bench smoke: $name ($(smoke_command "$name"))" >&2
  # shellcheck disable=SC2046 # the command, word-split on purpose (no quoted arguments in it)
  (cd "$ROOT" && $(smoke_command "$name")) >"$log" 2>&1
  rc=$?
  missing=()
  while IFS= read -r pattern; do
    grep -Eq -- "$pattern" "$log" || missing+=("$pattern")
  done < <(figures "$name")
  took=$((SECONDS - started))
  if [ "$rc" -ne 0 ] || [ ${#missing[@]} -gt 0 ]; then
    failed+=("$name")
    summary+=("$name FAILED in ${took} s (exit $rc, ${#missing[@]} figure line(s) missing; log: $log)")
    echo "bench smoke: $name FAILED (exit $rc); last lines of $log:" >&2
    tail -n 20 "$log" | sed 's/^/    /' >&2
    for p in "${missing[@]}"; do echo "bench smoke: $name printed no line matching: $p" >&2; done
  else
    summary+=("$name ok in ${took} s")
  fi
done
echo "bench smoke: $((${#benches[@]} - ${#failed[@]}))/${#benches[@]} ran to their figures in $((SECONDS - started_all)) s" >&2
for line in "${summary[@]}"; do echo "bench smoke:   $line" >&2; done
[ ${#failed[@]} -eq 0 ]
