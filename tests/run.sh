#!/usr/bin/env bash
# Runs the whole clothbench test suite: configures the build if needed, builds
# (warnings are errors here), runs every CUnit suite through meson, and ends with
# one summary line "tests: N passed, N failed" summed over every suite.
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
echo "tests: $passed passed, $failed failed"
exit $rc
