#!/usr/bin/env bash
# Runs the whole clothbench test suite: configures the build if needed, builds
# (warnings are errors here), runs every CUnit suite through meson, and ends with
# one summary line "tests: N passed, N failed" summed over every suite. Then the libFuzzer
# harnesses (tests/fuzz/run.sh: clang, build-fuzz) run CB_FUZZ_SECONDS each (default 30;
# 0: none), each counted as one test in the summary.
#   CB_BUILD=build-asan CB_MESON_ARGS="-Db_sanitize=address,undefined" bash tests/run.sh
set -uo pipefail
cd "$(dirname "$0")/.."
build=${CB_BUILD:-build}
if [ ! -f "$build/build.ninja" ]; then
  # shellcheck disable=SC2086
  meson setup "$build" -Dwerror=true ${CB_MESON_ARGS:-} || exit 1
fi
ninja -C "$build" || exit 1
meson test -C "$build" --print-errorlogs --num-processes 1 "$@"
rc=$?
log="$build/meson-logs/testlog.txt"
# CUnit's per-suite summary rows: "tests  Total Ran Passed Failed Inactive"
passed=$(awk '$1 == "tests" && NF >= 6 { s += $4 } END { print s + 0 }' "$log")
failed=$(awk '$1 == "tests" && NF >= 6 { s += $5 } END { print s + 0 }' "$log")
[ "$rc" -ne 0 ] && [ "$failed" -eq 0 ] && failed=1   # a suite crashed before its summary
if [ "${CB_FUZZ_SECONDS:-30}" != 0 ]; then
  fuzz_out=$(bash tests/fuzz/run.sh)
  frc=$?
  echo "$fuzz_out"
  fp=$(echo "$fuzz_out" | awk '$1 == "fuzz:" { print $2 }' | tail -1)
  ff=$(echo "$fuzz_out" | awk '$1 == "fuzz:" { print $4 }' | tail -1)
  passed=$((passed + ${fp:-0}))
  failed=$((failed + ${ff:-1}))
  [ "$frc" -ne 0 ] && rc=1
fi
echo "tests: $passed passed, $failed failed"
exit $rc
