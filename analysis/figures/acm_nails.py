#!/usr/bin/env python3
"""analysis/figures/acm_nails.py — Harmon et al. 2009, Figure 11: cloth on a bed of nails.

Reads the output folder of `clothbench sweep experiments/figures/acm_nails.yaml`
(index.csv and one acm_nails run with /frames): rendered frames, then against time the
deepest collider penetration (vertices), the self-intersection count, the minimum
separation and the events per simulated second. acm's collider contacts are
vertex-collider pairs, so a nail thinner than the triangles can press into a triangle
between its vertices without any vertex entering it: this script also measures that, as
the deepest point of a 6 x 6 barycentric sample of every triangle inside a nail, per
frame, and prints it. Writes acm_nails.png and .pdf.
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import acm_common as ac  # noqa: E402
import acm_compactor  # noqa: E402


def interior_depth(np, f):
    """Deepest triangle sample point inside a collider, per frame (m, 0 if none)."""
    X = f["frames/positions"][()]
    T = f["frames/time"][()]
    faces = f["mesh/faces"][()]
    cl = [c for c in (ac.scene_of(f).get("colliders") or []) if c.get("type") != "plane"]
    n = 6
    bary = np.array([(i / n, j / n, 1 - (i + j) / n) for i in range(n + 1) for j in range(n + 1 - i)])
    out = []
    for k in range(len(T)):
        tri = X[k][faces]
        pts = np.einsum("sb,fbk->fsk", bary, tri).reshape(-1, 3)
        d = ac.collider_distance(np, cl, T[k], pts)
        out.append(max(0.0, -float(d.min())) if len(d) else 0.0)
    return T, np.array(out)


def extra(np, f):
    T, depth = interior_depth(np, f)
    k = int(np.argmax(depth))
    return ("deepest triangle-interior point inside a nail: %.3g m at t = %.3g s (final frame %.3g m)"
            % (depth[k], T[k], depth[-1]))


if __name__ == "__main__":
    acm_compactor.__doc__ = __doc__
    acm_compactor.extra_panel = extra
    acm_compactor.main("acm_nails")
