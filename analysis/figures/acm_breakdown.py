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
23.0 % rescheduling; section 6.4) are drawn as the first bar, next to our reef knot when the
sweep has it. Shares are of the wall time (per wall second); the wall seconds per simulated
second are written over each bar. Writes acm_breakdown.png, .pdf and .csv and a table on
stdout (also events per wall second).
"""
import argparse
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import acm_common as ac  # noqa: E402
import cbrun  # noqa: E402

STAGES = ["elastic+gravity", "penalty", "slab", "kdop", "reschedule"]
# Harmon et al. 2009, section 6.4 (reef knot), % of the total simulation time
PAPER_SPLIT = {"elastic+gravity": 4.8, "penalty": 0.09, "slab": 0.9, "slab_reschedule": 1.0, "kdop": 5.2,
               "kdop_reschedule": 23.0}


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
    # the paper's reef knot (section 6.4, % of the total simulation time): slab and k-DOP
    # processing and their rescheduling are listed apart; ours has one "reschedule" stage
    paper = [PAPER_SPLIT["elastic+gravity"], PAPER_SPLIT["penalty"], PAPER_SPLIT["slab"], PAPER_SPLIT["kdop"],
             PAPER_SPLIT["slab_reschedule"] + PAPER_SPLIT["kdop_reschedule"]]
    paper.append(100.0 - sum(paper))
    order = sorted(range(len(names)), key=lambda i: "reef" not in names[i])  # our reef knot next to the paper's
    names = ["paper:\nreef knot"] + [names[i] for i in order]
    shares = np.array([paper] + [shares[i] for i in order])
    info = [None] + [info[i] for i in order]
    labels = STAGES + ["other"]
    fig, ax = plt.subplots(figsize=(1.3 * len(names) + 3.4, 4.2))
    bottom = np.zeros(len(names))
    for j, lab in enumerate(labels):
        ax.bar(names, shares[:, j], bottom=bottom, label=lab)
        bottom += shares[:, j]
    for i, it in enumerate(info):
        if it:
            total, t_end, events, st = it
            ax.text(i, 101, "%.3g wall s\nper sim. s" % (total / t_end if t_end > 0 else np.nan), ha="center",
                    va="bottom", fontsize=7)
    ax.set_ylabel("share of the wall time [%]")
    ax.set_ylim(0, 112)
    ax.legend(bbox_to_anchor=(1.01, 1), loc="upper left")
    ax.set_title("acm time breakdown per wall second (our /stages; the paper's section 6.4 for its reef knot;\n"
                 "'other' = queue and loop overhead, for the paper the time it does not list)")
    plt.setp(ax.get_xticklabels(), rotation=15, ha="right")
    print("shares of the wall time spent stepping (per wall second, not per simulated second)")
    print("%-26s %-7s" % ("scene", "status") + "".join("%17s" % s for s in labels) +
          "%13s %14s" % ("events/s", "wall s/sim s"))
    table = []
    for n, sh, it in zip(names, shares, info):
        n1 = n.replace("\n", " ")
        if it is None:
            print("%-26s %-7s" % (n1, "") + "".join("%16.2f%%" % v for v in sh))
            table.append([n1, ""] + [float(v) for v in sh] + ["", ""])
            continue
        total, t_end, events, st = it
        eps = events / total if total > 0 else np.nan
        wps = total / t_end if t_end > 0 else np.nan
        print("%-26s %-7s" % (n1, st) + "".join("%16.1f%%" % v for v in sh) + "%13.3g %14.3g" % (eps, wps))
        table.append([n1, st] + [float(v) for v in sh] + [float(eps), float(wps)])
    out = cbrun.save(fig, os.path.join(args.folder, "acm_breakdown.png"),
                     ["scene", "status"] + ["%s [%% of wall time]" % s for s in labels] +
                     ["events_per_wall_second [1/s]", "wall_seconds_per_simulated_second [-]"], table)
    print("wrote " + ", ".join(out))


if __name__ == "__main__":
    main()
