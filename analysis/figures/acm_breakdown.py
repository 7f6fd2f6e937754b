#!/usr/bin/env python3
"""analysis/figures/acm_breakdown.py — Harmon et al. 2009, section 7: the time breakdown.

Reads the output folder of `clothbench sweep experiments/figures/acm_breakdown.yaml`
(index.csv and one acm run per scene) and, from each run file's /stages (per-stage
wall-time totals written by the run loop from acm's cb_step_info stages) and the summed
/series/wall_step_s, draws the share of the run spent in each stage as stacked bars:
elastic+gravity (clock events of springs, hinges, gravity), penalty (layer ticks),
slab (separating-slab certificate failures), kdop (box exits and broad-phase rebuilds),
reschedule (certificates and box exits recomputed after kicks) and other (queue and loop
overhead: the step time not inside a stage). The paper's numbers for its reef knot
(elastic+gravity 4.8 %, penalty 0.09 %, slab 0.9 % + 1.0 % rescheduling, k-DOP 5.2 % +
23.0 % rescheduling) are printed next to ours. Writes acm_breakdown.png and .pdf and a
table on stdout (also events per second and wall time per simulated second).
"""
import argparse
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import acm_common as ac  # noqa: E402
import cbrun  # noqa: E402

STAGES = ["elastic+gravity", "penalty", "slab", "kdop", "reschedule"]
PAPER = {"elastic+gravity": 4.8, "penalty": 0.09, "slab": 0.9 + 1.0, "kdop": 5.2 + 23.0}


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 epilog="Example: %(prog)s runs/figures/acm_breakdown")
    ap.add_argument("folder", help="output folder of the acm_breakdown sweep (holds index.csv)")
    args = ap.parse_args()
    cols, rows = ac.rows_of(args.folder, "acm_breakdown")
    import numpy as np
    plt = cbrun.use_agg()
    names, shares, info = [], [], []
    for r in rows:
        f = ac.open_row(args.folder, r)
        if "stages" not in f:
            cbrun.fail("%s: no /stages (written at the end of a run by clothbench >= the stage logging; "
                       "rerun the sweep)" % os.path.join(args.folder, r["file"]))
        sn = [n.decode() if isinstance(n, bytes) else str(n) for n in f["stages/names"][()]]
        sec = dict(zip(sn, f["stages/seconds"][()]))
        total = float(np.nansum(cbrun.series(f, "wall_step_s")))
        t_end = float(cbrun.series(f, "time")[-1])
        events = float(np.nansum(cbrun.series(f, "events")))
        row = [100 * sec.get(s, 0.0) / total if total > 0 else np.nan for s in STAGES]
        row.append(max(0.0, 100 - sum(row)))
        names.append(r["scene"])
        shares.append(row)
        info.append((total, t_end, events, cbrun.attr(f, "status")))
        f.close()
    shares = np.array(shares)
    labels = STAGES + ["other"]
    fig, ax = plt.subplots(figsize=(1.6 * len(names) + 4, 4.5))
    bottom = np.zeros(len(names))
    for j, lab in enumerate(labels):
        ax.bar(names, shares[:, j], bottom=bottom, label=lab)
        bottom += shares[:, j]
    ax.set_ylabel("share of the step wall time (%)")
    ax.set_ylim(0, 100)
    ax.legend(bbox_to_anchor=(1.01, 1), loc="upper left", fontsize=8)
    ax.set_title("acm time breakdown (/stages)")
    plt.setp(ax.get_xticklabels(), rotation=15, ha="right")
    print("%-26s %-7s" % ("scene", "status") + "".join("%17s" % s for s in labels) +
          "%13s %14s" % ("events/s", "wall s/sim s"))
    for n, s, (total, t_end, events, st) in zip(names, shares, info):
        print("%-26s %-7s" % (n, st) + "".join("%16.1f%%" % v for v in s) +
              "%13.3g %14.3g" % (events / total if total > 0 else np.nan, total / t_end if t_end > 0 else np.nan))
    print("%-26s %-7s" % ("paper (reef knot)", "") + "".join("%16s " % (("%.2f%%" % PAPER[s]) if s in PAPER else "-")
                                                           for s in labels))
    png, pdf = cbrun.save(fig, os.path.join(args.folder, "acm_breakdown.png"))
    print("wrote %s and %s" % (png, pdf))


if __name__ == "__main__":
    main()
