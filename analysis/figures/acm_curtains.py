#!/usr/bin/env python3
"""analysis/figures/acm_curtains.py — Harmon et al. 2009, Figure 1: a ball pushed slowly
and very fast through a hanging curtain.

Reads the output folder of `clothbench sweep experiments/figures/acm_curtains.yaml`
(index.csv and one acm_curtains run per ball velocity, colliders.0.velocity) and draws
rendered frames of each run (one row per velocity, the slowest first) and, against time,
the deepest collider penetration, the self-intersection count, the minimum separation
and the events per simulated second of both runs. Writes acm_curtains.png and .pdf into
the folder and prints a summary line per run (all three safety numbers should be 0 / > 0).
"""
import argparse
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import acm_common as ac  # noqa: E402
import cbrun  # noqa: E402

KEY = "colliders.0.velocity"


def speed(text):
    try:
        return sum(float(x) ** 2 for x in text.strip("[] ").split(",")) ** 0.5
    except ValueError:
        return float("nan")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 epilog="Example: %(prog)s runs/figures/acm_curtains")
    ap.add_argument("folder", help="output folder of the acm_curtains sweep (holds index.csv)")
    ap.add_argument("--frames", type=int, default=4, help="frames per run (default 4)")
    args = ap.parse_args()
    import render
    render.ensure_display(sys.argv[1:])
    cols, rows = ac.rows_of(args.folder, "acm_curtains")
    if KEY not in cols:
        cbrun.fail("%s/index.csv has no column %s: not an acm_curtains sweep" % (args.folder, KEY))
    rows.sort(key=lambda r: speed(r[KEY]))
    import numpy as np
    plt = cbrun.use_agg()
    nr = len(rows)
    fig = plt.figure(figsize=(2.6 * max(args.frames, 4), 2.6 * nr + 4.6))
    sub = fig.subfigures(2, 1, height_ratios=[2.6 * nr, 4.6])
    axes = sub[1].subplots(2, 2).ravel()
    table = []
    print("%-14s %-7s %14s %10s %12s %12s" % ("ball velocity", "status", "max depth (m)", "max self",
                                              "min sep (m)", "wall (s)"))
    for i, r in enumerate(rows):
        f = ac.open_row(args.folder, r, need_frames=True)
        v = speed(r[KEY])
        # the ball is in the cloth from about (0.2 - 0.08) / v to (0.2 + 0.08 + 0.1) / v: show that window and the end
        t_end = float(f["frames/time"][-1])
        t_in, t_out = 0.12 / v, 0.38 / v
        times = list(np.linspace(min(t_in, t_end), min(t_out, t_end), max(args.frames - 1, 1))) + [t_end]
        s = ac.safety_panels(axes, f, "%g m/s" % v, table)
        wall = np.nansum(cbrun.series(f, "wall_step_s"))
        print("%-14s %-7s %14s %10s %12s %12.1f" % ("%g m/s" % v, cbrun.attr(f, "status"), cbrun.fmt(s["max_depth"]),
                                                   cbrun.fmt(s["max_self"]), cbrun.fmt(s["min_sep"]), wall))
        f.close()
        ac.frame_strip(sub[0], nr, i, os.path.join(args.folder, r["file"]), times)
    ac.finish_safety_panels(axes, "ball")
    sub[0].suptitle("acm: ball pushed through a curtain (rows: %s)" % ", ".join("%g m/s" % speed(r[KEY]) for r in rows))
    out = cbrun.save(fig, os.path.join(args.folder, "acm_curtains.png"), ac.SAFETY_HEADER, table)
    print("wrote " + ", ".join(out))


if __name__ == "__main__":
    main()
