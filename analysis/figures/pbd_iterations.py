#!/usr/bin/env python3
"""analysis/figures/pbd_iterations.py — constraint error against iterations, pbd and xpbd.

Reads the output folder of `clothbench sweep experiments/figures/pbd_iterations.yaml`
(index.csv and the hanging-cloth runs of pbd and xpbd at several iteration counts) and
plots the largest edge strain |l - L| / L of the last logged step (/series/max_strain)
against the iteration count on log-log axes, one line per solver; the maximum over the
whole run is drawn dotted. PBD with stretch_stiffness 1 approaches 0 as Gauss-Seidel
converges (its stiffness depends on the iteration count); XPBD levels off at the strain
of the material itself (compliance 1/k_stretch), independent of the iteration count once
converged. The experiment uses a soft material (10 N/m): with the scene's 1000 N/m the
compliance is negligible against the inverse masses and the two curves coincide (see the
experiment file). Runs that did not end ok are plotted as NaN with a warning.
Writes pbd_iterations.png and .pdf, and pbd_iterations.csv (solver, iterations,
final and maximum strain, status) into the folder.
"""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import cbrun  # noqa: E402


def main():
    args = cbrun.figure_args("pbd_iterations", __doc__)
    cols, rows = cbrun.load_sweep(args.folder, "pbd_iterations")
    import numpy as np
    data = {}
    for r in rows:
        key = "solvers.%s.iterations" % r["solver"]
        if key not in cols or r[key] == "":
            cbrun.fail("%s/index.csv: run %s has no %s column value: not a pbd_iterations sweep"
                       % (args.folder, r["run"], key))
        try:
            f = cbrun.open_run(os.path.join(args.folder, r["file"]))
        except cbrun.RunError as e:
            cbrun.fail(str(e))
        s = cbrun.series(f, "max_strain")
        f.close()
        if r["status"] != "ok":
            sys.stderr.write("warning: %s: status %s, plotted as NaN\n" % (r["file"], r["status"]))
            s = np.array([np.nan])
        data.setdefault(r["solver"], []).append((int(cbrun.num(r[key])), float(s[-1]), float(np.nanmax(s)),
                                                 r["status"]))
    if not data:
        cbrun.fail("%s/index.csv lists no runs" % args.folder)
    plt = cbrun.use_agg()
    fig, ax = plt.subplots(figsize=(6, 4.2))
    table = []
    for solver in sorted(data):
        pts = sorted(data[solver])
        it = [p[0] for p in pts]
        line, = ax.loglog(it, [p[1] for p in pts], "o-", label="%s (end of run)" % solver)
        ax.loglog(it, [p[2] for p in pts], ":", color=line.get_color(), lw=1, label="%s (max over run)" % solver)
        table += [[solver, p[0], p[1], p[2], p[3]] for p in pts]
    ax.set_xlabel("iterations per step [-]")
    ax.set_ylabel("max edge strain |l - L| / L [-]")
    ax.grid(alpha=0.3, which="both")
    ax.legend(loc="best")
    ax.set_title("Hanging cloth 30 x 30, 10 N/m, one 1/60 s step of N sweeps:\n"
                 "pbd stiffens with N (strain -> 0); xpbd levels off at the material's strain")
    out = cbrun.save(fig, os.path.join(args.folder, "pbd_iterations.png"),
                     ["solver", "iterations [-]", "final_max_strain [-]", "max_strain_over_run [-]", "status"], table)
    print("wrote " + ", ".join(out))


if __name__ == "__main__":
    main()
