"""analysis/figures/acm_common.py — helpers shared by the acm figure scripts
(acm_curtains, acm_timesteps, acm_breakdown, acm_compactor, acm_nails).

    import acm_common as ac
    rows = ac.rows_of(folder, "acm_curtains")         # finished rows of index.csv, or exit
    f = ac.open_row(folder, row)                        # h5py.File, or exit with the reason
    ac.frame_strip(fig, spec_row, path, times)          # rendered frames (analysis/render.py)
    ac.safety_panels(axes, f, label)                    # penetration, intersections, separation
    d = ac.collider_distance(np, colliders, t, points)  # signed distance to the scene's colliders

The acm solver's own formulas that the analysis recomputes (solvers/acm/acm.c and
layers.c) are here too: penalty layer thickness eta(l) = eta1 l^(-1/4), activation
distance A(l) = eta(l) + delta(l) with delta(1) = eta1/4 and delta(l) = (eta(l-1) -
eta(l))/2, layer clock h(l) = h1 l^(-3/2) with h1 = penalty_safety * 2 / sqrt(r1 sum of
the pair's inverse masses), and the stretch clock of edge e, h_e = safety * 2 / sqrt(max
over its two ends i of deg(i) 2 k_stretch / m_i).
"""
import math
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, ".."))
import cbrun  # noqa: E402


def rows_of(folder, name):
    """Finished rows of <folder>/index.csv (exits with a clear message otherwise)."""
    try:
        cols, rows = cbrun.read_index(folder)
        rows = cbrun.check_rows(folder, rows)
    except cbrun.RunError as e:
        cbrun.fail(str(e))
    rows = [r for r in rows if r["solver"] == "acm"]
    if not rows:
        cbrun.fail("%s/index.csv has no acm run: not an %s sweep" % (folder, name))
    return cols, rows


def open_row(folder, row, need_frames=False):
    path = os.path.join(folder, row["file"])
    try:
        f = cbrun.open_run(path)
    except cbrun.RunError as e:
        cbrun.fail(str(e))
    if need_frames and ("frames" not in f or f["frames/positions"].shape[0] == 0):
        cbrun.fail("%s: no /frames (the run was made with --no-frames)" % path)
    return f


def scene_of(f):
    s = cbrun.parse_scene(cbrun.attr(f, "scene_text"))
    return s if isinstance(s, dict) else {}


def frame_strip(fig, nrows, row, path, times, first=1):
    """Draw the frames nearest to `times` of run `path` in row `row` (0-based) of an
    nrows x len(times) grid of 3D axes; returns the frame times drawn."""
    import numpy as np
    import render
    run = render.load_or_fail(path)
    drawn = []
    for j, t in enumerate(times):
        k = int(np.argmin(np.abs(run.T - t)))
        ax = fig.add_subplot(nrows, len(times), row * len(times) + j + first)
        run.draw(ax, k)
        drawn.append(float(run.T[k]))
    run.f.close()
    return drawn


SAFETY_HEADER = ["run", "time [s]", "collider_max_depth [m]", "self_intersections [pairs]",
                 "min_separation [m]", "events_per_simulated_second [1/s]"]


def safety_panels(axes, f, label, table=None):
    """Against time, on four axes (a 2 x 2 grid reads best): deepest collider
    penetration (m), self-intersecting pairs (frame steps), minimum separation (m, frame
    steps) and events per simulated second. Appends the plotted numbers to `table` (rows
    of SAFETY_HEADER). Call finish_safety_panels(axes) after the last run."""
    import numpy as np
    t = cbrun.series(f, "time")
    depth = cbrun.series(f, "collider_max_depth")
    si = cbrun.series(f, "self_intersections")
    ms = cbrun.series(f, "min_separation")
    ev = cbrun.series(f, "events")
    dt = cbrun.series(f, "dt")
    rate = np.where(np.isfinite(ev) & (dt > 0), ev / np.where(dt > 0, dt, 1.0), np.nan)
    vals = axes[0].__dict__.setdefault("_cb_vals", [[], [], [], []])
    ok = np.isfinite(si)
    axes[0].plot(t, np.nan_to_num(depth), label=label)
    vals[0] += list(np.nan_to_num(depth))
    axes[1].plot(t[ok], si[ok], ".-", label=label)
    vals[1] += list(si[ok])
    ok = np.isfinite(ms)
    if ok.any():
        axes[2].semilogy(t[ok], ms[ok], ".-", label=label)
    vals[2] += list(ms[ok])
    ok = np.isfinite(rate)
    if ok.any():
        axes[3].semilogy(t[ok], rate[ok], label=label)
    vals[3] += list(rate[ok])
    if table is not None:
        for k in range(len(t)):
            table.append([label, float(t[k]), float(np.nan_to_num(depth[k])),
                          float(si[k]) if np.isfinite(si[k]) else "", float(ms[k]) if np.isfinite(ms[k]) else "",
                          float(rate[k]) if np.isfinite(rate[k]) else ""])
    axes[0].set_ylabel("deepest collider\npenetration [m]")
    axes[1].set_ylabel("self-intersecting\npairs [-]")
    axes[2].set_ylabel("min separation [m]")
    axes[3].set_ylabel("events per\nsimulated second [1/s]")
    for a in axes:
        a.set_xlabel("time [s]")
    return {"max_depth": float(np.nanmax(np.nan_to_num(depth))) if len(depth) else math.nan,
            "max_self": float(np.nanmax(si)) if np.isfinite(si).any() else math.nan,
            "min_sep": float(np.nanmin(ms)) if np.isfinite(ms).any() else math.nan}


def finish_safety_panels(axes, legend_title=None):
    """Panels whose values are all zero say so (acm's promise: no penetration, no self
    intersection); the others get a legend."""
    vals = axes[0].__dict__.get("_cb_vals", [[], [], [], []])
    names = ("collider penetration", "self intersections", "min separation", "events")
    for a, v, n in zip(axes, vals, names):
        if not cbrun.empty_panel(a, v, n) and len(a.get_lines()) > 1:
            a.legend(title=legend_title, loc="best")


# ---------------------------------------------------------------- colliders

def _unit(np, v):
    v = np.asarray(v, float)
    n = np.linalg.norm(v)
    return v / n if n > 0 else v


def collider_distance(np, colliders, t, p):
    """Signed distance (m) of points p [n,3] to the union of the colliders at time t
    (sphere, plane, capsule, box; moving with their constant velocity), +inf if none."""
    import render
    d = np.full(len(p), np.inf)
    for c in colliders or []:
        off = np.asarray(c.get("velocity", [0, 0, 0]), float) * t
        kind = c.get("type")
        if kind == "sphere":
            dc = np.linalg.norm(p - (np.asarray(c["center"], float) + off), axis=1) - float(c["radius"])
        elif kind == "plane":
            n = _unit(np, c.get("normal", [0, 0, 1]))
            dc = (p - (np.asarray(c.get("point", [0, 0, 0]), float) + off)) @ n
        elif kind == "capsule":
            a = np.asarray(c["p0"], float) + off
            b = np.asarray(c["p1"], float) + off
            ab = b - a
            s = np.clip(((p - a) @ ab) / max(ab @ ab, 1e-300), 0, 1)
            dc = np.linalg.norm(p - (a + s[:, None] * ab), axis=1) - float(c["radius"])
        elif kind == "box":
            R = render.rotation(np, c.get("rotation"))
            q = (p - (np.asarray(c.get("center", [0, 0, 0]), float) + off)) @ R
            e = np.abs(q) - 0.5 * np.asarray(c.get("size", [1, 1, 1]), float)
            dc = np.linalg.norm(np.maximum(e, 0), axis=1) + np.minimum(e.max(axis=1), 0)
        else:
            continue
        d = np.minimum(d, dc)
    return d


# ---------------------------------------------------------------- acm formulas

def acm_params(f):
    """eta1, r1, safety, penalty_safety as acm.c derives them from the scene."""
    s = scene_of(f)
    cl = s.get("cloth", {}) or {}
    p = ((s.get("solvers") or {}).get("acm") or {})
    k = float(cl.get("stretch", 1000.0))
    th = float(cl.get("thickness", 0.002))
    return {"eta1": float(p.get("eta", th if th > 0 else 1e-3)),
            "r1": float(p.get("stiffness", k if k > 0 else 1000.0)),
            "safety": float(p.get("safety", 0.5)),
            "psafety": float(p.get("penalty_safety", 0.5)),
            "k": k}


def layer_tables(np, eta1, lmax=20000):
    """A(l) and l^(-3/2) for l = 1..lmax (index l - 1)."""
    l = np.arange(1, lmax + 1, dtype=float)
    eta = eta1 * l ** -0.25
    delta = np.empty_like(eta)
    delta[0] = 0.25 * eta1
    delta[1:] = 0.5 * (eta[:-1] - eta[1:])
    return eta + delta, l ** -1.5


def layers_at(np, A, d):
    """Number of layers active at distance d at least (A(l) > d for l <= n; A decreases)."""
    return np.searchsorted(-A, -np.asarray(d, float), side="left")


def stretch_steps(np, edges, masses, pinned, k, safety):
    """Per-edge stretch clock steps (acm.c compute_clocks) and the per-vertex minimum."""
    nv = len(masses)
    deg = np.bincount(edges.ravel(), minlength=nv).astype(float)
    inv = np.where(pinned, 0.0, 1.0 / masses)
    om2 = np.maximum(deg[edges[:, 0]] * 2 * k * inv[edges[:, 0]], deg[edges[:, 1]] * 2 * k * inv[edges[:, 1]])
    he = np.where(om2 > 0, safety * 2 / np.sqrt(np.where(om2 > 0, om2, 1)), np.inf)
    hv = np.full(nv, np.inf)
    np.minimum.at(hv, edges[:, 0], he)
    np.minimum.at(hv, edges[:, 1], he)
    return he, hv


def pinned_from_frames(np, X):
    """Vertices moving on exact straight lines at constant speed in every frame (scripted pins)."""
    if X.shape[0] < 3:
        return np.zeros(X.shape[1], dtype=bool)
    acc = np.abs(X[2:] - 2 * X[1:-1] + X[:-2]).max(axis=(0, 2))
    return acc < 1e-12 * (1 + np.abs(X).max())


def point_triangle_distance(np, p, a, b, c):
    """Distance from points p [n,3] to triangles (a, b, c) [n,3] (Ericson's regions)."""
    ab, ac, ap = b - a, c - a, p - a
    d1, d2 = np.einsum("ij,ij->i", ab, ap), np.einsum("ij,ij->i", ac, ap)
    bp = p - b
    d3, d4 = np.einsum("ij,ij->i", ab, bp), np.einsum("ij,ij->i", ac, bp)
    cp = p - c
    d5, d6 = np.einsum("ij,ij->i", ab, cp), np.einsum("ij,ij->i", ac, cp)
    va, vb, vc = d3 * d6 - d5 * d4, d5 * d2 - d1 * d6, d1 * d4 - d3 * d2
    den = va + vb + vc
    den = np.where(den != 0, den, 1e-300)
    v, w = vb / den, vc / den
    q = a + v[:, None] * ab + w[:, None] * ac                      # face region
    e1 = (vc <= 0) & (d1 >= 0) & (d3 <= 0)                         # edge ab
    t = d1 / np.where(d1 - d3 != 0, d1 - d3, 1e-300)
    q = np.where(e1[:, None], a + t[:, None] * ab, q)
    e2 = (vb <= 0) & (d2 >= 0) & (d6 <= 0)                         # edge ac
    t = d2 / np.where(d2 - d6 != 0, d2 - d6, 1e-300)
    q = np.where(e2[:, None], a + t[:, None] * ac, q)
    e3 = (va <= 0) & (d4 - d3 >= 0) & (d5 - d6 >= 0)               # edge bc
    t = (d4 - d3) / np.where((d4 - d3) + (d5 - d6) != 0, (d4 - d3) + (d5 - d6), 1e-300)
    q = np.where(e3[:, None], b + t[:, None] * (c - b), q)
    q = np.where(((d1 <= 0) & (d2 <= 0))[:, None], a, q)           # vertex regions
    q = np.where(((d3 >= 0) & (d4 <= d3))[:, None], b, q)
    q = np.where(((d6 >= 0) & (d5 <= d6))[:, None], c, q)
    return np.linalg.norm(p - q, axis=1)
