#!/usr/bin/env python3
"""analysis/figures/work_precision.py — the accuracy axis: error against cost (a
work-precision diagram, as in Hairer and Wanner's comparisons of ODE solvers).

Reads the runs of the accuracy_convergence sweep (the same runs: no sweep of its own):
for every solver and dt, the trajectory error at the end (position_error, m) against the
wall time per simulated second (the sum of wall_step_s over the run divided by its
simulated time). One curve per solver; the Pareto front (no other run is both cheaper
and more accurate) is marked. Runs that did not end ok are left off the front, drawn as an x at the top of the axis at their cost, and listed.
A curve whose runs solved another model than the reference (attribute `model`, contact part
aside) is dashed, its legend names the model, and a warning on stderr lists the models.
Writes work_precision.png, .pdf and .csv into that folder.
"""
import math
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import cbrun  # noqa: E402


def main():
    args = cbrun.figure_args("accuracy_convergence", __doc__)
    cols, rows = cbrun.load_sweep(args.folder, "accuracy_convergence", ("dt",))
    import numpy as np
    pts, table, models = [], [], {}
    ref_model = cbrun.reference_material(os.path.join(args.folder, "reference.h5"))
    for r in rows:
        try:
            f = cbrun.open_run(os.path.join(args.folder, r["file"]))
        except cbrun.RunError as e:
            cbrun.fail(str(e))
        e = cbrun.series(f, "position_error")
        wall = cbrun.series(f, "wall_step_s")
        t = cbrun.series(f, "time")
        f.close()
        fin = e[np.isfinite(e)]
        err = float(fin[-1]) if len(fin) else float("nan")
        cost = float(np.nansum(wall[1:]) / t[-1]) if t[-1] > 0 else float("nan")
        dt = cbrun.num(r["dt"])
        name = cbrun.variant(r, cols)
        r["variant"] = name
        models.setdefault(name, set()).add(cbrun.material(cbrun.model_of(r)))
        pts.append((name, dt, cost, err, r["status"]))
        table.append([name, dt, cost, err, r["status"], cbrun.model_of(r)])
    cbrun.warn_models(rows, key=lambda r: cbrun.material(cbrun.model_of(r)), what="work_precision")
    good = [p for p in pts if p[4] == "ok" and math.isfinite(p[2]) and math.isfinite(p[3]) and p[3] > 0]
    front = sorted([p for p in good if not any(q[2] <= p[2] and q[3] < p[3] or q[2] < p[2] and q[3] <= p[3]
                                               for q in good)], key=lambda p: p[2])
    plt = cbrun.use_agg()
    fig, ax = plt.subplots(figsize=(8.0, 4.6))
    bad = [p for p in pts if p[4] != "ok"]
    top = max([p[3] for p in good] + [1e-12]) * 3
    for solver in sorted({p[0] for p in pts}, key=cbrun.natural_key):
        s = sorted([p for p in good if p[0] == solver], key=lambda p: p[2])
        note = cbrun.other_model_note(models[solver], ref_model)
        line, = ax.loglog([p[2] for p in s], [p[3] for p in s], "o--" if note else "o-", mfc="none" if note else None,
                          label=solver + note)
        b = [p for p in bad if p[0] == solver and math.isfinite(p[2])]
        if b:  # did not end ok: drawn at its cost, at the top of the axis
            ax.plot([p[2] for p in b], [top] * len(b), "x", color=line.get_color(), ms=8)
    if front:
        ax.loglog([p[2] for p in front], [p[3] for p in front], "k--", lw=1, zorder=0, label="Pareto front")
    ax.set_xlabel("wall time per simulated second [s/s]")
    ax.set_ylabel("position error at the end [m]")
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(loc="upper left", bbox_to_anchor=(1.01, 1.0), fontsize=7)
    ax.set_title("Work-precision: error against cost (runs of accuracy_convergence; points along a curve: dt; x: did not end ok)")
    print("Pareto front (cheapest first): " + "; ".join("%s dt %.3g: %.3g s/s, %.3g m" % (p[0], p[1], p[2], p[3])
                                                        for p in front))
    if bad:
        print("not ok (an x at the top): " + ", ".join("%s dt %.3g (%s)" % (p[0], p[1], p[4]) for p in bad))
    out = cbrun.save(fig, os.path.join(args.folder, "work_precision.png"),
                     ["method", "dt [s]", "wall_per_simulated_second [s/s]", "position_error_end [m]", "status", "model"],
                     table)
    print("wrote " + ", ".join(out))


if __name__ == "__main__":
    main()
