#!/usr/bin/env python3
"""analysis/figures/pbd_balloon.py — Mueller et al. 2007, Figure 7: a closed mesh inflated
by the overpressure constraint.

Reads the output folder of `clothbench sweep experiments/figures/pbd_balloon.yaml`
(index.csv and one balloon run per overpressure factor k_pressure, with /frames),
renders the last frame of each and plots the enclosed volume V / V0 (divergence theorem
over the mesh faces, from the frames) against time with the target k_pressure dashed.
Writes pbd_balloon.png and .pdf into the folder.
"""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import cbrun  # noqa: E402
import render  # noqa: E402

KEY = "solvers.pbd.pressure"


def volume(np, x, F):
    return float(np.einsum("ij,ij->i", x[F[:, 0]], np.cross(x[F[:, 1]], x[F[:, 2]])).sum() / 6.0)


def main():
    args = cbrun.figure_args("pbd_balloon", __doc__)
    render.ensure_display(sys.argv[1:])
    cols, rows = cbrun.load_sweep(args.folder, "pbd_balloon", (KEY,))
    import numpy as np
    rows.sort(key=lambda r: cbrun.num(r[KEY]))
    plt = cbrun.use_agg()
    n = len(rows)
    fig = plt.figure(figsize=(3.0 * n + 4.2, 3.6))
    gs = fig.add_gridspec(1, n + 1, width_ratios=[1.0] * n + [1.4])
    axp = fig.add_subplot(gs[0, n])
    table = []
    for i, r in enumerate(rows):
        run = render.load_or_fail(os.path.join(args.folder, r["file"]))
        F = run.faces
        V0 = volume(np, run.f["mesh/rest_positions"][()], F)
        v = np.array([volume(np, run.X[k], F) for k in range(run.X.shape[0])]) / V0
        ax = fig.add_subplot(gs[0, i])
        k = run.X.shape[0] - 1
        run.draw(ax, k)
        ax.set_title("k_pressure = %s\nV / V0 = %.3f at t = %.2f s" % (r[KEY], v[-1], run.T[k]))
        table += [[cbrun.num(r[KEY]), float(t), float(vv)] for t, vv in zip(run.T, v)]
        line, = axp.plot(run.T, v, label="k_pressure = %s" % r[KEY])
        axp.axhline(cbrun.num(r[KEY]), color=line.get_color(), ls="--", lw=0.8)
        run.f.close()
    axp.set_xlabel("time [s]")
    axp.set_ylabel("enclosed volume V / V0 [-]")
    axp.legend(loc="center right")
    fig.suptitle("PBD (Mueller et al. 2007, Fig. 7): overpressure inflates a closed mesh (dashed: k_pressure)",
                 fontsize=10)
    out = cbrun.save(fig, os.path.join(args.folder, "pbd_balloon.png"),
                     ["k_pressure [-]", "time [s]", "V/V0 [-]"], table)
    print("wrote " + ", ".join(out))


if __name__ == "__main__":
    main()
