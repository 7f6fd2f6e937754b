#!/usr/bin/env python3
"""analysis/figures/avgforce_penetration.py — Jin et al. 2020, Figures 6 and 7 as curves.

Reads the output folder of `clothbench sweep experiments/figures/avgforce_penetration.yaml`
(index.csv and one sphere_slide run per penetration response: sat, projection, none) and
plots, against time, the number of vertices inside a collider (collider_penetrations, every
step) and the number of intersecting edge-triangle pairs of the cloth (self_intersections,
on frame steps) for each response. Writes avgforce_penetration.png and .pdf into the folder,
avgforce_penetration.csv (response, time, collider_penetrations, self_intersections: empty
off frame steps) beside them, and prints the final and largest values. The same runs give
the frames of avgforce_frames.py.
"""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import cbrun  # noqa: E402

KEY = "solvers.avgforce.response"


def main():
    args = cbrun.figure_args("avgforce_penetration", __doc__)
    cols, rows = cbrun.load_sweep(args.folder, "avgforce_penetration", (KEY,))
    import numpy as np
    plt = cbrun.use_agg()
    fig, ax = plt.subplots(1, 2, figsize=(9, 3.6))
    table = []
    print("%-11s %-9s %12s %12s %12s %12s" % ("response", "status", "pen. final", "pen. max", "self final", "self max"))
    for r in rows:
        try:
            f = cbrun.open_run(os.path.join(args.folder, r["file"]))
        except cbrun.RunError as e:
            cbrun.fail(str(e))
        t = cbrun.series(f, "time")
        pen = cbrun.series(f, "collider_penetrations")
        si = cbrun.series(f, "self_intersections")
        ok = np.isfinite(si)
        name = r[KEY]
        ax[0].plot(t, pen, label=name)
        ax[1].plot(t[ok], si[ok], ".-", label=name)
        last_si = si[ok][-1] if ok.any() else float("nan")
        table += [[name, float(t[k]), float(pen[k]), float(si[k]) if ok[k] else ""] for k in range(len(t))]
        print("%-11s %-9s %12s %12s %12s %12s" % (name, cbrun.attr(f, "status"), cbrun.fmt(pen[-1]),
                                                 cbrun.fmt(np.nanmax(pen)), cbrun.fmt(last_si),
                                                 cbrun.fmt(np.nanmax(si) if ok.any() else float("nan"))))
        f.close()
    ax[0].set_xlabel("time [s]")
    ax[0].set_ylabel("vertices inside a collider [-]")
    ax[1].set_xlabel("time [s]")
    ax[1].set_ylabel("self-intersecting edge-triangle pairs [-]")
    for a, what, col in ((ax[0], "collider penetrations", 2), (ax[1], "self intersections", 3)):
        vals = [row[col] for row in table if row[col] != ""]
        if not cbrun.empty_panel(a, vals, what):
            a.legend(title="response")
    fig.suptitle("sphere_slide: penetrations with and without the separating-axis response (Jin et al. 2020)")
    out = cbrun.save(fig, os.path.join(args.folder, "avgforce_penetration.png"),
                     ["response", "time [s]", "collider_penetrations [vertices]", "self_intersections [pairs]"], table)
    print("wrote " + ", ".join(out))


if __name__ == "__main__":
    main()
