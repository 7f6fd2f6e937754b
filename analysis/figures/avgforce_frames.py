#!/usr/bin/env python3
"""analysis/figures/avgforce_frames.py — Jin et al. 2020, Figures 6 and 7 as pictures.

Reads the output folder of `clothbench sweep experiments/figures/avgforce_penetration.yaml`
(the same sphere_slide runs as avgforce_penetration.py, one per penetration response, with
/frames; nothing is run again) and renders the cloth at a few times (columns) for each
response (rows) with matplotlib: the sphere as a wireframe, the floor (z = 0) as a grey
square, vertices inside a collider in red. Each row's camera is framed on its data (the
cloth at the rendered times and the sphere, equal axes), so a cloth that falls through
the floor (response none) stays in view. Writes avgforce_frames.png, .pdf and .csv
(response, time, vertices inside a collider, lowest and highest cloth z) into the folder.
"""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import cbrun  # noqa: E402

KEY = "solvers.avgforce.response"


def colliders_of(f):
    scene = cbrun.parse_scene(cbrun.attr(f, "scene_text"))
    return scene.get("colliders", []) if isinstance(scene, dict) else []


def inside(np, x, colliders):
    bad = np.zeros(len(x), dtype=bool)
    for c in colliders:
        if c.get("type") == "sphere":
            bad |= np.linalg.norm(x - np.array(c["center"], float), axis=1) < float(c["radius"])
        elif c.get("type") == "plane":
            n = np.array(c.get("normal", [0, 0, 1]), float)
            n /= np.linalg.norm(n)
            bad |= (x - np.array(c.get("point", [0, 0, 0]), float)) @ n < 0
    return bad


def main():
    def extra(ap):
        ap.add_argument("--times", default="0.3,0.6,1.0,1.5,3.0", help="comma-separated times to render (s)")
        ap.add_argument("--responses", default="none,sat",
                        help="comma-separated responses to show, one row each (default: none,sat as in the paper)")
    args = cbrun.figure_args("avgforce_penetration", __doc__, extra)
    cols, rows = cbrun.load_sweep(args.folder, "avgforce_penetration", (KEY,))
    import numpy as np
    times = [float(s) for s in args.times.split(",")]
    want = [s for s in args.responses.split(",") if s]
    by = {r[KEY]: r for r in rows}
    missing = [s for s in want if s not in by]
    if missing:
        cbrun.fail("%s: no run with %s = %s" % (args.folder, KEY, ",".join(missing)))
    plt = cbrun.use_agg()
    fig = plt.figure(figsize=(3.2 * len(times), 3.4 * len(want)))
    u, v = np.mgrid[0:2 * np.pi:24j, 0:np.pi:12j]
    table = []
    for i, name in enumerate(want):
        r = by[name]
        try:
            f = cbrun.open_run(os.path.join(args.folder, r["file"]))
        except cbrun.RunError as e:
            cbrun.fail(str(e))
        if "frames" not in f:
            cbrun.fail("%s: no /frames (run without --no-frames)" % r["file"])
        ft = f["frames/time"][()]
        faces = f["mesh/faces"][()]
        cl = colliders_of(f)
        ks = [int(np.argmin(np.abs(ft - t))) for t in times]
        xs = [f["frames/positions"][k] for k in ks]
        f.close()
        # the camera: a cube around the cloth at these times and the sphere
        pts = [x for x in xs]
        for c in cl:
            if c.get("type") == "sphere":
                cc, rr = np.array(c["center"], float), float(c["radius"])
                pts.append(np.array([cc - rr, cc + rr]))
        allp = np.vstack(pts)
        lo, hi = allp.min(axis=0), allp.max(axis=0)
        mid, half = 0.5 * (lo + hi), 0.5 * float(np.max(hi - lo)) * 1.05
        for j, (k, x) in enumerate(zip(ks, xs)):
            ax = fig.add_subplot(len(want), len(times), i * len(times) + j + 1, projection="3d")
            for c in cl:
                if c.get("type") == "sphere":
                    cc, rr = np.array(c["center"], float), float(c["radius"])
                    ax.plot_wireframe(cc[0] + rr * np.cos(u) * np.sin(v), cc[1] + rr * np.sin(u) * np.sin(v),
                                      cc[2] + rr * np.cos(v), color="0.7", lw=0.3)
                elif c.get("type") == "plane":
                    n = np.array(c.get("normal", [0, 0, 1]), float)
                    if abs(n[0]) + abs(n[1]) == 0:  # a horizontal floor: the square under the view
                        z0 = float(np.array(c.get("point", [0, 0, 0]), float)[2])
                        gx, gy = np.meshgrid([mid[0] - half, mid[0] + half], [mid[1] - half, mid[1] + half])
                        ax.plot_surface(gx, gy, np.full_like(gx, z0), color="0.6", alpha=0.3, shade=False)
            ax.plot_trisurf(x[:, 0], x[:, 1], x[:, 2], triangles=faces, color="tab:blue", alpha=0.8,
                            edgecolor="none")
            bad = inside(np, x, cl)
            if bad.any():
                ax.scatter(x[bad, 0], x[bad, 1], x[bad, 2], color="red", s=2)
            ax.set_xlim(mid[0] - half, mid[0] + half)
            ax.set_ylim(mid[1] - half, mid[1] + half)
            ax.set_zlim(mid[2] - half, mid[2] + half)
            ax.set_box_aspect((1, 1, 1))
            ax.view_init(elev=20, azim=-60)
            ax.set_axis_off()
            ax.set_title("%s, t = %.2f s, %d inside" % (name, ft[k], int(bad.sum())), fontsize=8)
            table.append([name, float(ft[k]), int(bad.sum()), float(x[:, 2].min()), float(x[:, 2].max())])
    fig.suptitle("sphere_slide (runs of avgforce_penetration): without (none) and with (sat) the separating-axis "
                 "response; red: vertices inside a collider", fontsize=10)
    out = cbrun.save(fig, os.path.join(args.folder, "avgforce_frames.png"),
                     ["response", "time [s]", "vertices_inside_collider [-]", "cloth_z_min [m]", "cloth_z_max [m]"],
                     table)
    print("wrote " + ", ".join(out))


if __name__ == "__main__":
    main()
