#!/usr/bin/env python3
"""analysis/figures/avgforce_prediction.py — Jin et al. 2020, Figure 5.

Reads the output folder of `clothbench sweep experiments/figures/avgforce_prediction.yaml`
(index.csv and one run file per dt and predictor, plus the explicit reference runs) and
plots the one-step displacement prediction error |x_1 - x_ref| / |x_ref - x_0| (all
vertices, frame 1 = the state after one step of dt from the same initial state) of the
average-force predictor and of the instantaneous-force predictor against dt (left), and
the average-force error relative to the instantaneous one (right; the paper claims it is
5-10% lower and improves as dt grows). The reference x_ref is explicit with 2000 substeps
at the same dt. Writes avgforce_prediction.png and .pdf into the folder and prints the table.
"""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import cbrun  # noqa: E402


def first_step(folder, row):
    f = cbrun.open_run(os.path.join(folder, row["file"]))
    if cbrun.attr(f, "status") != "ok":
        cbrun.fail("%s: status %s (%s)" % (row["file"], cbrun.attr(f, "status"), cbrun.attr(f, "message")))
    if "frames" not in f or f["frames/positions"].shape[0] < 2:
        cbrun.fail("%s: needs /frames with at least 2 frames (frame_rate high enough for one per step)" % row["file"])
    x0, x1 = f["frames/positions"][0], f["frames/positions"][1]
    t1 = float(f["frames/time"][1])
    f.close()
    return x0, x1, t1


def main():
    args = cbrun.figure_args("avgforce_prediction", __doc__)
    cols, rows = cbrun.load_sweep(args.folder, "avgforce_prediction", ("dt", "solvers.avgforce.predictor"))
    import numpy as np
    ref, pred = {}, {}
    try:
        for r in rows:
            dt = cbrun.num(r["dt"])
            if r["solver"] == "explicit":
                ref[dt] = first_step(args.folder, r)
            elif r["solver"] == "avgforce":
                pred[(r["solvers.avgforce.predictor"], dt)] = first_step(args.folder, r)
    except cbrun.RunError as e:
        cbrun.fail(str(e))
    dts = sorted(d for d in ref if ("average", d) in pred and ("instantaneous", d) in pred)
    if not dts:
        cbrun.fail("%s: no dt with an explicit reference and both predictors" % args.folder)
    err = {"average": [], "instantaneous": []}
    print("%10s %14s %14s %14s %10s" % ("dt", "|dx_ref|", "err average", "err instant", "avg/inst"))
    for d in dts:
        x0, xr, tr = ref[d]
        scale = np.linalg.norm(xr - x0)
        for p in err:
            x0p, x1p, t1 = pred[(p, d)]
            if abs(t1 - tr) > 1e-12 or np.max(np.abs(x0p - x0)) > 1e-12:
                cbrun.fail("dt %g: the %s run does not start from the reference state or time" % (d, p))
            err[p].append(np.linalg.norm(x1p - xr) / scale)
        print("%10.3g %14.4g %14.4g %14.4g %10.4f" % (d, scale, err["average"][-1], err["instantaneous"][-1],
                                                   err["average"][-1] / err["instantaneous"][-1]))
    plt = cbrun.use_agg()
    fig, ax = plt.subplots(1, 2, figsize=(10, 4))
    ax[0].loglog(dts, err["average"], "o-", label="average force (eqs 8-16)")
    ax[0].loglog(dts, err["instantaneous"], "s--", label="instantaneous force (eq 10)")
    ax[0].set_xlabel("dt (s)")
    ax[0].set_ylabel("|x - x_ref| / |x_ref - x_0| after one step")
    ax[0].legend()
    ax[0].grid(True, which="both", alpha=0.3)
    ratio = 100.0 * (1.0 - np.array(err["average"]) / np.array(err["instantaneous"]))
    ax[1].semilogx(dts, ratio, "o-")
    ax[1].axhspan(5, 10, color="0.85", label="paper's claim: 5-10% lower")
    ax[1].axhline(0, color="k", lw=0.5)
    ax[1].set_xlabel("dt (s)")
    ax[1].set_ylabel("error reduction of average force (%)")
    ax[1].legend()
    ax[1].grid(True, which="both", alpha=0.3)
    fig.suptitle("One-step displacement prediction error (free_flight, soft springs)")
    png, pdf = cbrun.save(fig, os.path.join(args.folder, "avgforce_prediction.png"))
    print("wrote %s and %s" % (png, pdf))


if __name__ == "__main__":
    main()
