#!/usr/bin/env python3
"""analysis/figures/acm_reef_knot.py — Harmon et al. 2009, Figures 8-9: a ribbon reef knot
pulled tight.

Reads the output folder of `clothbench sweep experiments/figures/acm_reef_knot.yaml`
(index.csv and one acm_reef_knot run with /frames) and draws, at evenly spaced times
from loose to tight, the two ribbons (one colour each, shaded) in an oblique view of the
whole and a close-up of the knot seen from above; then against time the knot's length
along the pull (the distance in x between the two bights' tips, max x of the ribbon
whose ends are on the left minus min x of the other) with the distance between the
pulled end rows, and the safety panels of the other acm figures (deepest collider
penetration, self-intersection count, minimum separation against the thickness, events
per simulated second, which grow as the knot tightens). The run file has no per-step
count of active contacts (/series holds no such column), so none is plotted. Writes
acm_reef_knot.png and .pdf into the folder and prints the summary.
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import acm_common as ac  # noqa: E402
import cbrun  # noqa: E402

NAME = "acm_reef_knot"
COLOURS = ((0.85, 0.35, 0.25), (0.25, 0.45, 0.80))


def components(np, faces, nv):
    """Connected component label of every vertex (union-find over the triangles)."""
    parent = np.arange(nv)

    def find(x):
        while parent[x] != x:
            parent[x] = parent[parent[x]]
            x = parent[x]
        return x
    for a, b, c in faces:
        for u, v in ((a, b), (b, c)):
            ru, rv = find(u), find(v)
            if ru != rv:
                parent[ru] = rv
    roots = np.array([find(v) for v in range(nv)])
    _, label = np.unique(roots, return_inverse=True)
    return label


def draw(np, ax, x, faces, fcol, lim, elev, azim, title, aspect=(1, 1, 1)):
    import render
    from mpl_toolkits.mplot3d.art3d import Poly3DCollection
    tri = x[faces]
    rgba = np.empty((len(faces), 4))
    for k, col in enumerate(COLOURS):
        sel = fcol == k
        if sel.any():
            rgba[sel] = render.shade(np, tri[sel], col, tuple(0.8 * c for c in col))
    ax.add_collection3d(Poly3DCollection(tri, facecolors=rgba, edgecolor=(0, 0, 0, 0.15), linewidth=0.2))
    (cx, cy, cz), h = lim
    ax.set_xlim(cx - h * aspect[0], cx + h * aspect[0])
    ax.set_ylim(cy - h * aspect[1], cy + h * aspect[1])
    ax.set_zlim(cz - h * aspect[2], cz + h * aspect[2])
    try:
        ax.set_box_aspect(aspect)
    except AttributeError:
        pass
    ax.view_init(elev=elev, azim=azim)
    ax.set_axis_off()
    ax.set_title(title)


def main():
    args = cbrun.figure_args(NAME, __doc__, lambda ap: ap.add_argument(
        "--frames", type=int, default=5, help="frames from loose to tight (default 5)"))
    cols, rows = ac.rows_of(args.folder, NAME)
    import numpy as np
    plt = cbrun.use_agg()
    r = rows[0]
    f = ac.open_row(args.folder, r, need_frames=True)
    X = f["frames/positions"][()]
    T = f["frames/time"][()]
    faces = f["mesh/faces"][()]
    nv = X.shape[1]
    label = components(np, faces, nv)
    if label.max() != 1:
        cbrun.fail("%s: expected two ribbons (two connected components), found %d" % (r["file"], label.max() + 1))
    if X[0][label == 1, 0].mean() < X[0][label == 0, 0].mean():
        label = 1 - label                       # 0: ribbon A, ends on the left (bight on the right)
    pinned = ac.pinned_from_frames(np, X)
    knot = np.array([X[k][label == 0, 0].max() - X[k][label == 1, 0].min() for k in range(len(T))])
    ends = np.array([X[k][pinned, 0].max() - X[k][pinned, 0].min() if pinned.any() else np.nan
                     for k in range(len(T))])
    th = float((ac.scene_of(f).get("cloth") or {}).get("thickness", 0.002))

    n = max(args.frames, 2)
    idx = [int(np.argmin(np.abs(T - t))) for t in np.linspace(T[0], T[-1], n)]
    fig = plt.figure(figsize=(3.0 * max(n, 5), 12.0))
    sub = fig.subfigures(3, 1, height_ratios=[2.0, 3.2, 6.0])
    fcol = label[faces[:, 0]]
    whole = X.reshape(-1, 3)
    lim_all = (0.5 * (whole.min(0) + whole.max(0)), 0.5 * float((whole.max(0) - whole.min(0))[0]))
    h0 = 0.5 * knot[0] + 0.01                   # close-ups: the same scale in every frame
    for j, k in enumerate(idx):
        ax = sub[0].add_subplot(1, n, j + 1, projection="3d")
        draw(np, ax, X[k], faces, fcol, lim_all, 55, -75, "t = %.2f s" % T[k], aspect=(1, 0.3, 0.3))
        c = np.array([0.5 * (X[k][label == 0, 0].max() + X[k][label == 1, 0].min()),
                      X[k][~pinned, 1].mean() if pinned.any() else X[k][:, 1].mean(),
                      X[k][~pinned, 2].mean() if pinned.any() else X[k][:, 2].mean()])
        ax = sub[1].add_subplot(1, n, j + 1, projection="3d")
        draw(np, ax, X[k], faces, fcol, (c, h0), 62, -80, "close-up, knot %.0f mm long" % (1e3 * knot[k]))
    fig.suptitle("acm: %s (ribbon A red, ribbon B blue): whole (top row) and close-up of the knot"
                 % r["scene"])

    grid = sub[2].subplots(2, 3)
    axes = [grid[0, 0], grid[0, 1], grid[0, 2], grid[1, 0], grid[1, 1]]
    grid[1, 2].set_axis_off()
    axes[0].plot(T, 1e3 * knot, label="knot length (bight tip to tip)")
    axes[0].plot(T, 1e3 * ends, "--", label="distance between pulled end rows")
    axes[0].set_ylabel("along the pull [mm]")
    axes[0].set_xlabel("time [s]")
    axes[0].legend(loc="best")
    table = []
    s = ac.safety_panels(axes[1:], f, "acm", table)
    ac.finish_safety_panels(axes[1:])
    axes[3].axhline(th, color="k", lw=0.8, ls=":", label="thickness")
    axes[3].legend(loc="best")
    for row in table:
        k = int(np.argmin(np.abs(T - row[1])))
        row += [float(1e3 * knot[k]), float(1e3 * ends[k])]
    t = cbrun.series(f, "time")
    ev, dt = cbrun.series(f, "events"), cbrun.series(f, "dt")
    rate = ev / np.where(dt > 0, dt, np.nan)
    n10 = max(1, len(t) // 10)
    wall = float(np.nansum(cbrun.series(f, "wall_step_s")))
    print("%s: status %s, deepest collider penetration %s m, max self intersections %s, min separation %s m"
          % (r["scene"], cbrun.attr(f, "status"), cbrun.fmt(s["max_depth"]), cbrun.fmt(s["max_self"]),
             cbrun.fmt(s["min_sep"])))
    print("knot length %.1f mm -> %.1f mm, end rows %.1f mm -> %.1f mm; events %d in %.1f s of stepping"
          % (1e3 * knot[0], 1e3 * knot[-1], 1e3 * ends[0], 1e3 * ends[-1], int(np.nansum(ev)), wall))
    print("events per simulated second: first tenth %.3g, last tenth %.3g" % (np.nanmean(rate[1:n10 + 1]),
                                                                              np.nanmean(rate[-n10:])))
    f.close()
    out = cbrun.save(fig, os.path.join(args.folder, NAME + ".png"),
                     ac.SAFETY_HEADER + ["knot_length_nearest_frame [mm]", "end_rows_nearest_frame [mm]"], table)
    print("wrote " + ", ".join(out))


if __name__ == "__main__":
    main()
