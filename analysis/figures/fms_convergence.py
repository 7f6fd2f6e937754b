#!/usr/bin/env python3
"""analysis/figures/fms_convergence.py — Liu et al. 2013's convergence comparison.

Reads the output folder of `clothbench sweep experiments/figures/fms_convergence.yaml`
(index.csv and one run file per fms iteration count / newton iteration cap, each a
single step of the curtain from rest) and plots the relative error of the step's
solution, |x - x_ref| / |x_ref - x_0|, against the wall time of the step (left) and
against the iteration count (right). x_ref is the newton run with the most iterations.
fms's time includes its one-off prefactorization (the intercept of its curve). fms converges
to newton only when both solve the same energy: when their runs' attribute `model` differs
(another bending term), a warning goes to stderr and into the title. With
repeated runs (the experiment's `repeats`) each point takes the least wall time of its
repeats; their solutions must agree.
Writes fms_convergence.png and .pdf into the folder and prints the table.
"""
import math
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import cbrun  # noqa: E402


def main():
    args = cbrun.figure_args("fms_convergence", __doc__)
    import numpy as np
    keys = {"fms": "solvers.fms.iterations", "newton": "solvers.newton.max_iterations"}
    cols, rows = cbrun.load_sweep(args.folder, "fms_convergence", tuple(keys.values()))
    mixed = cbrun.warn_models(rows, key=lambda r: cbrun.material(cbrun.model_of(r)), what="fms_convergence")
    runs = {"fms": [], "newton": []}
    x0 = None
    for r in rows:
        s = r["solver"]
        if s not in runs:
            continue
        path = os.path.join(args.folder, r["file"])
        try:
            f = cbrun.open_run(path)
        except cbrun.RunError as e:
            cbrun.fail(str(e))
        with f:
            if "frames/positions" not in f or f["frames/positions"].shape[0] < 2:
                cbrun.fail("%s: needs the frames at t = 0 and after the step (run without --no-frames)" % path)
            pos = np.array(f["frames/positions"])
            wall = cbrun.series(f, "wall_step_s")
            iters = cbrun.series(f, "iterations")
        if x0 is None:
            x0 = pos[0]
        runs[s].append((int(cbrun.num(r[keys[s]])), float(np.nansum(wall)), int(np.nansum(iters)), pos[-1]))
    if not runs["newton"] or not runs["fms"]:
        cbrun.fail("%s: needs finished fms and newton runs" % args.folder)
    for s in runs:  # one point per setting: the least wall time of its repeats
        best = {}
        for t in runs[s]:
            b = best.get(t[0])
            if b is not None and not np.array_equal(b[3], t[3]):
                cbrun.fail("%s %s = %d: the repeats give different solutions" % (s, keys[s], t[0]))
            if b is None or t[1] < b[1]:
                best[t[0]] = t
        runs[s] = sorted(best.values(), key=lambda t: t[0])
    ref = runs["newton"][-1][3]
    scale = np.linalg.norm(ref - x0)
    if not scale > 0:
        cbrun.fail("the reference step did not move the cloth: nothing to compare")
    cbrun.use_agg()
    import matplotlib.pyplot as plt
    fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(9, 3.8))
    table = []
    print("solver  iterations  wall_ms  relative_error")
    for s, style in (("fms", "o-"), ("newton", "s-")):
        data = runs[s] if s == "fms" else runs[s][:-1]  # the reference itself has error 0
        err = [max(np.linalg.norm(t[3] - ref) / scale, 1e-17) for t in data]
        ms = [1e3 * t[1] for t in data]
        its = [t[2] for t in data]
        for t, e in zip(data, err):
            print("%-7s %10d %8.2f  %.3e" % (s, t[2], 1e3 * t[1], e))
            table.append([s, int(t[2]), 1e3 * float(t[1]), float(e)])
        ax1.loglog(ms, err, style, label=s)
        ax2.loglog(its, err, style, label=s)
    ax1.set_xlabel("wall time of the step [ms]")
    ax2.set_xlabel("iterations [-]")
    for ax in (ax1, ax2):
        ax.set_ylabel("|x - x_ref| / |x_ref - x_0| [-]")
        ax.grid(True, which="both", alpha=0.3)
        ax.legend()
    models = sorted({cbrun.material(cbrun.model_of(r)) for r in rows})
    fig.suptitle("one implicit-Euler step of the 81 x 81 curtain: fms vs Newton (Liu et al. 2013)\n" +
                 ("DIFFERENT MODELS: " if mixed else "model: ") + "; ".join(models), fontsize=9)
    for p in cbrun.save(fig, os.path.join(args.folder, "fms_convergence.png"),
                        ["solver", "iterations [-]", "wall_ms [ms]", "relative_error [-]"], table):
        print("wrote", p)
    return 0


if __name__ == "__main__":
    sys.exit(main())
