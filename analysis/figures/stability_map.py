#!/usr/bin/env python3
"""analysis/figures/stability_map.py — the accuracy axis: where each method is stable. One
panel per solver, stretch stiffness (rows) against dt (columns), each cell the outcome of
one run of `clothbench sweep experiments/figures/stability_map.yaml`:

  ok            ended ok and its energy never rose by more than 10% of E_ref
  energy +10%   ended ok, but max over t of E(t) - E(0) - W_ext(t) > 0.1 E_ref (E the
                total energy, W_ext the work of moving pins and colliders, E_ref the health
                check's energy scale: the run file's health_energy_ref)
  diverged      the health check ended it (letter: E energy beyond E_ref, S strain beyond
                its bound, N a non-finite or unbounded state)
  error         the run could not be made (the index's message says why)

Every run of the index is a cell: nothing is dropped. Prints, per solver, the largest dt
that is ok at each stiffness. Writes stability_map.png, .pdf and .csv.
"""
import math
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import cbrun  # noqa: E402

OUTCOMES = ["ok", "energy +10%", "diverged", "error"]
COLOURS = ["#4daf4a", "#ff9f1c", "#d7191c", "#7f7f7f"]
GROWTH = 0.10   # energy rise, in units of E_ref, above which an ok run is marked


def energy_rise(np, f):
    """max over t of (E - E0 - W_ext) / E_ref; NaN when the file lacks E_ref."""
    e_ref = f.attrs.get("health_energy_ref")
    if e_ref is None or not float(e_ref) > 0:
        return float("nan")
    E = cbrun.series(f, "total_energy")
    W = cbrun.series(f, "external_work")
    W = np.where(np.isfinite(W), W, 0.0)
    rise = E - E[0] - W
    rise = rise[np.isfinite(rise)]
    return float(np.max(rise) / float(e_ref)) if len(rise) else float("nan")


def cause(message):
    """The letter of a diverged run's cause, from its message (cbrun.diverged_cause)."""
    return {"energy": "E", "strain": "S"}.get(cbrun.diverged_cause(message), "N")


def outcome(np, folder, r):
    """(outcome index, energy rise / E_ref, letter) of one index row."""
    if r["status"] not in ("ok", "diverged"):
        return 3, float("nan"), "!"
    try:
        f = cbrun.open_run(os.path.join(folder, r["file"]))
    except cbrun.RunError as e:
        cbrun.fail(str(e))
    rise = energy_rise(np, f)
    f.close()
    if r["status"] == "diverged":
        return 2, rise, cause(r.get("message"))
    return (1 if math.isfinite(rise) and rise > GROWTH else 0), rise, ""


def main():
    args = cbrun.figure_args("stability_map", __doc__)
    cols, rows = cbrun.load_sweep(args.folder, "stability_map", ("dt", "cloth.stretch"))
    cbrun.warn_models(rows, key=lambda r: cbrun.material(cbrun.model_of(r)), what="stability_map")
    import numpy as np
    from matplotlib.colors import ListedColormap
    from matplotlib.patches import Patch
    ks = sorted({cbrun.num(r["cloth.stretch"]) for r in rows})
    dts = sorted({cbrun.num(r["dt"]) for r in rows})
    solvers = []
    for r in rows:
        if r["solver"] not in solvers:
            solvers.append(r["solver"])
    cells, table = {}, []
    for r in rows:
        k, dt = cbrun.num(r["cloth.stretch"]), cbrun.num(r["dt"])
        o, rise, letter = outcome(np, args.folder, r)
        cells[(r["solver"], k, dt)] = (o, letter)
        table.append([r["solver"], k, dt, OUTCOMES[o], rise, r["status"], r.get("message", "")])
    plt = cbrun.use_agg()
    ncol = 4
    nrow = (len(solvers) + 1 + ncol - 1) // ncol
    fig, axes = plt.subplots(nrow, ncol, figsize=(3.0 * ncol, 2.7 * nrow), squeeze=False)
    cmap = ListedColormap(COLOURS)
    print("largest dt that is ok, per stiffness k [N/m] = %s" % ", ".join("%g" % k for k in ks))
    for i, solver in enumerate(solvers):
        ax = axes[i // ncol][i % ncol]
        grid = np.full((len(ks), len(dts)), np.nan)
        for a, k in enumerate(ks):
            for b, dt in enumerate(dts):
                c = cells.get((solver, k, dt))
                if c is None:
                    continue
                grid[a, b] = c[0]
                if c[1]:
                    ax.text(b, a, c[1], ha="center", va="center", fontsize=7, color="white")
        ax.imshow(grid, cmap=cmap, vmin=-0.5, vmax=len(OUTCOMES) - 0.5, origin="lower", aspect="auto")
        ax.set_xticks(range(len(dts)))
        ax.set_xticklabels(["%.2g" % d for d in dts], rotation=45, fontsize=6.5)
        ax.set_yticks(range(len(ks)))
        ax.set_yticklabels(["%g" % k for k in ks], fontsize=6.5)
        ax.set_xlabel("dt [s]")
        ax.set_ylabel("stretch stiffness [N/m]")
        ax.grid(False)
        ax.set_title(solver)
        best = []
        for a, k in enumerate(ks):
            ok = [dts[b] for b in range(len(dts)) if grid[a, b] == 0]
            best.append("%.3g" % max(ok) if ok else "none")
        print("%-10s %s" % (solver, ", ".join(best)))
    for j in range(len(solvers), nrow * ncol):
        axes[j // ncol][j % ncol].axis("off")
    legend_ax = axes[(nrow * ncol - 1) // ncol][(nrow * ncol - 1) % ncol]
    legend_ax.legend(handles=[Patch(color=c, label=o) for c, o in zip(COLOURS, OUTCOMES)], loc="center",
                     title="outcome (letters: E energy,\nS strain, N non-finite)", fontsize=8)
    fig.suptitle("Stability map: hanging 10 x 10 released horizontal, 1 s; each method stepping at dt itself")
    out = cbrun.save(fig, os.path.join(args.folder, "stability_map.png"),
                     ["solver", "stretch [N/m]", "dt [s]", "outcome", "energy_rise [E_ref]", "status", "message"],
                     table)
    print("wrote " + ", ".join(out))


if __name__ == "__main__":
    main()
