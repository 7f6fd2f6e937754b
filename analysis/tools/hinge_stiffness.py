#!/usr/bin/env python3
"""analysis/tools/hinge_stiffness.py — the continuum limit of the shared model's bending
hinges on clothbench's grid triangulation: the plate stiffness B that k_bend = 1 makes.

The shared model (core/model.h) gives every interior edge e the energy
k_bend 3|e|^2/(A1+A2) theta_e^2. Bend a large grid (cells hx x hy, diagonals `alternate`
or `right`) to the macroscopic curvature kappa_xx = kappa about a grid axis; with small
slopes the dihedral angle of a hinge is the jump of the surface gradient across it,
theta_e = (grad z_2 - grad z_1) . n_e, linear in the nodal heights. Three numbers:

  affine   z = kappa x^2 / 2 at every node: only the hinges across x turn, by kappa hx,
           and the energy per area is 3 k_bend kappa^2, i.e. B = 6 k_bend;
  relaxed  plus a periodic nodal offset on a 2 x 2 cell (the non-affine mode the
           union-jack pattern allows), chosen to minimise the energy;
  strip    relaxed, and the lateral curvature kappa_yy and the twist kappa_xy free too:
           a strip bent by a moment, as the cantilever (data/scenes/cantilever.yaml).

It prints B / k_bend = energy per area / (kappa^2 / 2) for each, measured on the hinges
of the middle half of an N x N grid (the periodic offsets make every cell alike there).
clothbench maps a fabric's B to k_bend = B / 4.8 (CB_HINGE_STIFFNESS in core/material.h):
the `strip` value for square cells, which is the same for both diagonal patterns.

    /usr/bin/python3 analysis/tools/hinge_stiffness.py --aspect 1 2
"""
import argparse
from collections import defaultdict

import numpy as np


def grid(n, hx, hy, pattern):
    x = np.array([[i * hx, j * hy] for j in range(n) for i in range(n)])
    faces = []
    for j in range(n - 1):
        for i in range(n - 1):
            a, b, c, d = j * n + i, j * n + i + 1, (j + 1) * n + i + 1, (j + 1) * n + i
            right = pattern == "right" or (pattern == "alternate" and (i + j) % 2 == 0)
            faces += [(a, b, c), (a, c, d)] if right else [(a, b, d), (b, c, d)]
    return x, faces


def gradient_rows(x, t):
    """The 2 x 3 map from the heights of triangle t's corners to its gradient."""
    p = x[list(t)]
    m = np.array([p[1] - p[0], p[2] - p[0]])
    return np.linalg.inv(m) @ np.array([[-1.0, 1.0, 0.0], [-1.0, 0.0, 1.0]])


def stiffness(n, hx, hy, pattern, mode):
    x, faces = grid(n, hx, hy, pattern)
    edge_faces = defaultdict(list)
    for fi, t in enumerate(faces):
        for a, b in ((t[0], t[1]), (t[1], t[2]), (t[2], t[0])):
            edge_faces[tuple(sorted((a, b)))].append(fi)
    lo, hi = n // 4, 3 * n // 4  # whole cells: every hinge kind counted once per cell
    rows, weights = [], []
    for (a, b), fs in edge_faces.items():
        if len(fs) != 2:
            continue
        mid = 0.5 * (x[a] + x[b])
        if not (lo * hx <= mid[0] < hi * hx and lo * hy <= mid[1] < hi * hy):
            continue
        t1, t2 = faces[fs[0]], faces[fs[1]]
        d = x[b] - x[a]
        nrm = np.array([d[1], -d[0]]) / np.linalg.norm(d)
        if nrm @ (x[list(t2)].mean(axis=0) - mid) < 0:
            nrm = -nrm
        r = np.zeros(len(x))
        r[list(t2)] += nrm @ gradient_rows(x, t2)
        r[list(t1)] -= nrm @ gradient_rows(x, t1)
        area = sum(0.5 * abs(np.cross(x[t[1]] - x[t[0]], x[t[2]] - x[t[0]])) for t in (t1, t2))
        rows.append(r)
        weights.append(3.0 * (d @ d) / area)
    r, w = np.array(rows), np.array(weights)
    area = (hi - lo) ** 2 * hx * hy
    z0 = 0.5 * x[:, 0] ** 2  # kappa = 1
    free = []
    if mode != "affine":
        for a in range(2):
            for b in range(2):
                free.append(np.array([1.0 if (i % 2, j % 2) == (a, b) else 0.0
                                      for j in range(n) for i in range(n)]))
    if mode == "strip":
        free += [0.5 * x[:, 1] ** 2, x[:, 0] * x[:, 1]]
    z = z0
    if free:
        c = np.array(free).T
        sw = np.sqrt(w)[:, None]
        u, *_ = np.linalg.lstsq(sw * (r @ c), -np.sqrt(w) * (r @ z0), rcond=None)
        z = z0 + c @ u
    theta = r @ z
    return (w * theta * theta).sum() / area / 0.5


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--aspect", type=float, nargs="+", default=[1.0, 2.0],
                    help="cell aspect ratios hy / hx (bending about the y axis, along x)")
    ap.add_argument("--n", type=int, default=24, help="grid vertices per side (even)")
    a = ap.parse_args()
    print("pattern    hy/hx  affine  relaxed  strip   (B / k_bend)")
    for pattern in ("alternate", "right"):
        for asp in a.aspect:
            v = [stiffness(a.n, 1.0, asp, pattern, m) for m in ("affine", "relaxed", "strip")]
            print(f"{pattern:10s} {asp:5.2f}  {v[0]:6.3f}  {v[1]:7.3f}  {v[2]:6.3f}")


if __name__ == "__main__":
    main()
