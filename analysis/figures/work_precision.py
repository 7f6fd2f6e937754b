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
Writes work_precision.png, .pdf and .csv into that folder. `figure` is also the diagram of
contact_accuracy.py (the drape in contact).
"""
import math
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import cbrun  # noqa: E402


def figure(folder, sweep, out_name, measure, ylabel, title, floor=None):
    """The work-precision diagram of the sweep's runs in folder (its reference
    folder/reference.h5) into folder/out_name (.png, .pdf, .csv): measure "end" takes
    each run's position_error at its last frame, "max" the largest over its frames;
    floor (m, or None) is drawn as a horizontal line, the reference's own error."""
    cols, rows = cbrun.load_sweep(folder, sweep, ("dt",))
    import numpy as np
    pts, table, models = [], [], {}
    ref_model = cbrun.reference_material(os.path.join(folder, "reference.h5"))
    for r in rows:
        try:
            f = cbrun.open_run(os.path.join(folder, r["file"]))
        except cbrun.RunError as e:
            cbrun.fail(str(e))
        e = cbrun.series(f, "position_error")
        de = cbrun.series(f, "energy_error")
        wall = cbrun.series(f, "wall_step_s")
        t = cbrun.series(f, "time")
        f.close()
        fin = e[np.isfinite(e)]
        err = float("nan") if not len(fin) else float(fin[-1]) if measure == "end" else float(np.max(fin))
        efin = de[np.isfinite(de)]
        eerr = float(efin[-1]) if len(efin) else float("nan")
        cost = float(np.nansum(wall[1:]) / t[-1]) if t[-1] > 0 else float("nan")
        dt = cbrun.num(r["dt"])
        name = cbrun.variant(r, cols)
        r["variant"] = name
        models.setdefault(name, set()).add(cbrun.material(cbrun.model_of(r)))
        pts.append((name, dt, cost, err, r["status"]))
        table.append([name, dt, cost, err, eerr, r["status"], cbrun.model_of(r)])
    cbrun.warn_models(rows, key=lambda r: cbrun.material(cbrun.model_of(r)), what=out_name)
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
    if floor is not None and math.isfinite(floor) and floor > 0:
        ax.axhline(floor, color="0.5", lw=1, ls=":", label="the reference's own error (~%.2g m)" % floor)
    ax.set_xlabel("wall time per simulated second [s/s]")
    ax.set_ylabel(ylabel)
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(loc="upper left", bbox_to_anchor=(1.01, 1.0), fontsize=7)
    ax.set_title(title)
    print("Pareto front (cheapest first): " + "; ".join("%s dt %.3g: %.3g s/s, %.3g m" % (p[0], p[1], p[2], p[3])
                                                        for p in front))
    if bad:
        print("not ok (an x at the top): " + ", ".join("%s dt %.3g (%s)" % (p[0], p[1], p[4]) for p in bad))
    out = cbrun.save(fig, os.path.join(folder, out_name + ".png"),
                     ["method", "dt [s]", "wall_per_simulated_second [s/s]",
                      "position_error_%s [m]" % measure, "energy_error_end [J]", "status", "model"], table)
    print("wrote " + ", ".join(out))
    return table


def main():
    args = cbrun.figure_args("accuracy_convergence", __doc__)
    figure(args.folder, "accuracy_convergence", "work_precision", "end", "position error at the end [m]",
           "Work-precision: error against cost (runs of accuracy_convergence; points along a curve: dt; "
           "x: did not end ok)")


if __name__ == "__main__":
    main()
