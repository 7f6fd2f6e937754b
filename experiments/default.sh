#!/usr/bin/env bash
# The default job: build clothbench and run the default comparison.
# For now: the bundled drape_sphere scene with every registered solver, one run
# file each under runs/default/, and each run's summary printed.
set -euo pipefail
cd "$(dirname "$0")/.."
[ -f build/build.ninja ] || meson setup build
ninja -C build
mkdir -p runs/default
status=0
for solver in $(build/clothbench list | awk '/^solvers:/{on=1; next} /^$/{on=0} on {print $1}'); do
  echo "=== drape_sphere with $solver"
  build/clothbench run data/scenes/drape_sphere.yaml --solver "$solver" \
      -o "runs/default/drape_sphere-$solver.h5" || status=1
done
exit $status
