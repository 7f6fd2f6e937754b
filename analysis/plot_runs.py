#!/usr/bin/env python3
"""analysis/plot_runs.py — the metrics of one or more run files against time.

    plot_runs.py RUN.h5 [RUN.h5 ...] [-o OUT.png] [--title TEXT]

Twelve panels, the runs overlaid (legend: solver and parameters): total energy and,
beside it, the work of each solver's contact stage after its integrator (cumulative:
the energy that stage added or removed, which the total energy includes); the energy
terms (kinetic, gravity, stretch, bend; one line style each) and the depth that stage
moved vertices out of (hidden from the end-of-step state); |linear momentum|; |angular
momentum|; collider penetration depth (vertices, edges and triangles; dashed: vertices
only); self intersections (on the frames where they were computed); max strain; wall
ms per step; vertices the contact stage changed; crossings inside steps (the audit,
cumulative; absent without --audit). A run without a contact stage (acm) or without
the audit has no line in those panels. Writes OUT.png
and OUT.pdf (default: RUN.png for one run, else runs.png next to the first run).
"""
import argparse
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import cbrun  # noqa: E402


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0].split("—")[1].strip(),
                                 epilog="Fails with a clear message on a missing or unfinished run file.")
    ap.add_argument("runs", nargs="+", metavar="RUN.h5", help="run files written by clothbench run or sweep")
    ap.add_argument("-o", "--output", help="output PNG (a PDF is written next to it)")
    ap.add_argument("--title", help="figure title")
    ap.add_argument("--allow-unfinished", action="store_true", help="also plot runs whose status is running")
    a = ap.parse_args(argv)

    import numpy as np
    plt = cbrun.use_agg()
    files = []
    try:
        for p in a.runs:
            if not cbrun.is_run_file(p):  # index.h5 or another HDF5 file that DIR/*.h5 picked up
                sys.stderr.write("plot_runs.py: %s: not a run file, left out\n" % p)
                continue
            files.append((p, cbrun.open_run(p, allow_unfinished=a.allow_unfinished)))
    except cbrun.RunError as exc:
        cbrun.fail(str(exc))
    if not files:
        cbrun.fail("no run files among %s" % " ".join(a.runs))
    labels = [cbrun.label(f) for _, f in files]
    if len(set(labels)) < len(labels):
        labels = ["%s (%s)" % (lab, cbrun.stem(p)) for lab, (p, _) in zip(labels, files)]

    fig, ax = plt.subplots(6, 2, figsize=(12, 19), sharex=True)
    ax = ax.ravel()
    colors = plt.rcParams["axes.prop_cycle"].by_key()["color"]
    terms = [("kinetic_energy", "-"), ("gravity_energy", "--"), ("stretch_energy", ":"), ("bend_energy", "-.")]
    for k, ((path, f), lab) in enumerate(zip(files, labels)):
        c = colors[k % len(colors)]
        t = cbrun.series(f, "time")
        ax[0].plot(t, cbrun.series(f, "total_energy"), color=c, label=lab)
        work = cbrun.series(f, "contact_work")
        if not np.all(np.isnan(work)):
            ax[1].plot(t, np.cumsum(np.nan_to_num(work)), color=c, label=lab)
        for name, ls in terms:
            ax[2].plot(t, cbrun.series(f, name), color=c, ls=ls, lw=1,
                       label=name.replace("_energy", "") if k == 0 else None)
        hidden = cbrun.series(f, "contact_depth_corrected")
        if not np.all(np.isnan(hidden)):
            ax[3].plot(t, hidden, color=c, label=lab)
        P = cbrun.series(f, "linear_momentum")
        L = cbrun.series(f, "angular_momentum")
        ax[4].plot(t, np.linalg.norm(P.reshape(len(t), -1), axis=1), color=c, label=lab)
        ax[5].plot(t, np.linalg.norm(L.reshape(len(t), -1), axis=1), color=c, label=lab)
        ax[6].plot(t, cbrun.series(f, "collider_max_depth"), color=c, label=lab)
        ax[6].plot(t, cbrun.series(f, "vertex_max_depth"), color=c, ls="--", lw=0.8)
        si = cbrun.series(f, "self_intersections")
        ok = ~np.isnan(si)
        ax[7].plot(t[ok], si[ok], color=c, marker=".", ms=3, label=lab)
        ax[8].plot(t, cbrun.series(f, "max_strain"), color=c, label=lab)
        ax[9].plot(t[1:], 1e3 * cbrun.series(f, "wall_step_s")[1:], color=c, lw=0.8, label=lab)
        nv = cbrun.series(f, "contact_vertices_corrected")
        if not np.all(np.isnan(nv)):
            ax[10].plot(t, nv, color=c, lw=0.8, label=lab)
        cr = cbrun.series(f, "crossings_in_step")
        if not np.all(np.isnan(cr)):
            ax[11].plot(t, np.cumsum(np.nan_to_num(cr)), color=c, label=lab)
    titles = ["total energy (J)", "contact work after the integrator, cumulative (J)", "energy terms (J)",
              "depth the contact stage moved vertices out of (m)", "|linear momentum| (kg m/s)",
              "|angular momentum| (kg m^2/s)", "collider penetration depth (m; dashed: vertices only)",
              "self intersections", "max strain", "wall time per step (ms)",
              "vertices changed by the contact stage", "crossings inside steps (audit), cumulative"]
    for i, (axi, ti) in enumerate(zip(ax, titles)):
        axi.set_title(ti, fontsize=10)
        axi.grid(alpha=0.3)
        if i >= 10:
            axi.set_xlabel("time (s)")
    ax[0].legend(fontsize=8)
    ax[2].legend(fontsize=8, title="line style", title_fontsize=8)
    if a.title:
        fig.suptitle(a.title)
    fig.tight_layout()
    out = a.output
    if not out:
        first = a.runs[0]
        out = os.path.splitext(first)[0] + ".png" if len(a.runs) == 1 else \
            os.path.join(os.path.dirname(first) or ".", "runs.png")
    os.makedirs(os.path.dirname(out) or ".", exist_ok=True)
    png, pdf = cbrun.save(fig, out)
    for _, f in files:
        f.close()
    print("wrote %s and %s" % (png, pdf))
    return 0


if __name__ == "__main__":
    sys.exit(main())
