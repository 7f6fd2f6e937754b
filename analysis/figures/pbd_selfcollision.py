#!/usr/bin/env python3
"""analysis/figures/pbd_selfcollision.py — Mueller et al. 2007, Figure 6: the rest state
of a piece of cloth with self collisions.

Reads the output folder of `clothbench sweep experiments/figures/pbd_selfcollision.yaml`
(index.csv and the pbd_folds runs with self_collision true and false, with /frames),
renders the last frame of each side by side (self collision on first) and plots the
self_intersections metric over time for both. Writes pbd_selfcollision.png and .pdf.
"""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import cbrun  # noqa: E402
import render  # noqa: E402

KEY = "solvers.pbd.self_collision"


def main():
    args = cbrun.figure_args("pbd_selfcollision", __doc__)
    render.ensure_display(sys.argv[1:])
    cols, rows = cbrun.load_sweep(args.folder, "pbd_selfcollision", (KEY,))
    import numpy as np
    rows.sort(key=lambda r: r[KEY] != "true")
    plt = cbrun.use_agg()
    n = len(rows)
    fig = plt.figure(figsize=(3.4 * n + 4.2, 3.8))
    gs = fig.add_gridspec(1, n + 1, width_ratios=[1.0] * n + [1.3])
    axp = fig.add_subplot(gs[0, n])
    table = []
    for i, r in enumerate(rows):
        run = render.load_or_fail(os.path.join(args.folder, r["file"]))
        ax = fig.add_subplot(gs[0, i])
        k = run.X.shape[0] - 1
        run.draw(ax, k, elevation=35, azimuth=-60, frames=[k])
        t = cbrun.series(run.f, "time")
        si = cbrun.series(run.f, "self_intersections")
        ok = ~np.isnan(si)
        last = si[ok][-1] if ok.any() else float("nan")
        ax.set_title("self collision %s, t = %.2f s\nself intersections: %s at the end, %s at most"
                     % (r[KEY], run.T[k], cbrun.fmt(last), cbrun.fmt(np.nanmax(si) if ok.any() else float("nan"))))
        table += [[r[KEY], float(a), float(b)] for a, b in zip(t[ok], si[ok])]
        axp.plot(t[ok], si[ok], ".-", ms=3, label="self collision %s" % r[KEY])
        run.f.close()
    axp.set_xlabel("time [s]")
    axp.set_ylabel("self intersections [edge-triangle pairs]")
    axp.set_yscale("symlog")
    axp.legend(loc="best")
    fig.suptitle("PBD (Mueller et al. 2007, Fig. 6): cloth falling in folds onto the floor", fontsize=10)
    out = cbrun.save(fig, os.path.join(args.folder, "pbd_selfcollision.png"),
                     ["self_collision", "time [s]", "self_intersections [pairs]"], table)
    print("wrote " + ", ".join(out))


if __name__ == "__main__":
    main()
