#!/usr/bin/env python3
"""analysis/figures/acm_compactor.py — Harmon et al. 2009, Figure 10: the trash compactor.

Reads the output folder of `clothbench sweep experiments/figures/acm_compactor.yaml`
(index.csv and one acm_compactor run with /frames): rendered frames at evenly spaced
times (the walls drawn at their position), then against time the deepest collider
penetration, the self-intersection count, the minimum separation and the events per
simulated second, which grow as the walls close in. Writes acm_compactor.png and .pdf
and prints the safety summary and the events per simulated second in the first and
last tenth of the run.
"""
import argparse
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import acm_common as ac  # noqa: E402
import cbrun  # noqa: E402


def main(name="acm_compactor"):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 epilog="Example: %(prog)s runs/figures/" + name)
    ap.add_argument("folder", help="output folder of the %s sweep (holds index.csv)" % name)
    ap.add_argument("--frames", type=int, default=5, help="rendered frames (default 5)")
    args = ap.parse_args()
    import render
    render.ensure_display(sys.argv[1:])
    cols, rows = ac.rows_of(args.folder, name)
    import numpy as np
    plt = cbrun.use_agg()
    r = rows[0]
    f = ac.open_row(args.folder, r, need_frames=True)
    T = f["frames/time"][()]
    times = list(np.linspace(T[0], T[-1], args.frames))
    fig = plt.figure(figsize=(2.6 * max(args.frames, 4), 7.6))
    sub = fig.subfigures(2, 1, height_ratios=[3.0, 4.6])
    axes = sub[1].subplots(2, 2).ravel()
    table = []
    s = ac.safety_panels(axes, f, r["scene"], table)
    ac.finish_safety_panels(axes)
    t = cbrun.series(f, "time")
    ev, dt = cbrun.series(f, "events"), cbrun.series(f, "dt")
    rate = ev / np.where(dt > 0, dt, np.nan)
    n10 = max(1, len(t) // 10)
    print("%s: status %s, deepest collider penetration %s m, max self intersections %s, min separation %s m"
          % (r["scene"], cbrun.attr(f, "status"), cbrun.fmt(s["max_depth"]), cbrun.fmt(s["max_self"]),
             cbrun.fmt(s["min_sep"])))
    print("events per simulated second: first tenth %.3g, last tenth %.3g" % (np.nanmean(rate[1:n10 + 1]),
                                                                              np.nanmean(rate[-n10:])))
    extra = extra_panel(np, f) if name == "acm_nails" else None
    f.close()
    ac.frame_strip(sub[0], 1, 0, os.path.join(args.folder, r["file"]), times)
    sub[0].suptitle("acm: %s" % r["scene"])
    if extra:
        print(extra)
    out = cbrun.save(fig, os.path.join(args.folder, name + ".png"), ac.SAFETY_HEADER, table)
    print("wrote " + ", ".join(out))


def extra_panel(np, f):
    return None


if __name__ == "__main__":
    main()
