#!/usr/bin/env bash
# tests/fuzz/run.sh — builds the libFuzzer harnesses (clang, -fsanitize=fuzzer,address,undefined,
# in build-fuzz) and runs each for CB_FUZZ_SECONDS (default 30) from its seeds: data/ and the
# regression corpus tests/fuzz/regress/<target>/. An input that crashes is written to
# build-fuzz/crash-<target>-*; copy it into tests/fuzz/regress/<target>/ once fixed, so that
# tests/test_fuzz_regress.c replays it on every test run. Ends with one line
# "fuzz: N passed, N failed" (tests/run.sh adds it to its summary). Out of memory (libFuzzer's
# -rss_limit_mb, -malloc_limit_mb) counts as a failure. Without clang: fails in
# CI (CI=true), skipped with a message elsewhere.
set -uo pipefail
cd "$(dirname "$0")/../.."
secs=${CB_FUZZ_SECONDS:-30}
if ! command -v clang >/dev/null; then
  echo "fuzz: clang not found (apt install clang)"
  if [ "${CI:-}" = true ]; then echo "fuzz: 0 passed, 1 failed"; exit 1; fi
  echo "fuzz: 0 passed, 0 failed (skipped)"; exit 0
fi
build=build-fuzz
if [ ! -f "$build/build.ninja" ]; then
  CC=clang meson setup "$build" -Dfuzz=true -Db_sanitize=address,undefined -Db_lundef=false \
      -Dbuildtype=debugoptimized >/dev/null || { echo "fuzz: 0 passed, 1 failed (meson setup)"; exit 1; }
fi
ninja -C "$build" tests/fuzz/fuzz_scene tests/fuzz/fuzz_obj tests/fuzz/fuzz_tetgen >/dev/null ||
  { echo "fuzz: 0 passed, 1 failed (build)"; exit 1; }
export UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1 ASAN_OPTIONS=detect_leaks=1
pass=0; fail=0
for t in scene obj tetgen; do
  work=$build/fuzz-$t; rm -rf "$work"; mkdir -p "$work/corpus"
  cp tests/fuzz/regress/$t/* "$work/corpus/" 2>/dev/null || true
  case $t in
    scene) cp data/scenes/*.yaml "$work/corpus/" ;;
    obj) cp data/meshes/*.obj "$work/corpus/" ;;
  esac
  log=$work/log.txt
  # out of memory is a failure: more than 2 GB resident, or one allocation above 512 MB
  # (a reader must allocate in proportion to its input, not to a count its header claims)
  TMPDIR=$work "$build/tests/fuzz/fuzz_$t" "$work/corpus" -max_total_time="$secs" -max_len=4096 \
      -rss_limit_mb=2048 -malloc_limit_mb=512 \
      -artifact_prefix="$build/crash-$t-" -print_final_stats=1 >"$log" 2>&1
  rc=$?
  stats=$(grep -E "^stat::number_of_executed_units|^#[0-9]+.*DONE" "$log" | tail -1)
  if [ $rc -eq 0 ]; then
    pass=$((pass + 1)); echo "fuzz $t: ok, $secs s: $stats"
  else
    fail=$((fail + 1)); echo "fuzz $t: FAILED (exit $rc); the input is in $build/crash-$t-*; log: $log"
    tail -20 "$log"
  fi
done
echo "fuzz: $pass passed, $fail failed"
[ $fail -eq 0 ]
