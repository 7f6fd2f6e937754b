#!/usr/bin/env python3
"""analysis/render.py — shaded pictures of a run: the cloth and its colliders.

    render.py RUN.h5                      the last frame -> RUN_frame<K>.png
    render.py RUN.h5 --frame K            frame K (negative counts from the end)
    render.py RUN.h5 --every K            every K-th frame -> RUN_frames/frame_<K>.png
    render.py RUN.h5 --sheet [--cols 4 --count 12]   a contact sheet -> RUN_sheet.png
    render.py RUN.h5 --mp4 [--fps 30]     every frame -> RUN.mp4 (needs ffmpeg)

Rendered with VTK off screen (the vtk module of Debian's python3-paraview, or python3-vtk9),
so occlusion is right: the cloth
smooth-shaded with two-sided lighting (front and back in two colours), the colliders
(sphere, plane as a finite floor under the cloth, box, capsule, triangle mesh from the
OBJ the scene names) from the scene text stored in the run file, at their position at the
frame's time. The camera frames the cloth over every frame shown together with the
colliders' bounded parts (--azimuth, --elevation, --zoom to change it). Without an X
display VTK needs one: render.py then runs itself under xvfb-run (Debian's xvfb).
-o sets the output (file for one picture or the sheet, folder for --every, .mp4 for --mp4).
Figure scripts draw frames into 2D matplotlib axes with Run.draw(ax, k) (an image);
given a 3D axes, Run.draw falls back to the old matplotlib drawing.
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


# ---------------------------------------------------------------- VTK

def ensure_display(argv):
    """VTK's Debian build renders through X: without a display, run the running script
    (sys.argv[0], with argv) again under xvfb-run, once. Call it first in main()."""
    if os.environ.get("DISPLAY") or os.environ.get("CB_RENDER_XVFB"):
        return
    xvfb = shutil.which("xvfb-run")
    if not xvfb:
        cbrun.fail("render.py: no X display and no xvfb-run: apt install xvfb (VTK renders through X)")
    env = dict(os.environ, CB_RENDER_XVFB="1")
    os.execve(xvfb, [xvfb, "-a", "-s", "-screen 0 1600x1200x24", sys.executable,
                     os.path.abspath(sys.argv[0])] + list(argv), env)


def _vtk():
    try:
        import vtk
        from vtk.util import numpy_support
    except ImportError:
        cbrun.fail("render.py: VTK is not available for %s (apt install python3-paraview, which brings VTK's Python modules; use /usr/bin/python3)"
                   % sys.executable)
    return vtk, numpy_support


def _polydata(vtk, numpy_support, np, x, faces):
    pts = vtk.vtkPoints()
    pts.SetData(numpy_support.numpy_to_vtk(np.ascontiguousarray(x, dtype=np.float64), deep=True))
    cells = vtk.vtkCellArray()
    f = np.asarray(faces, dtype=np.int64)
    conn = np.hstack([np.full((len(f), 1), 3, dtype=np.int64), f]).ravel()
    cells.SetCells(len(f), numpy_support.numpy_to_vtkIdTypeArray(conn, deep=True))
    pd = vtk.vtkPolyData()
    pd.SetPoints(pts)
    pd.SetPolys(cells)
    return pd


def _actor(vtk, source_or_pd, color, opacity=1.0, transform=None, smooth=False):
    m = vtk.vtkPolyDataMapper()
    if isinstance(source_or_pd, vtk.vtkPolyData):
        data = source_or_pd
    else:
        source_or_pd.Update()
        data = source_or_pd.GetOutput()
    if transform is not None:
        tf = vtk.vtkTransformPolyDataFilter()
        tf.SetInputData(data)
        tf.SetTransform(transform)
        tf.Update()
        data = tf.GetOutput()
    if smooth:
        nf = vtk.vtkPolyDataNormals()
        nf.SetInputData(data)
        nf.SetFeatureAngle(60)
        nf.SplittingOff()
        nf.ConsistencyOff()
        nf.Update()
        data = nf.GetOutput()
    m.SetInputData(data)
    a = vtk.vtkActor()
    a.SetMapper(m)
    a.GetProperty().SetColor(*color)
    a.GetProperty().SetOpacity(opacity)
    return a, data.GetBounds()


class Renderer:
    """An off-screen VTK scene of one run: cloth and colliders; image(k) -> RGB array."""

    def __init__(self, run, width=900, height=700, azimuth=-60.0, elevation=22.0, zoom=1.0, frames=None):
        self.vtk, self.ns = _vtk()
        self.run = run
        self.size = (int(width), int(height))
        self.view = (float(azimuth), float(elevation), float(zoom))
        np = run.np
        idx = range(run.X.shape[0]) if frames is None else frames
        xs = np.concatenate([run.X[k] for k in idx])
        self.cloth_bounds = np.array([np.nanmin(xs, axis=0), np.nanmax(xs, axis=0)])

    def collider_actors(self, t):
        vtk, np = self.vtk, self.run.np
        actors = []
        lo, hi = self.cloth_bounds
        span = float(np.max(hi - lo)) or 1.0
        grey = (0.62, 0.66, 0.72)
        for c in self.run.colliders:
            kind = c.get("type")
            off = np.asarray(c.get("velocity", [0, 0, 0]), float) * t
            if kind == "sphere":
                src = vtk.vtkSphereSource()
                src.SetCenter(*(np.asarray(c["center"], float) + off))
                src.SetRadius(float(c["radius"]))
                src.SetThetaResolution(64)
                src.SetPhiResolution(48)
                actors.append(_actor(vtk, src, grey) + (True,))
            elif kind == "capsule":
                p0, p1 = np.asarray(c["p0"], float) + off, np.asarray(c["p1"], float) + off
                r = float(c["radius"])
                for p in (p0, p1):
                    src = vtk.vtkSphereSource()
                    src.SetCenter(*p)
                    src.SetRadius(r)
                    src.SetThetaResolution(32)
                    src.SetPhiResolution(24)
                    actors.append(_actor(vtk, src, grey) + (True,))
                line = vtk.vtkLineSource()
                line.SetPoint1(*p0)
                line.SetPoint2(*p1)
                tube = vtk.vtkTubeFilter()
                tube.SetInputConnection(line.GetOutputPort())
                tube.SetRadius(r)
                tube.SetNumberOfSides(48)
                actors.append(_actor(vtk, tube, grey) + (True,))
            elif kind == "box":
                src = vtk.vtkCubeSource()
                size = np.asarray(c.get("size", [1, 1, 1]), float)
                src.SetXLength(size[0])
                src.SetYLength(size[1])
                src.SetZLength(size[2])
                tr = vtk.vtkTransform()
                tr.PostMultiply()
                rot = c.get("rotation")
                if rot:
                    tr.RotateWXYZ(float(rot.get("angle", 0)), *[float(v) for v in rot.get("axis", [0, 0, 1])])
                tr.Translate(*(np.asarray(c.get("center", [0, 0, 0]), float) + off))
                actors.append(_actor(vtk, src, grey, 0.45, tr) + (True,))
            elif kind == "plane":
                p = np.asarray(c.get("point", [0, 0, 0]), float) + off
                n = np.asarray(c.get("normal", [0, 0, 1]), float)
                n = n / (np.linalg.norm(n) or 1)
                ctr = 0.5 * (lo + hi)
                ctr = ctr - np.dot(ctr - p, n) * n
                tmp = np.array([1.0, 0, 0]) if abs(n[0]) < 0.9 else np.array([0, 1.0, 0])
                e1 = np.cross(n, tmp)
                e1 /= np.linalg.norm(e1)
                e2 = np.cross(n, e1)
                h = 0.7 * span
                src = vtk.vtkPlaneSource()
                src.SetOrigin(*(ctr - h * e1 - h * e2))
                src.SetPoint1(*(ctr + h * e1 - h * e2))
                src.SetPoint2(*(ctr - h * e1 + h * e2))
                a, b = _actor(vtk, src, (0.86, 0.85, 0.80))
                a.GetProperty().SetAmbient(0.45)
                a.GetProperty().SetDiffuse(0.6)
                actors.append((a, b, False))   # a floor: drawn, not framed (it would dwarf the cloth)
            elif kind == "mesh":
                path = c.get("file")
                base = cbrun.attr(self.run.f, "scene_dir") or "."
                full = path if (path and os.path.isabs(path)) else os.path.join(base, path or "")
                if not path or not os.path.exists(full):
                    sys.stderr.write("warning: mesh collider %s not found, not drawn\n" % full)
                    continue
                rd = vtk.vtkOBJReader()
                rd.SetFileName(full)
                tr = vtk.vtkTransform()
                tr.Translate(*off)
                if c.get("angular_velocity") or c.get("keyframes"):
                    sys.stderr.write("warning: mesh collider %s drawn at its rest pose plus its velocity "
                                     "(rotation and keyframes are not drawn)\n" % path)
                actors.append(_actor(vtk, rd, grey, 1.0, tr, smooth=True) + (True,))
        return actors

    def image(self, k):
        vtk, ns, np = self.vtk, self.ns, self.run.np
        run = self.run
        t = float(run.T[k])
        ren = vtk.vtkRenderer()
        ren.SetBackground(1, 1, 1)
        ren.SetTwoSidedLighting(True)
        head = vtk.vtkLight()                 # a headlight and a key light from above
        head.SetLightTypeToHeadlight()
        head.SetIntensity(0.55)
        ren.AddLight(head)
        key = vtk.vtkLight()
        key.SetLightTypeToSceneLight()
        key.SetPositional(False)
        c0 = 0.5 * (self.cloth_bounds[0] + self.cloth_bounds[1])
        key.SetFocalPoint(*c0)
        key.SetPosition(*(c0 + np.array(LIGHT)))
        key.SetIntensity(0.7)
        ren.AddLight(key)
        cloth, _ = _actor(vtk, _polydata(vtk, ns, np, run.X[k], run.faces), (0.85, 0.36, 0.26), smooth=True)
        back = vtk.vtkProperty()
        back.SetColor(0.30, 0.50, 0.80)
        cloth.SetBackfaceProperty(back)
        ren.AddActor(cloth)
        lo, hi = self.cloth_bounds.copy()
        for a, b, bounded in self.collider_actors(t):
            ren.AddActor(a)
            if bounded and run.np.all(run.np.isfinite(b)):
                cl = np.array([b[0], b[2], b[4]]), np.array([b[1], b[3], b[5]])
                # frame the colliders' parts near the cloth, not a far wall's whole extent
                near = 2.0 * float(np.max(hi - lo))
                lo = np.minimum(lo, np.maximum(cl[0], self.cloth_bounds[0] - near))
                hi = np.maximum(hi, np.minimum(cl[1], self.cloth_bounds[1] + near))
        az, el, zoom = self.view
        cam = ren.GetActiveCamera()
        ctr = 0.5 * (lo + hi)
        cam.SetFocalPoint(*ctr)
        cam.SetPosition(*(ctr + np.array([0.0, -1.0, 0.0])))
        cam.SetViewUp(0, 0, 1)
        cam.Azimuth(az + 90.0)
        cam.Elevation(el)
        cam.OrthogonalizeViewUp()
        ren.ResetCamera(lo[0], hi[0], lo[1], hi[1], lo[2], hi[2])
        cam.Zoom(1.25 * zoom)
        ren.ResetCameraClippingRange()
        win = vtk.vtkRenderWindow()
        win.SetOffScreenRendering(1)
        win.SetMultiSamples(4)
        win.AddRenderer(ren)
        win.SetSize(*self.size)
        win.Render()
        grab = vtk.vtkWindowToImageFilter()
        grab.SetInput(win)
        grab.ReadFrontBufferOff()
        grab.Update()
        img = grab.GetOutput()
        w, h, _ = img.GetDimensions()
        arr = ns.vtk_to_numpy(img.GetPointData().GetScalars()).reshape(h, w, -1)[::-1, :, :3]
        win.Finalize()
        return arr.copy()


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

    def renderer(self, **view):
        if getattr(self, "_renderer", None) is None or view:
            self._renderer = Renderer(self, **view)
        return self._renderer

    def draw(self, ax, k, **view):
        """Frame k into ax: a VTK image on a 2D axes, the old matplotlib drawing on a 3D one."""
        if not hasattr(ax, "get_proj"):
            ax.imshow(self.renderer(**view).image(k))
            ax.set_axis_off()
            ax.set_title("t = %.3f s" % self.T[k])
            return
        self.draw_mpl(ax, k)

    def draw_mpl(self, ax, k):
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
    ax = fig.add_subplot()
    run.draw(ax, k)
    fig.suptitle(run.title)
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
    ap.add_argument("--azimuth", type=float, default=-60.0, help="camera azimuth about z in degrees (default -60)")
    ap.add_argument("--elevation", type=float, default=22.0, help="camera elevation in degrees (default 22)")
    ap.add_argument("--zoom", type=float, default=1.0, help="camera zoom on the framed scene (default 1)")
    ap.add_argument("--allow-unfinished", action="store_true", help="render a run whose status is running")
    a = ap.parse_args(argv)
    ensure_display(sys.argv[1:] if argv is None else argv)
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
    view = dict(azimuth=a.azimuth, elevation=a.elevation, zoom=a.zoom, width=int(size[0] * 110),
                height=int(size[1] * 110))
    frames = None if (a.every or a.mp4) else [a.frame if a.frame >= 0 else nf + a.frame]
    if frames and not 0 <= frames[0] < nf:
        cbrun.fail("--frame %d: the run has %d frames (0..%d)" % (a.frame, nf, nf - 1))
    run.renderer(**dict(view, frames=frames))
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
        run.renderer(**dict(view, frames=idx))
        for i, k in enumerate(idx):
            run.draw(fig.add_subplot(rows, cols, i + 1), k)
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
