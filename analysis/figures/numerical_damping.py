#!/usr/bin/env python3
"""analysis/figures/numerical_damping.py — the accuracy axis: artificial damping. For every
solver and dt, the fraction of the free-flying sheet's internal energy (total energy minus
the kinetic energy of its centre of mass) left after 1 s; an energy-conserving integrator
keeps 1.

Reads the output folder of `clothbench sweep experiments/figures/numerical_damping.yaml`.
Runs that did not end ok are drawn as an x at the top, never dropped. Writes
numerical_damping.png, .pdf and .csv.
"""
import math
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import cbrun  # noqa: E402


def internal_energy(np, f):
    E = cbrun.series(f, "total_energy")
    P = cbrun.series(f, "linear_momentum").reshape(len(E), -1)
    M = float(np.sum(f["mesh/masses"][()]))
    return E - np.sum(P * P, axis=1) / (2 * M)


def main():
    args = cbrun.figure_args("numerical_damping", __doc__)
    cols, rows = cbrun.load_sweep(args.folder, "numerical_damping", ("dt",))
    for r in rows:
        r["variant"] = cbrun.variant(r, cols)
    cbrun.warn_models(rows, key=lambda r: cbrun.material(cbrun.model_of(r)), what="numerical_damping")
    import numpy as np
    data, table = {}, []
    for r in rows:
        try:
            f = cbrun.open_run(os.path.join(args.folder, r["file"]))
        except cbrun.RunError as e:
            cbrun.fail(str(e))
        Ei = internal_energy(np, f)
        t_end = float(cbrun.series(f, "time")[-1])
        f.close()
        frac = float(Ei[-1] / Ei[0]) if Ei[0] > 0 else float("nan")
        dt = cbrun.num(r["dt"])
        data.setdefault(r["solver"], []).append((dt, frac, r["status"]))
        table.append([r["solver"], dt, frac, t_end, r["status"]])
    plt = cbrun.use_agg()
    fig, ax = plt.subplots(figsize=(6.4, 4.4))
    print("solver     energy left after 1 s at dt = %s" % ", ".join(
        "%.3g" % d for d in sorted({p[0] for v in data.values() for p in v})))
    for solver in sorted(data):
        pts = sorted(data[solver])
        ok = [(d, v) for d, v, st in pts if st == "ok" and math.isfinite(v)]
        line, = ax.semilogx([p[0] for p in ok], [p[1] for p in ok], "o-", label=solver)
        bad = [d for d, v, st in pts if st != "ok"]
        if bad:
            ax.plot(bad, [1.05] * len(bad), "x", color=line.get_color(), ms=8)
        print("%-10s %s" % (solver, ", ".join("%.3f" % v if st == "ok" else st for _, v, st in pts)))
    ax.axhline(1.0, color="k", lw=0.6)
    ax.set_ylim(0, 1.1)
    ax.set_xlabel("dt [s]")
    ax.set_ylabel("internal energy left after 1 s [-]")
    ax.legend(loc="lower left")
    ax.set_title("Numerical damping: free-flying spinning sheet, no damping in the model\n"
                 "(fms and newton coincide: both implicit Euler; x: the run did not end ok)")
    out = cbrun.save(fig, os.path.join(args.folder, "numerical_damping.png"),
                     ["solver", "dt [s]", "internal_energy_left [-]", "t_end [s]", "status"], table)
    print("wrote " + ", ".join(out))


if __name__ == "__main__":
    main()
