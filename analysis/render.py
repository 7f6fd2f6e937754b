#!/usr/bin/env python3
"""analysis/render.py — shaded pictures of a run: the cloth and its colliders.

    render.py RUN.h5                      the last frame -> RUN_frame<K>.png
    render.py RUN.h5 --frame K            frame K (negative counts from the end)
    render.py RUN.h5 --every K            every K-th frame -> RUN_frames/frame_<K>.png
    render.py RUN.h5 --sheet [--cols 4 --count 12]   a contact sheet -> RUN_sheet.png
    render.py RUN.h5 --mp4 [--fps 30]     every frame -> RUN.mp4 (needs ffmpeg)

The cloth is drawn with flat shading (a headlight-style Lambert term per triangle, front
and back in two colours), colliders (sphere, plane, box, capsule) from the scene text
stored in the run file, at their position at the frame's time. -o sets the output
(file for one picture or the sheet, folder for --every, .mp4 for --mp4).
"""
import argparse
import math
import os
import shutil
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import cbrun  # noqa: E402

LIGHT = (0.35, -0.55, 0.76)


def shade(np, tri, front, back):
    n = np.cross(tri[:, 1] - tri[:, 0], tri[:, 2] - tri[:, 0])
    norm = np.linalg.norm(n, axis=1, keepdims=True)
    n = n / np.where(norm > 0, norm, 1)
    light = np.asarray(LIGHT) / np.linalg.norm(LIGHT)
    d = n @ light
    base = np.where((d >= 0)[:, None], np.asarray(front)[None, :], np.asarray(back)[None, :])
    k = 0.35 + 0.65 * np.abs(d)
    rgb = np.clip(base * k[:, None], 0, 1)
    return np.concatenate([rgb, np.ones((len(rgb), 1))], axis=1)


def sphere_mesh(np, c, r, n=18):
    u, v = np.meshgrid(np.linspace(0, 2 * math.pi, 2 * n), np.linspace(0, math.pi, n))
    return (c[0] + r * np.cos(u) * np.sin(v), c[1] + r * np.sin(u) * np.sin(v), c[2] + r * np.cos(v))


def rotation(np, rot):
    if not rot:
        return np.eye(3)
    axis = np.asarray(rot.get("axis", [0, 0, 1]), float)
    axis = axis / (np.linalg.norm(axis) or 1)
    a = math.radians(float(rot.get("angle", 0)))
    K = np.array([[0, -axis[2], axis[1]], [axis[2], 0, -axis[0]], [-axis[1], axis[0], 0]])
    return np.eye(3) + math.sin(a) * K + (1 - math.cos(a)) * K @ K


def draw_colliders(np, ax, colliders, t, extent):
    from mpl_toolkits.mplot3d.art3d import Poly3DCollection
    for c in colliders or []:
        kind = c.get("type")
        vel = np.asarray(c.get("velocity", [0, 0, 0]), float)
        off = vel * t
        style = dict(color=(0.55, 0.62, 0.72), alpha=0.35, linewidth=0)
        if kind == "sphere":
            ax.plot_surface(*sphere_mesh(np, np.asarray(c["center"], float) + off, float(c["radius"])), **style)
        elif kind == "capsule":
            p0 = np.asarray(c["p0"], float) + off
            p1 = np.asarray(c["p1"], float) + off
            r = float(c["radius"])
            for p in (p0, p1):
                ax.plot_surface(*sphere_mesh(np, p, r, 10), **style)
            d = p1 - p0
            L = np.linalg.norm(d) or 1.0
            a = d / L
            tmp = np.array([1.0, 0, 0]) if abs(a[0]) < 0.9 else np.array([0, 1.0, 0])
            e1 = np.cross(a, tmp)
            e1 /= np.linalg.norm(e1)
            e2 = np.cross(a, e1)
            th, s = np.meshgrid(np.linspace(0, 2 * math.pi, 24), np.linspace(0, 1, 2))
            pts = [p0[k] + s * d[k] + r * (np.cos(th) * e1[k] + np.sin(th) * e2[k]) for k in range(3)]
            ax.plot_surface(*pts, **style)
        elif kind == "plane":
            p = np.asarray(c.get("point", [0, 0, 0]), float) + off
            n = np.asarray(c.get("normal", [0, 0, 1]), float)
            n = n / (np.linalg.norm(n) or 1)
            tmp = np.array([1.0, 0, 0]) if abs(n[0]) < 0.9 else np.array([0, 1.0, 0])
            e1 = np.cross(n, tmp)
            e1 /= np.linalg.norm(e1)
            e2 = np.cross(n, e1)
            ctr = extent.mean(axis=0)
            ctr = ctr - np.dot(ctr - p, n) * n
            h = 0.75 * float(np.max(extent[1] - extent[0]))
            quad = [ctr + h * (sx * e1 + sy * e2) for sx, sy in ((-1, -1), (1, -1), (1, 1), (-1, 1))]
            ax.add_collection3d(Poly3DCollection([quad], facecolor=(0.75, 0.75, 0.7, 0.35), edgecolor="none"))
        elif kind == "box":
            ctr = np.asarray(c.get("center", [0, 0, 0]), float) + off
            half = 0.5 * np.asarray(c.get("size", [1, 1, 1]), float)
            R = rotation(np, c.get("rotation"))
            corners = np.array([[sx, sy, sz] for sx in (-1, 1) for sy in (-1, 1) for sz in (-1, 1)]) * half
            corners = corners @ R.T + ctr
            faces = [[0, 1, 3, 2], [4, 5, 7, 6], [0, 1, 5, 4], [2, 3, 7, 6], [0, 2, 6, 4], [1, 3, 7, 5]]
            ax.add_collection3d(Poly3DCollection([corners[f] for f in faces], facecolor=(0.55, 0.62, 0.72, 0.3),
                                                 edgecolor=(0.3, 0.3, 0.3, 0.4)))


class Run:
    def __init__(self, path, allow_unfinished):
        import numpy as np
        self.np = np
        self.f = cbrun.open_run(path, allow_unfinished=allow_unfinished)
        f = self.f
        if "frames" not in f or "positions" not in f["frames"] or f["frames"]["positions"].shape[0] == 0:
            raise cbrun.RunError("%s: the run file has no frames (written with --no-frames?)" % path)
        self.X = f["frames"]["positions"]
        self.T = f["frames"]["time"][()]
        self.faces = f["mesh"]["faces"][()]
        try:
            scene = cbrun.parse_scene(cbrun.attr(f, "scene_text")) or {}
        except Exception as exc:  # a scene text we cannot parse only loses the colliders
            sys.stderr.write("warning: colliders not drawn (scene text not understood: %s)\n" % exc)
            scene = {}
        self.colliders = scene.get("colliders") or []
        self.title = "%s on %s" % (cbrun.attr(f, "solver"), cbrun.attr(f, "scene_name"))
        allx = self.X[()]
        lo = np.nanmin(allx.reshape(-1, 3), axis=0)
        hi = np.nanmax(allx.reshape(-1, 3), axis=0)
        self.extent = np.array([lo, hi])

    def draw(self, ax, k):
        np = self.np
        from mpl_toolkits.mplot3d.art3d import Poly3DCollection
        x = self.X[k]
        tri = x[self.faces]
        ax.add_collection3d(Poly3DCollection(tri, facecolors=shade(np, tri, (0.85, 0.35, 0.25), (0.3, 0.5, 0.8)),
                                             edgecolor="none"))
        draw_colliders(np, ax, self.colliders, float(self.T[k]), self.extent)
        ctr = self.extent.mean(axis=0)
        h = 0.55 * float(np.max(self.extent[1] - self.extent[0])) or 0.5
        ax.set_xlim(ctr[0] - h, ctr[0] + h)
        ax.set_ylim(ctr[1] - h, ctr[1] + h)
        ax.set_zlim(ctr[2] - h, ctr[2] + h)
        try:
            ax.set_box_aspect((1, 1, 1))
        except AttributeError:
            pass
        ax.view_init(elev=22, azim=-60)
        ax.set_axis_off()
        ax.set_title("t = %.3f s" % self.T[k], fontsize=9)


def load_or_fail(path):
    """A finished run with frames, or exit with the reason (the figure scripts' loader)."""
    try:
        return Run(path, False)
    except cbrun.RunError as e:
        cbrun.fail(str(e))


def render_one(plt, run, k, out, size):
    fig = plt.figure(figsize=size)
    ax = fig.add_subplot(projection="3d")
    run.draw(ax, k)
    fig.suptitle(run.title, fontsize=10)
    fig.savefig(out, dpi=110)
    plt.close(fig)
    return out


def main(argv=None):
    ap = argparse.ArgumentParser(description="Shaded frames of a run file (cloth and colliders) as PNG, a contact "
                                             "sheet, or an MP4 when ffmpeg is installed.",
                                 epilog="Fails with a clear message on a missing or unfinished run file.")
    ap.add_argument("run", metavar="RUN.h5")
    g = ap.add_mutually_exclusive_group()
    g.add_argument("--frame", type=int, default=-1, help="frame index (default -1: the last)")
    g.add_argument("--every", type=int, metavar="K", help="every K-th frame to a folder of PNGs")
    g.add_argument("--sheet", action="store_true", help="a contact sheet of --count frames")
    g.add_argument("--mp4", action="store_true", help="an MP4 of every frame (needs ffmpeg)")
    ap.add_argument("--count", type=int, default=12, help="frames on the contact sheet (default 12)")
    ap.add_argument("--cols", type=int, default=4, help="columns of the contact sheet (default 4)")
    ap.add_argument("--fps", type=int, default=30, help="MP4 frame rate (default 30)")
    ap.add_argument("--size", default="6x5", help="picture size in inches, WxH (default 6x5)")
    ap.add_argument("-o", "--output", help="output file (or folder for --every)")
    ap.add_argument("--allow-unfinished", action="store_true", help="render a run whose status is running")
    a = ap.parse_args(argv)
    try:
        size = tuple(float(s) for s in a.size.lower().split("x"))
        assert len(size) == 2 and min(size) > 0
    except (ValueError, AssertionError):
        cbrun.fail("--size %s: expected WxH in inches, e.g. 6x5" % a.size)
    plt = cbrun.use_agg()
    try:
        run = Run(a.run, a.allow_unfinished)
    except cbrun.RunError as exc:
        cbrun.fail(str(exc))
    nf = run.X.shape[0]
    stem = os.path.splitext(a.run)[0]
    if a.every:
        if a.every < 1:
            cbrun.fail("--every: expected K >= 1")
        folder = a.output or stem + "_frames"
        os.makedirs(folder, exist_ok=True)
        for k in range(0, nf, a.every):
            render_one(plt, run, k, os.path.join(folder, "frame_%05d.png" % k), size)
        print("wrote %d frames to %s" % (len(range(0, nf, a.every)), folder))
    elif a.sheet:
        count = max(1, min(a.count, nf))
        idx = sorted({int(round(i * (nf - 1) / max(count - 1, 1))) for i in range(count)})
        cols = max(1, min(a.cols, len(idx)))
        rows = int(math.ceil(len(idx) / cols))
        fig = plt.figure(figsize=(size[0] * cols / 2, size[1] * rows / 2))
        for i, k in enumerate(idx):
            run.draw(fig.add_subplot(rows, cols, i + 1, projection="3d"), k)
        fig.suptitle(run.title)
        out = a.output or stem + "_sheet.png"
        fig.savefig(out, dpi=100)
        plt.close(fig)
        print("wrote %s" % out)
    elif a.mp4:
        ffmpeg = shutil.which("ffmpeg")
        if not ffmpeg:
            cbrun.fail("--mp4 needs ffmpeg (apt install ffmpeg); use --every 1 for PNG frames instead")
        out = a.output or stem + ".mp4"
        with tempfile.TemporaryDirectory() as tmp:
            for k in range(nf):
                render_one(plt, run, k, os.path.join(tmp, "f_%05d.png" % k), size)
            cmd = [ffmpeg, "-y", "-loglevel", "error", "-framerate", str(a.fps), "-i",
                   os.path.join(tmp, "f_%05d.png"), "-vf", "pad=ceil(iw/2)*2:ceil(ih/2)*2", "-pix_fmt", "yuv420p", out]
            if subprocess.call(cmd) != 0:
                cbrun.fail("ffmpeg failed: %s" % " ".join(cmd))
        print("wrote %s" % out)
    else:
        k = a.frame if a.frame >= 0 else nf + a.frame
        if not 0 <= k < nf:
            cbrun.fail("--frame %d: the run has %d frames (0..%d)" % (a.frame, nf, nf - 1))
        out = a.output or "%s_frame%d.png" % (stem, k)
        render_one(plt, run, k, out, size)
        print("wrote %s" % out)
    run.f.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
