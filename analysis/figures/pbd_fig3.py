#!/usr/bin/env python3
"""analysis/figures/pbd_fig3.py — Mueller et al. 2007, Figure 3: stretching and bending
stiffness chosen independently.

Reads the output folder of `clothbench sweep experiments/figures/pbd_fig3.yaml` (index.csv
and the drape_sphere runs of the 2 x 2 grid stretch_stiffness x bend_stiffness, with
/frames) and renders the last frame of each run side by side: rows are the stretching
stiffness, columns the bending stiffness, so the paper's pair (low stretch with high
bending, and the reverse) sits on the anti-diagonal. Titles give the largest edge strain
of the last frame. Writes pbd_fig3.png and .pdf into the folder.
"""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import cbrun  # noqa: E402
import render  # noqa: E402

KS, KB = "solvers.pbd.stretch_stiffness", "solvers.pbd.bend_stiffness"


def last_strain(np, f, k):
    x = f["frames/positions"][k]
    e = f["mesh/edges"][()]
    x0 = f["mesh/rest_positions"][()]
    L = np.linalg.norm(x0[e[:, 0]] - x0[e[:, 1]], axis=1)
    return float(np.max(np.abs(np.linalg.norm(x[e[:, 0]] - x[e[:, 1]], axis=1) - L) / L))


def main():
    args = cbrun.figure_args("pbd_fig3", __doc__)
    render.ensure_display(sys.argv[1:])
    cols, rows = cbrun.load_sweep(args.folder, "pbd_fig3", (KS, KB))
    import numpy as np
    ks = sorted({cbrun.num(r[KS]) for r in rows})
    kb = sorted({cbrun.num(r[KB]) for r in rows})
    plt = cbrun.use_agg()
    fig = plt.figure(figsize=(3.4 * len(kb), 3.3 * len(ks)))
    table = []
    for r in rows:
        run = render.load_or_fail(os.path.join(args.folder, r["file"]))
        i, j = ks.index(cbrun.num(r[KS])), kb.index(cbrun.num(r[KB]))
        ax = fig.add_subplot(len(ks), len(kb), i * len(kb) + j + 1, )
        k = run.X.shape[0] - 1
        run.draw(ax, k)
        strain = last_strain(np, run.f, k)
        gain = cbrun.num(r["energy_drift"])
        ax.set_title("stretch k = %s, bend k = %s\nt = %.2f s, strain %.3f, energy %+.2f J%s"
                     % (r[KS], r[KB], run.T[k], strain, gain, "" if r["status"] == "ok" else " (" + r["status"] + ")"))
        table.append([cbrun.num(r[KS]), cbrun.num(r[KB]), r["status"], float(run.T[k]), strain, gain])
        run.f.close()
    fig.suptitle("PBD (Mueller et al. 2007, Fig. 3): stretching and bending stiffness are independent", fontsize=10)
    out = cbrun.save(fig, os.path.join(args.folder, "pbd_fig3.png"),
                     ["stretch_stiffness [-]", "bend_stiffness [-]", "status", "t [s]", "max_strain [-]",
                      "energy_drift [J]"], table)
    print("wrote " + ", ".join(out))


if __name__ == "__main__":
    main()
