#!/usr/bin/env bash
# The default job: build clothbench, run the default comparison (experiments/default.yaml:
# drape_sphere with every registered solver, two worker processes), then plot the runs and
# print the comparison table. Writes runs/default/{*.h5, index.csv, index.h5, runs.png,
# summary.png, table.csv, table.md, table.tex}. Rerunning skips the runs already done.
# Exit status: 0 when every run ended ok, 1 otherwise (the plots and table are made anyway).
set -uo pipefail
cd "$(dirname "$0")/.."
PY=${CB_PYTHON:-/usr/bin/python3}
[ -f build/build.ninja ] || meson setup build || exit 2
ninja -C build || exit 2
status=0
build/clothbench sweep experiments/default.yaml -j "${CB_JOBS:-2}" || status=$?
[ "$status" -le 1 ] || exit "$status"
shopt -s nullglob
runs=(runs/default/*.h5)
ok_runs=()
for r in "${runs[@]}"; do
  [ "$(basename "$r")" = index.h5 ] || ok_runs+=("$r")
done
if [ ${#ok_runs[@]} -gt 0 ]; then
  "$PY" analysis/plot_runs.py "${ok_runs[@]}" -o runs/default/runs.png --title "drape_sphere, every solver" || status=1
fi
echo
echo "## The default comparison (runs/default/table.md)"
echo
"$PY" analysis/compare.py runs/default --allow-missing || status=1
exit $status
