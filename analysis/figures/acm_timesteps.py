#!/usr/bin/env python3
"""analysis/figures/acm_timesteps.py — Harmon et al. 2009, Figure 2: the distribution of
per-vertex time steps over time in the curtain scene.

Reads the output folder of `clothbench sweep experiments/figures/acm_timesteps.yaml`
(index.csv and one acm run with /frames). The solver writes no per-vertex data, so the
per-vertex step is recomputed here from the run file (mesh, masses, scene text, frames)
with acm.c's formulas (analysis/figures/acm_common.py): a vertex's step at a frame is the
smallest clock acting on it, over
  - its stretch springs: h_e = safety 2 / sqrt(max over the edge's ends of deg 2 k / m);
  - the penalty layers of its contacts: a vertex-collider pair at distance d has at least
    n(d) = #{l : A(l) > d} layers, the deepest ticking at h1 n^(-3/2) with
    h1 = penalty_safety 2 / sqrt(r1 / m); a vertex-triangle pair likewise with the four
    vertices' inverse masses summed (both the vertex and the triangle's vertices).
Bending clocks are left out: with the scene's k_bend they are far longer than the stretch
clocks. Layers kept lazily (deactivated only at the deepest layer's tick while
separating) make the solver's real steps at most this small a little longer; the picture
is the distribution over time, as in the paper. Pinned vertices are left out.
Writes acm_timesteps.png, .pdf and .csv: the per-vertex step over the rest shape at the
frame with the most contact-limited vertices (the asynchrony: a few vertices near the
ball step much faster than the rest), the median / minimum / maximum step and the number
of contact-limited vertices over time, and the events per simulated second.
"""
import argparse
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import acm_common as ac  # noqa: E402
import cbrun  # noqa: E402


def vertex_steps(np, x, t, faces, inv, hv_el, prm, A, scale, colliders):
    """Per-vertex smallest active clock at one frame (see the module docstring)."""
    h = hv_el.copy()
    # vertex-collider layers
    d = ac.collider_distance(np, colliders, t, x)
    n = ac.layers_at(np, A, d)
    act = (n > 0) & (inv > 0)
    h1 = prm["psafety"] * 2 / np.sqrt(prm["r1"] * np.where(inv > 0, inv, 1))
    h[act] = np.minimum(h[act], h1[act] * scale[np.minimum(n[act], len(scale)) - 1])
    # vertex-triangle layers (brute force with a centroid prefilter)
    c = x[faces].mean(axis=1)
    rad = np.linalg.norm(x[faces] - c[:, None, :], axis=2).max(axis=1)
    reach = A[0]
    for i0 in range(0, len(x), 256):
        p = x[i0:i0 + 256]
        near = np.linalg.norm(p[:, None, :] - c[None, :, :], axis=2) < rad[None, :] + reach
        vi, ti = np.nonzero(near)
        vi = vi + i0
        keep = (faces[ti] != vi[:, None]).all(axis=1)
        vi, ti = vi[keep], ti[keep]
        if not len(vi):
            continue
        f = faces[ti]
        dd = ac.point_triangle_distance(np, x[vi], x[f[:, 0]], x[f[:, 1]], x[f[:, 2]])
        n = ac.layers_at(np, A, dd)
        ok = n > 0
        if not ok.any():
            continue
        vi, f, n = vi[ok], f[ok], n[ok]
        sim = inv[vi] + inv[f].sum(axis=1)
        hl = prm["psafety"] * 2 / np.sqrt(prm["r1"] * np.where(sim > 0, sim, 1)) * scale[np.minimum(n, len(scale)) - 1]
        for cols in (vi, f[:, 0], f[:, 1], f[:, 2]):
            np.minimum.at(h, cols, hl)
    return h


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 epilog="Example: %(prog)s runs/figures/acm_timesteps")
    ap.add_argument("folder", help="output folder of the acm_timesteps sweep (holds index.csv)")
    ap.add_argument("--bins", type=int, default=40, help="histogram bins over log10(step) (default 40)")
    ap.add_argument("--run", type=int, default=0, help="which row of index.csv (default 0)")
    args = ap.parse_args()
    cols, rows = ac.rows_of(args.folder, "acm_timesteps")
    import numpy as np
    plt = cbrun.use_agg()
    if not 0 <= args.run < len(rows):
        cbrun.fail("--run %d: the index has %d finished acm runs" % (args.run, len(rows)))
    r = rows[args.run]
    f = ac.open_row(args.folder, r, need_frames=True)
    prm = ac.acm_params(f)
    X = f["frames/positions"][()]
    T = f["frames/time"][()]
    faces = f["mesh/faces"][()]
    edges = f["mesh/edges"][()]
    masses = f["mesh/masses"][()]
    pinned = ac.pinned_from_frames(np, X)
    inv = np.where(pinned, 0.0, 1.0 / masses)
    _, hv_el = ac.stretch_steps(np, edges, masses, pinned, prm["k"], prm["safety"])
    A, scale = ac.layer_tables(np, prm["eta1"])
    colliders = ac.scene_of(f).get("colliders") or []
    H = np.array([vertex_steps(np, X[k], T[k], faces, inv, hv_el, prm, A, scale, colliders)[~pinned]
                  for k in range(len(T))])
    base = hv_el[~pinned]                           # each vertex's own elastic clock
    limited = H < base * (1 - 1e-12)                # a contact clock is faster
    nlim = limited.sum(axis=1)
    kmax = int(np.argmax(nlim))                     # the frame with the most contact-limited vertices
    spread = H.max(axis=1) / H.min(axis=1)
    rest = f["mesh/rest_positions"][()][~pinned]
    # the two in-plane axes of the curtain at rest (the largest two extents)
    ext = rest.max(axis=0) - rest.min(axis=0)
    u, v = np.argsort(ext)[::-1][:2]
    fig, ax = plt.subplots(1, 3, figsize=(12, 3.8), gridspec_kw={"width_ratios": [1.1, 1, 1]})
    sc = ax[0].scatter(rest[:, u], rest[:, v], c=np.log10(H[kmax]), s=6, cmap="viridis_r")
    fig.colorbar(sc, ax=ax[0], label="log10 step [s]")
    ax[0].set_aspect("equal")
    ax[0].set_xlabel("rest position %s [m]" % "xyz"[u])
    ax[0].set_ylabel("rest position %s [m]" % "xyz"[v])
    ax[0].set_title("per-vertex step at t = %.2f s (%d of %d vertices\nstep faster than their elastic clock)"
                    % (T[kmax], nlim[kmax], H.shape[1]))
    ax[1].semilogy(T, np.median(H, axis=1), label="median")
    ax[1].semilogy(T, H.min(axis=1), label="minimum")
    ax[1].semilogy(T, H.max(axis=1), label="maximum")
    ax2 = ax[1].twinx()
    ax2.plot(T, nlim, "k:", lw=1, label="contact-limited vertices")
    ax2.set_ylabel("contact-limited vertices [-]")
    ax2.grid(False)
    ax[1].set_xlabel("time [s]")
    ax[1].set_ylabel("per-vertex time step [s]")
    h1, l1 = ax[1].get_legend_handles_labels()
    h2, l2 = ax2.get_legend_handles_labels()
    ax[1].legend(h1 + h2, l1 + l2, loc="best")
    ax[1].set_title("steps over time: max / min up to %.0fx" % float(np.nanmax(spread)))
    t = cbrun.series(f, "time")
    ev, dt = cbrun.series(f, "events"), cbrun.series(f, "dt")
    ok = np.isfinite(ev) & (dt > 0)
    ax[2].plot(t[ok], ev[ok] / dt[ok])
    ax[2].set_xlabel("time [s]")
    ax[2].set_ylabel("events per simulated second [1/s]")
    fig.suptitle("acm, %s: asynchronous steps (Harmon et al. 2009, Fig. 2)\nvertices near the ball take the "
                 "penalty layers' shorter steps, the rest keep their elastic ones (median = maximum here)"
                 % cbrun.attr(f, "scene_name"))
    print("frame time   median step (s)   min step (s)   max/min   contact-limited vertices")
    table = []
    for k in range(len(T)):
        med = float(np.median(H[k]))
        table.append([float(T[k]), med, float(H[k].min()), float(H[k].max()), int(nlim[k])])
        if k % max(1, len(T) // 10) == 0 or k == kmax:
            print("%10.3f   %15.4g   %12.4g   %7.1f   %d" % (T[k], med, H[k].min(), spread[k], nlim[k]))
    f.close()
    out = cbrun.save(fig, os.path.join(args.folder, "acm_timesteps.png"),
                     ["time [s]", "median_step [s]", "min_step [s]", "max_step [s]", "contact_limited_vertices [-]"],
                     table)
    print("wrote " + ", ".join(out))


if __name__ == "__main__":
    main()
