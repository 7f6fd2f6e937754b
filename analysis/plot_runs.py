#!/usr/bin/env python3
"""analysis/plot_runs.py — the metrics of one or more run files against time.

    plot_runs.py RUN.h5 [RUN.h5 ...] [-o OUT.png] [--title TEXT]

Fourteen panels, the runs overlaid (one colour per run, legend in the first panel:
solver and parameters): total energy and, beside it, the work of each solver's contact
stage after its integrator (cumulative: the energy that stage added or removed, which the
total energy includes); kinetic, gravity and elastic (stretch + bend) energy, one panel
each; the depth that stage moved vertices out of (hidden from the end-of-step state);
|linear momentum|; |angular momentum|; collider penetration depth (vertices, edges and triangles; dashed: vertices
only); self intersections (on the frames where they were computed); max strain; wall
ms per step; vertices the contact stage changed; crossings inside steps (the audit,
cumulative; absent without --audit). A run without a contact stage (acm) or without
the audit has no line in those panels (the panel says so). Writes OUT.png,
OUT.pdf and OUT.csv, the plotted numbers (default: RUN.png for one run, else runs.png next
to the first run).
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

    fig, ax = plt.subplots(7, 2, figsize=(11, 19), sharex=True)
    ax = ax.ravel()
    colors = plt.rcParams["axes.prop_cycle"].by_key()["color"]
    header = ["run", "time [s]", "total_energy [J]", "contact_work_cumulative [J]", "kinetic_energy [J]",
              "gravity_energy [J]", "elastic_energy [J]", "contact_depth_corrected [m]", "linear_momentum [kg m/s]",
              "angular_momentum [kg m^2/s]", "collider_max_depth [m]", "vertex_max_depth [m]",
              "self_intersections [pairs]", "max_strain [-]", "wall_step [ms]", "contact_vertices_corrected [-]",
              "crossings_in_step_cumulative [-]"]
    table = []
    panel_vals = [[] for _ in range(14)]
    for k, ((path, f), lab) in enumerate(zip(files, labels)):
        c = colors[k % len(colors)]
        t = cbrun.series(f, "time")
        n = len(t)
        total = cbrun.series(f, "total_energy")
        work = np.cumsum(np.nan_to_num(cbrun.series(f, "contact_work")))
        if np.all(np.isnan(cbrun.series(f, "contact_work"))):
            work = np.full(n, np.nan)
        kin = cbrun.series(f, "kinetic_energy")
        grav = cbrun.series(f, "gravity_energy")
        elastic = cbrun.series(f, "stretch_energy") + cbrun.series(f, "bend_energy")
        hidden = cbrun.series(f, "contact_depth_corrected")
        P = np.linalg.norm(cbrun.series(f, "linear_momentum").reshape(n, -1), axis=1)
        L = np.linalg.norm(cbrun.series(f, "angular_momentum").reshape(n, -1), axis=1)
        depth, vdepth = cbrun.series(f, "collider_max_depth"), cbrun.series(f, "vertex_max_depth")
        si = cbrun.series(f, "self_intersections")
        strain = cbrun.series(f, "max_strain")
        wall = 1e3 * cbrun.series(f, "wall_step_s")
        nv = cbrun.series(f, "contact_vertices_corrected")
        cr = cbrun.series(f, "crossings_in_step")
        cr = np.full(n, np.nan) if np.all(np.isnan(cr)) else np.cumsum(np.nan_to_num(cr))
        ok = ~np.isnan(si)
        lines = [(0, total), (1, work), (2, kin), (3, grav), (4, elastic), (5, hidden), (6, P), (7, L),
                 (8, depth), (10, strain), (12, nv), (13, cr)]
        for i, y in lines:
            if not np.all(np.isnan(y)):
                ax[i].plot(t, y, color=c, label=lab)
            panel_vals[i] += list(y)
        panel_vals[8] += list(vdepth)
        panel_vals[9] += list(si[ok])
        panel_vals[11] += list(wall[1:])
        ax[8].plot(t, vdepth, color=c, ls="--", lw=0.8)
        ax[9].plot(t[ok], si[ok], color=c, marker=".", ms=3, label=lab)
        ax[11].plot(t[1:], wall[1:], color=c, lw=0.8, label=lab)
        for j in range(n):
            table.append([lab] + [float(v[j]) for v in (t, total, work, kin, grav, elastic, hidden, P, L, depth,
                                                          vdepth, si, strain, wall, nv, cr)])
    titles = ["total energy [J]", "contact work after the integrator, cumulative [J]", "kinetic energy [J]",
              "gravity energy [J]", "elastic energy: stretch + bend [J]",
              "depth the contact stage moved vertices out of [m]", "|linear momentum| [kg m/s]",
              "|angular momentum| [kg m^2/s]", "collider penetration depth [m] (dashed: vertices only)",
              "self intersections [pairs]", "max strain [-]", "wall time per step [ms]",
              "vertices changed by the contact stage [-]", "crossings inside steps (audit), cumulative [-]"]
    for i, (axi, ti) in enumerate(zip(ax, titles)):
        axi.set_title(ti)
        v = np.asarray(panel_vals[i], dtype=float)
        if not np.any(np.isfinite(v) & (v != 0)):  # all zero or no data: say so, no -0.04..0.04 axis
            for line in list(axi.get_lines()):
                line.remove()
            cbrun.empty_panel(axi, v, "every run")
        if i >= 12:
            axi.set_xlabel("time [s]")
    ax[0].legend(loc="best")
    if a.title:
        fig.suptitle(a.title)
    out = a.output
    if not out:
        first = a.runs[0]
        out = os.path.splitext(first)[0] + ".png" if len(a.runs) == 1 else \
            os.path.join(os.path.dirname(first) or ".", "runs.png")
    os.makedirs(os.path.dirname(out) or ".", exist_ok=True)
    written = cbrun.save(fig, out, header, table)
    for _, f in files:
        f.close()
    print("wrote " + ", ".join(written))
    return 0


if __name__ == "__main__":
    sys.exit(main())
