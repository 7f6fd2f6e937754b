#!/usr/bin/env python3
"""analysis/figures/avgforce_frames.py — Jin et al. 2020, Figures 6 and 7 as pictures.

Reads the output folder of `clothbench sweep experiments/figures/avgforce_frames.yaml`
(index.csv and one sphere_slide run per penetration response, with /frames) and renders
the cloth at a few times (columns) for each response (rows) with matplotlib, the sphere
as a wireframe and the floor at z = 0; vertices inside a collider are drawn in red.
Writes avgforce_frames.png and .pdf into the folder.
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
    args = cbrun.figure_args("avgforce_frames", __doc__, lambda ap: ap.add_argument(
        "--times", default="0.3,0.6,1.0,1.5,3.0", help="comma-separated times to render (s)"))
    cols, rows = cbrun.load_sweep(args.folder, "avgforce_frames", (KEY,))
    import numpy as np
    times = [float(s) for s in args.times.split(",")]
    plt = cbrun.use_agg()
    fig = plt.figure(figsize=(3.2 * len(times), 3.2 * len(rows)))
    u, v = np.mgrid[0:2 * np.pi:24j, 0:np.pi:12j]
    for i, r in enumerate(rows):
        try:
            f = cbrun.open_run(os.path.join(args.folder, r["file"]))
        except cbrun.RunError as e:
            cbrun.fail(str(e))
        if "frames" not in f:
            cbrun.fail("%s: no /frames (run without --no-frames)" % r["file"])
        ft = f["frames/time"][()]
        faces = f["mesh/faces"][()]
        cl = colliders_of(f)
        for j, t in enumerate(times):
            k = int(np.argmin(np.abs(ft - t)))
            x = f["frames/positions"][k]
            ax = fig.add_subplot(len(rows), len(times), i * len(times) + j + 1, projection="3d")
            for c in cl:
                if c.get("type") == "sphere":
                    cc, rr = np.array(c["center"], float), float(c["radius"])
                    ax.plot_wireframe(cc[0] + rr * np.cos(u) * np.sin(v), cc[1] + rr * np.sin(u) * np.sin(v),
                                      cc[2] + rr * np.cos(v), color="0.7", lw=0.3)
            ax.plot_trisurf(x[:, 0], x[:, 1], x[:, 2], triangles=faces, color="tab:blue", alpha=0.8,
                            edgecolor="none")
            bad = inside(np, x, cl)
            if bad.any():
                ax.scatter(x[bad, 0], x[bad, 1], x[bad, 2], color="red", s=2)
            ax.set_xlim(-0.6, 0.6)
            ax.set_ylim(-0.6, 0.6)
            ax.set_zlim(0, 1.0)
            ax.view_init(elev=20, azim=-60)
            ax.set_axis_off()
            ax.set_title("%s, t = %.2f s, %d inside" % (r[KEY], ft[k], int(bad.sum())), fontsize=8)
        f.close()
    png, pdf = cbrun.save(fig, os.path.join(args.folder, "avgforce_frames.png"))
    print("wrote %s and %s" % (png, pdf))


if __name__ == "__main__":
    main()
