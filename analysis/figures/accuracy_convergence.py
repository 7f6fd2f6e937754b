#!/usr/bin/env python3
"""analysis/figures/accuracy_convergence.py — the accuracy axis: trajectory error at the end
of the run against dt, every solver, log-log, with the fitted order in the legend.

Reads the output folder of `clothbench sweep experiments/figures/accuracy_convergence.yaml`
(index.csv and one run per solver, solver parameter and dt, each with the series
position_error against the experiment's reference, which the sweep makes when missing).
A solver swept over one of its own parameters (fms iterations) is one curve per value. The error is
position_error at the last frame (mass-weighted RMS distance to the reference, m). The
order is the least-squares slope of log(error) against log(dt) over the runs that ended ok
and whose error is above 10x the reference's own (stored in the reference file); a run that
did not end ok is drawn as an x at the top of the axis, never dropped. A curve whose runs
solved another model than the reference (the run files' attribute `model`, without its
contact part: the scene has no colliders) is dashed and its legend names its model, so its
error is seen to include the model's difference; a warning on stderr lists the models.
Writes accuracy_convergence.png, .pdf and .csv.
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
    floor = 0.0
    ref = os.path.join(args.folder, "reference.h5")
    ref_model = cbrun.reference_material(ref)
    if os.path.exists(ref):
        f = cbrun.open_run(ref)
        text = cbrun.attr(f, "reference_check") or ""
        f.close()
        if "own error is about" in text:
            floor = float(text.split("own error is about")[1].split()[0])
    data = {}
    models = {}
    table = []
    for r in rows:
        try:
            f = cbrun.open_run(os.path.join(args.folder, r["file"]))
        except cbrun.RunError as e:
            cbrun.fail(str(e))
        e = cbrun.series(f, "position_error")
        f.close()
        fin = e[np.isfinite(e)]
        err = float(fin[-1]) if len(fin) else float("nan")
        dt = cbrun.num(r["dt"])
        name = cbrun.variant(r, cols)
        r["variant"] = name
        models.setdefault(name, set()).add(cbrun.material(cbrun.model_of(r)))
        data.setdefault(name, []).append((dt, err, r["status"]))
        table.append([name, dt, err, r["status"], cbrun.model_of(r)])
    cbrun.warn_models(rows, key=lambda r: cbrun.material(cbrun.model_of(r)), what="accuracy_convergence")
    plt = cbrun.use_agg()
    fig, ax = plt.subplots(figsize=(8.0, 4.6))
    top = max([p[1] for v in data.values() for p in v if math.isfinite(p[1])] + [1e-12]) * 3
    print("method                fitted order   errors at dt = %s" % ", ".join("%.3g" % d for d in sorted({p[0] for v in data.values() for p in v})))
    for solver in sorted(data, key=cbrun.natural_key):
        pts = sorted(data[solver])
        good = [(d, e) for d, e, st in pts if st == "ok" and math.isfinite(e) and e > 10 * floor and e > 0]
        order = float("nan")
        if len(good) >= 2:
            order = float(np.polyfit(np.log([g[0] for g in good]), np.log([g[1] for g in good]), 1)[0])
        ok = [(d, e) for d, e, st in pts if st == "ok" and math.isfinite(e) and e > 0]
        note = cbrun.other_model_note(models[solver], ref_model)
        line, = ax.loglog([p[0] for p in ok], [p[1] for p in ok], "o--" if note else "o-",
                          mfc="none" if note else None,
                          label="%s (order %s)%s" % (solver, "%.2f" % order if math.isfinite(order) else "-", note))
        bad = [d for d, e, st in pts if st != "ok"]
        if bad:
            ax.plot(bad, [top] * len(bad), "x", color=line.get_color(), ms=8)
        print("%-22s %12s   %s%s" % (solver, "%.2f" % order if math.isfinite(order) else "-",
                                      ", ".join("%.3g" % e for _, e, _ in pts), note))
    if floor > 0:
        ax.axhline(floor, color="0.5", lw=0.8, ls=":", label="the reference's own error")
    ax.set_xlabel("dt [s]")
    ax.set_ylabel("position error at t = 0.5 s [m]")
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(loc="upper left", bbox_to_anchor=(1.01, 1.0), fontsize=7)
    ax.set_title("Error against dt (hanging 12 x 12, released horizontal)\n"
                 "x: did not end ok; dashed: not the reference's model", fontsize=9)
    out = cbrun.save(fig, os.path.join(args.folder, "accuracy_convergence.png"),
                     ["method", "dt [s]", "position_error_end [m]", "status", "model"], table)
    print("wrote " + ", ".join(out))


if __name__ == "__main__":
    main()
