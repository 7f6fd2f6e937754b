#!/usr/bin/env python3
"""analysis/figures/avgforce_prediction.py — Jin et al. 2020, Figure 5.

Reads the output folder of `clothbench sweep experiments/figures/avgforce_prediction.yaml`
(index.csv and one run file per dt and predictor, plus the explicit reference runs) and
plots the one-step displacement prediction error |x_1 - x_ref| / |x_ref - x_0| (all
vertices, frame 1 = the state after one step of dt from the same initial state) of the
average-force predictor and of the instantaneous-force predictor against dt, both on log
axes (left), and their ratio average / instantaneous (right, log axis). The paper claims
the average-force error is 5-10% lower than the instantaneous one and that the gain grows
with dt: drawn as the band 0.90-0.95 times the instantaneous error (left) and as the
ratio band 0.90-0.95 (right). The title says what we measured on which scene. Why the
ratio is above 1 here: free_flight starts without strain rate (uniform stretch, rigid
motion), so the jerk j, where the average force halves the error (dt^3 j/12 against
dt^3 j/6), is small, and the next term, the snap s, dominates: from rest the
average-force error is dt^4 s/12, the instantaneous one dt^4 s/24 (ratio 2; measured
2.01 at dt 1 ms without the spin). The
reference x_ref is explicit with 2000 substeps at the same dt. Writes
avgforce_prediction.png, .pdf and .csv (dt, |dx_ref|, both errors, ratio) into the folder
and prints the table.
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
    ea, ei = np.array(err["average"]), np.array(err["instantaneous"])
    ratio = ea / ei
    table = [[float(d), float(np.linalg.norm(ref[d][1] - ref[d][0])), float(ea[k]), float(ei[k]), float(ratio[k])]
             for k, d in enumerate(dts)]
    plt = cbrun.use_agg()
    fig, ax = plt.subplots(1, 2, figsize=(9.5, 4.2))
    ax[0].fill_between(dts, 0.90 * ei, 0.95 * ei, color="0.8", label="paper's claim: 5-10% below instantaneous")
    ax[0].loglog(dts, ea, "o-", label="average force (eqs 8-16)")
    ax[0].loglog(dts, ei, "s--", label="instantaneous force (eq 10)")
    ax[0].set_xlabel("dt [s]")
    ax[0].set_ylabel("|x - x_ref| / |x_ref - x_0| after one step [-]")
    ax[0].legend(loc="best")
    ax[0].grid(True, which="both", alpha=0.3)
    ax[1].axhspan(0.90, 0.95, color="0.8", label="paper's claim: 0.90-0.95")
    ax[1].loglog(dts, ratio, "o-", color="tab:blue", label="measured")
    ax[1].axhline(1.0, color="k", lw=0.5)
    ax[1].axhline(0.5, color="tab:green", lw=0.8, ls=":", label="0.5: leading-order theory (dt^3 j/12 vs j/6)")
    ax[1].set_xlabel("dt [s]")
    ax[1].set_ylabel("error average / error instantaneous [-]")
    ax[1].set_yticks([0.5, 1, 2, 4, 8])
    ax[1].set_yticklabels(["0.5", "1", "2", "4", "8"])
    ax[1].legend(loc="best")
    ax[1].grid(True, which="both", alpha=0.3)
    better = [d for d, r in zip(dts, ratio) if r < 1]
    worse = [d for d, r in zip(dts, ratio) if r >= 1]
    found = "average/instantaneous error %.2f at dt %g s" % (ratio[0], dts[0])
    if better and worse:
        found += ", below 1 up to dt %g s, %.1f at dt %g s" % (max(better), ratio[-1], dts[-1])
    else:
        found += ", %.2f at dt %g s" % (ratio[-1], dts[-1])
    fig.suptitle("Jin et al. Fig. 5, one-step prediction error on free_flight (soft springs, 3%% stretched, "
                 "spinning)\nfound: %s; paper: 5-10%% lower, improving with dt\n"
                 "(a start without strain rate: the snap term, where average force doubles the error, "
                 "outweighs the jerk term, where it halves it)" % found, fontsize=8.5)
    out = cbrun.save(fig, os.path.join(args.folder, "avgforce_prediction.png"),
                     ["dt [s]", "ref_displacement [m]", "error_average [-]", "error_instantaneous [-]",
                      "ratio_average_over_instantaneous [-]"], table)
    print("wrote " + ", ".join(out))


if __name__ == "__main__":
    main()
