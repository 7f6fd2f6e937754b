#!/usr/bin/python3
"""analysis/tools/make_reef_knot.py — the loose reef knot of data/scenes/acm_reef_knot.yaml
(Harmon et al. 2009, Figures 8-9): two ribbons tied in a reef (square) knot.

    make_reef_knot.py [-o OUT.obj] [--width W] [--r-in R] [--r-out R] [--x0 X]
                      [--length L] [--ds D] [--nw N] [--height H] [--sigma S]
                      [--thickness T] [--no-check]

Construction. Ribbon A comes in from the left as two legs (its standing part and its
end) and makes a bight (U-turn) on the right; ribbon B is A turned 180 degrees about z
(legs on the right, bight on the left). Planar centre curves: A's upper leg is
y = f(x) from x = -L to x = x0, with f = r_in for x <= -x0, r_out for x >= x0 and a C2
smoothstep between; its bight is a half circle of radius r_out about (x0, 0); its lower
leg is y = -f(x). So near its own bight each ribbon's legs run outside the other's legs
(r_out > r_in) and near the other's bight inside them: the upper legs of A and B cross at
x = 0, the lower legs too, and each bight crosses both legs of the other ribbon, six
crossings in all (the reef knot's crossing number). Heights (REEF below): A's bight
passes under both legs of B and B's bight over both legs of A (each bight collars the
other ribbon's two parts), and in the middle A's legs pass over B's. z is a sum of
Gaussian bumps (width --sigma in arc length) of +H where the strand is over and -H where
it is under, so the strands at a crossing are 2H apart. A flat ribbon of width W (--nw
cells across, width vector z x tangent, so the normal is near z) is swept along each
curve with vertex rows every ~D of arc length: one triangle strip per ribbon, two
connected components, the end rows at x = -L (A) and x = +L (B).

Which knot (checked on every run and printed; the mesh is not written otherwise).
Joining the two upper ends (A's at -L, B's at +L) and the two lower ends by arcs outside
the knot in the plane z = 0 closes the ribbons into one loop; the script finds the
crossings of that loop's projection and computes its Jones polynomial as the
writhe-normalised Kauffman bracket f(A) (state sum over the 2^6 smoothings; the code
gives the known -A^16 + A^12 + A^4 for a trefoil). A reef knot closes this way to the
square knot, the connected sum of a trefoil and its mirror image (f symmetric under
A -> 1/A, amphichiral); a granny knot to the sum of two equal trefoils (chiral). The
description checked against: a reef knot is two interlocked bights, each rope's two
parts (standing part and end) leaving the other rope's bight together on the same side;
in a granny they leave it on opposite sides. On this planar diagram that is: each bight
passes over both or under both of the other rope's legs (REEF) versus over one and under
the other (GRANNY, also computed and printed). Enumerating all 64 over/under assignments
of the six crossings gave 2 square knots (REEF and its mirror image), 2 grannies
(GRANNY and its mirror), 24 other knots and 36 unknots (e.g. both bights under the
other's legs: the ribbons slide apart). The thief knot has the same crossings as the
reef and differs only in which end of each ribbon is the standing part (its short ends
leave on opposite edges, a reef's on the same edge): with all four ends pulled, as in
the scene, the two are the same problem.

Check (always, unless --no-check): brute force over the mesh (numpy),
no edge crosses a triangle of the other ribbon or a non-adjacent triangle of the same
one, and the minimum distance between features of different strands (other ribbon, or
the same ribbon more than 3 W apart in arc length) and between any non-adjacent
features (sharing no vertex) are printed; the script fails (and writes nothing) if the
strand distance is below 3 x --thickness.

Debian /usr/bin/python3 with numpy; deterministic.
"""
import argparse
import itertools
import math
import os
import sys

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
DEFAULT_OUT = os.path.join(ROOT, "data", "meshes", "acm_reef_knot.obj")


# ---------------------------------------------------------------- centre curves

def smoothstep(u):
    u = np.clip(u, 0.0, 1.0)
    return u * u * u * (u * (6 * u - 15) + 10)


def planar_a(a):
    """Dense planar centre curve of ribbon A, from its upper end (-L, r_in) through its
    bight around (x0, 0) to its lower end (-L, -r_in); [n, 2]."""
    L, x0, ri, ro = a.length, a.x0, a.r_in, a.r_out
    f = lambda x: ri + (ro - ri) * smoothstep((x + x0) / (2 * x0))  # noqa: E731
    n_leg, n_arc = 600, 300
    x = np.linspace(-L, x0, n_leg)
    upper = np.stack([x, f(x)], axis=1)
    th = np.linspace(0.5 * math.pi, -0.5 * math.pi, n_arc)[1:-1]
    arc = np.stack([x0 + ro * np.cos(th), ro * np.sin(th)], axis=1)
    lower = np.stack([x[::-1], -f(x[::-1])], axis=1)
    return np.concatenate([upper, arc, lower])


def arclength(p):
    return np.concatenate([[0.0], np.cumsum(np.linalg.norm(np.diff(p, axis=0), axis=1))])


def seg_crossings(p, q, skip_adjacent):
    """Crossings of polylines p [n,2] and q [m,2]: list of (i + a, j + b) (segment index
    plus fraction). skip_adjacent: p is q (closed loop) and neighbouring segments are skipped."""
    p0, p1, q0, q1 = p[:-1], p[1:], q[:-1], q[1:]
    out = []
    lo_p, hi_p = np.minimum(p0, p1), np.maximum(p0, p1)
    lo_q, hi_q = np.minimum(q0, q1), np.maximum(q0, q1)
    for i in range(len(p0)):
        cand = np.nonzero((lo_q[:, 0] <= hi_p[i, 0]) & (hi_q[:, 0] >= lo_p[i, 0]) &
                          (lo_q[:, 1] <= hi_p[i, 1]) & (hi_q[:, 1] >= lo_p[i, 1]))[0]
        if skip_adjacent:
            n = len(p0)
            cand = cand[(cand > i + 1) & ~((i == 0) & (cand == n - 1))]
        if not len(cand):
            continue
        r = p1[i] - p0[i]
        s = q1[cand] - q0[cand]
        den = r[0] * s[:, 1] - r[1] * s[:, 0]
        d = q0[cand] - p0[i]
        ok = np.abs(den) > 1e-300
        den = np.where(ok, den, 1.0)
        ta = (d[:, 0] * s[:, 1] - d[:, 1] * s[:, 0]) / den
        tb = (d[:, 0] * r[1] - d[:, 1] * r[0]) / den
        hit = ok & (ta >= 0) & (ta < 1) & (tb >= 0) & (tb < 1)
        for k in np.nonzero(hit)[0]:
            out.append((i + ta[k], cand[k] + tb[k]))
    return out


def interp(values, s):
    i = np.clip(np.floor(s).astype(int), 0, len(values) - 2)
    t = s - i
    return values[i] * (1 - t)[..., None] + values[i + 1] * t[..., None] if values.ndim > 1 \
        else values[i] * (1 - t) + values[i + 1] * t


# Over/under of each crossing, as "A over?" by (crossing kind, upper (y > 0) or lower).
REEF = {("bight A", True): False, ("bight A", False): False,     # A's bight under both B legs
        ("bight B", True): False, ("bight B", False): False,     # B's bight over both A legs
        ("middle", True): True, ("middle", False): True}         # A's legs over B's legs
GRANNY = {("bight A", True): False, ("bight A", False): True,    # each bight weaves: over one
          ("bight B", True): False, ("bight B", False): True,    # leg of the other ribbon,
          ("middle", True): True, ("middle", False): False}      # under the other


def centre_curves(a, pattern=REEF):
    """3D centre curves of A and B (dense) and the crossing table [(x, y, kind, who)]."""
    pa = planar_a(a)
    pb = -pa                                   # B = A turned 180 degrees about z
    sa, sb = arclength(pa), arclength(pb)
    za, zb = np.zeros(len(pa)), np.zeros(len(pb))
    table = []
    for ia, ib in seg_crossings(pa, pb, False):
        xa = interp(pa, np.array(ia))
        ta, tb = interp(sa, np.array(ia)), interp(sb, np.array(ib))
        kind = "bight A" if xa[0] > a.x0 - 1e-12 else "bight B" if xa[0] < -a.x0 + 1e-12 else "middle"
        a_over = pattern[(kind, bool(xa[1] > 0))]
        sgn = 1.0 if a_over else -1.0
        za += sgn * a.height * np.exp(-0.5 * ((sa - ta) / a.sigma) ** 2)
        zb -= sgn * a.height * np.exp(-0.5 * ((sb - tb) / a.sigma) ** 2)
        table.append((float(xa[0]), float(xa[1]), kind, "A over" if a_over else "B over"))
    ca = np.concatenate([pa, za[:, None]], axis=1)
    cb = np.concatenate([pb, zb[:, None]], axis=1)
    return ca, cb, table


# ---------------------------------------------------------------- knot check

def poly_mul(p, q):
    r = {}
    for e1, c1 in p.items():
        for e2, c2 in q.items():
            r[e1 + e2] = r.get(e1 + e2, 0) + c1 * c2
    return {e: c for e, c in r.items() if c}


def jones_f(loop):
    """Writhe-normalised Kauffman bracket f(A) = (-A^3)^(-w) <D> of the closed polyline
    `loop` [n,3] (last point = first), projected on z: {exponent of A: coefficient}."""
    p2 = loop[:, :2]
    z = loop[:, 2]
    cr = seg_crossings(p2, p2, True)
    passages = []                               # (position, crossing, is_over)
    info = []
    for c, (s1, s2) in enumerate(cr):
        z1, z2 = interp(z, np.array(s1)), interp(z, np.array(s2))
        if abs(z1 - z2) < 1e-9:
            raise RuntimeError("crossing without a height difference at %s" % (interp(p2, np.array(s1)),))
        so, su = (s1, s2) if z1 > z2 else (s2, s1)
        d = lambda s: p2[int(s) + 1] - p2[int(s)]  # noqa: E731
        o, u = d(so), d(su)
        info.append(1 if o[0] * u[1] - o[1] * u[0] > 0 else -1)
        passages += [(so, c, True), (su, c, False)]
    passages.sort()
    n = len(passages)
    at = {}                                     # (crossing, is_over) -> passage rank
    for k, (_, c, ov) in enumerate(passages):
        at[(c, ov)] = k
    # node 2k = start of arc k (leaves passage k), 2k+1 = end of arc k (reaches passage k+1)
    out_ = lambda k: 2 * k                      # noqa: E731
    in_ = lambda k: 2 * ((k - 1) % n) + 1       # noqa: E731
    bracket = {}
    nc = len(info)
    for state in itertools.product((0, 1), repeat=nc):
        parent = list(range(2 * n))

        def find(x):
            while parent[x] != x:
                parent[x] = parent[parent[x]]
                x = parent[x]
            return x

        def join(x, y):
            parent[find(x)] = find(y)
        for k in range(n):
            join(2 * k, 2 * k + 1)
        for c in range(nc):
            ko, ku = at[(c, True)], at[(c, False)]
            po, mo, pu, mu = out_(ko), in_(ko), out_(ku), in_(ku)
            A = state[c] == 0
            if info[c] > 0:
                pairs = ((pu, mo), (mu, po)) if A else ((po, pu), (mo, mu))
            else:
                pairs = ((mu, mo), (pu, po)) if A else ((po, mu), (mo, pu))
            for x, y in pairs:
                join(x, y)
        loops = len({find(x) for x in range(2 * n)})
        na = state.count(0)
        term = {na - (nc - na): 1}
        d = {2: -1, -2: -1}
        for _ in range(loops - 1):
            term = poly_mul(term, d)
        for e, c in term.items():
            bracket[e] = bracket.get(e, 0) + c
    bracket = {e: c for e, c in bracket.items() if c}
    w = sum(info)
    f = poly_mul(bracket, {-3 * w: (-1) ** (w % 2)})
    return f, nc, w


TREFOIL = {16: -1, 12: 1, 4: 1}                  # f(A) of one trefoil
MIRROR = {-e: c for e, c in TREFOIL.items()}


def classify(f):
    if f == {0: 1}:
        return "unknot"
    if f == poly_mul(TREFOIL, MIRROR):
        return "square knot (trefoil # mirror trefoil: reef/thief closure)"
    if f in (poly_mul(TREFOIL, TREFOIL), poly_mul(MIRROR, MIRROR)):
        return "granny knot (trefoil # trefoil)"
    return "other"


def poly_str(f):
    return " ".join("%+dA^%d" % (f[e], e) for e in sorted(f, reverse=True))


def closure(ca, cb, L):
    """One closed loop: A (upper end -> lower end), an arc below to B's lower end at +L,
    B (lower end -> upper end), an arc above back to A's upper end; the arcs in z = 0."""
    far, yf = L + 0.1, 10 * L
    lo = np.array([[-far, ca[-1, 1], 0], [-far, -yf, 0], [far, -yf, 0], [far, cb[0, 1], 0]])
    hi = np.array([[far, cb[-1, 1], 0], [far, yf, 0], [-far, yf, 0], [-far, ca[0, 1], 0]])
    return np.concatenate([ca, lo, cb, hi, ca[:1]])


# ---------------------------------------------------------------- ribbon mesh

def resample(c, ds):
    s = arclength(c)
    ns = max(2, int(round(s[-1] / ds)))
    t = np.linspace(0, s[-1], ns + 1)
    return np.stack([np.interp(t, s, c[:, k]) for k in range(3)], axis=1), t


def sweep(c, width, nw):
    tan = np.gradient(c, axis=0)
    tan /= np.linalg.norm(tan, axis=1, keepdims=True)
    b = np.cross(np.array([0.0, 0.0, 1.0]), tan)
    b /= np.linalg.norm(b, axis=1, keepdims=True)
    off = np.linspace(-0.5 * width, 0.5 * width, nw + 1)
    return (c[:, None, :] + off[None, :, None] * b[:, None, :]).reshape(-1, 3)


def strip_faces(nu, nv, base):
    out = []
    for i in range(nu - 1):
        for j in range(nv - 1):
            a, b = base + i * nv + j, base + (i + 1) * nv + j
            c, d = b + 1, a + 1
            out += [(a, b, c), (a, c, d)] if (i + j) % 2 == 0 else [(a, b, d), (b, c, d)]
    return out


# ---------------------------------------------------------------- mesh check

def pt_tri_dist(p, a, b, c):
    """Distance from points p to triangles (a, b, c), all [n,3] (closest-point regions)."""
    ab, ac, ap = b - a, c - a, p - a
    d1, d2 = (ab * ap).sum(1), (ac * ap).sum(1)
    bp = p - b
    d3, d4 = (ab * bp).sum(1), (ac * bp).sum(1)
    cp = p - c
    d5, d6 = (ab * cp).sum(1), (ac * cp).sum(1)
    va, vb, vc = d3 * d6 - d5 * d4, d5 * d2 - d1 * d6, d1 * d4 - d3 * d2
    den = va + vb + vc
    den = np.where(den != 0, den, 1e-300)
    q = a + (vb / den)[:, None] * ab + (vc / den)[:, None] * ac
    safe = lambda x: np.where(x != 0, x, 1e-300)  # noqa: E731
    e = (vc <= 0) & (d1 >= 0) & (d3 <= 0)
    q = np.where(e[:, None], a + (d1 / safe(d1 - d3))[:, None] * ab, q)
    e = (vb <= 0) & (d2 >= 0) & (d6 <= 0)
    q = np.where(e[:, None], a + (d2 / safe(d2 - d6))[:, None] * ac, q)
    e = (va <= 0) & (d4 - d3 >= 0) & (d5 - d6 >= 0)
    q = np.where(e[:, None], b + ((d4 - d3) / safe((d4 - d3) + (d5 - d6)))[:, None] * (c - b), q)
    q = np.where(((d1 <= 0) & (d2 <= 0))[:, None], a, q)
    q = np.where(((d3 >= 0) & (d4 <= d3))[:, None], b, q)
    q = np.where(((d6 >= 0) & (d5 <= d6))[:, None], c, q)
    return np.linalg.norm(p - q, axis=1)


def seg_seg_dist(p1, q1, p2, q2):
    """Distance between segments [p1,q1] and [p2,q2], all [n,3] (clamped closest points)."""
    d1, d2, r = q1 - p1, q2 - p2, p1 - p2
    a, e, f = (d1 * d1).sum(1), (d2 * d2).sum(1), (d2 * r).sum(1)
    c, b = (d1 * r).sum(1), (d1 * d2).sum(1)
    den = a * e - b * b
    s = np.where(den > 1e-30, np.clip((b * f - c * e) / np.where(den > 1e-30, den, 1), 0, 1), 0.0)
    t = (b * s + f) / e
    s = np.where(t < 0, np.clip(-c / a, 0, 1), np.where(t > 1, np.clip((b - c) / a, 0, 1), s))
    t = np.clip(t, 0, 1)
    return np.linalg.norm(p1 + s[:, None] * d1 - p2 - t[:, None] * d2, axis=1)


def edge_tri_hits(x, edges, faces):
    """Number of (edge, triangle) pairs sharing no vertex where the edge crosses the triangle."""
    hits = 0
    a, b, c = x[faces[:, 0]], x[faces[:, 1]], x[faces[:, 2]]
    n = np.cross(b - a, c - a)
    for e0, e1 in edges:
        p, q = x[e0], x[e1]
        dp, dq = ((p - a) * n).sum(1), ((q - a) * n).sum(1)
        cand = (dp * dq < 0) & (faces != e0).all(1) & (faces != e1).all(1)
        if not cand.any():
            continue
        t = dp[cand] / (dp[cand] - dq[cand])
        y = p + t[:, None] * (q - p)
        aa, bb, cc, nn = a[cand], b[cand], c[cand], n[cand]
        s1 = (np.cross(bb - aa, y - aa) * nn).sum(1)
        s2 = (np.cross(cc - bb, y - bb) * nn).sum(1)
        s3 = (np.cross(aa - cc, y - cc) * nn).sum(1)
        hits += int(((s1 > 0) & (s2 > 0) & (s3 > 0)).sum())
    return hits


def check_mesh(x, faces, comp, arc, far):
    """(edge-triangle crossings, min distance between strands, min distance between
    non-adjacent features). Strands: different ribbons, or arc length apart > far."""
    edges = sorted({tuple(sorted((f[i], f[(i + 1) % 3]))) for f in faces for i in range(3)})
    edges = np.array(edges)
    hits = edge_tri_hits(x, edges, faces)
    strand, any_ = math.inf, math.inf
    fa, fb, fc = x[faces[:, 0]], x[faces[:, 1]], x[faces[:, 2]]
    fcomp = comp[faces[:, 0]]
    farc = arc[faces].mean(1)
    for v in range(len(x)):
        ok = (faces != v).all(1)
        d = pt_tri_dist(np.broadcast_to(x[v], (ok.sum(), 3)), fa[ok], fb[ok], fc[ok])
        any_ = min(any_, d.min())
        st = (fcomp[ok] != comp[v]) | (np.abs(farc[ok] - arc[v]) > far)
        if st.any():
            strand = min(strand, d[st].min())
    ecomp, earc = comp[edges[:, 0]], arc[edges].mean(1)
    for k, (e0, e1) in enumerate(edges):
        ok = (edges != e0).all(1) & (edges != e1).all(1)
        idx = np.nonzero(ok)[0]
        d = seg_seg_dist(np.broadcast_to(x[e0], (len(idx), 3)), np.broadcast_to(x[e1], (len(idx), 3)),
                         x[edges[idx, 0]], x[edges[idx, 1]])
        any_ = min(any_, d.min())
        st = (ecomp[idx] != ecomp[k]) | (np.abs(earc[idx] - earc[k]) > far)
        if st.any():
            strand = min(strand, d[st].min())
    return hits, strand, any_


# ---------------------------------------------------------------- main

def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter,
                                 epilog=__doc__.split("\n\n", 2)[2])
    ap.add_argument("-o", "--out", default=DEFAULT_OUT, help="OBJ to write (default data/meshes/acm_reef_knot.obj)")
    ap.add_argument("--width", type=float, default=0.012, help="ribbon width W (m, default 0.012)")
    ap.add_argument("--r-in", type=float, default=0.02, help="inner leg half spacing (m, default 0.02)")
    ap.add_argument("--r-out", type=float, default=0.045, help="outer leg half spacing = bight radius (m, default 0.045)")
    ap.add_argument("--x0", type=float, default=0.04, help="bight centres at x = +-x0 (m, default 0.04)")
    ap.add_argument("--length", type=float, default=0.15, help="ends at x = -+L (m, default 0.15)")
    ap.add_argument("--ds", type=float, default=0.005, help="row spacing along the ribbon (m, default 0.005)")
    ap.add_argument("--nw", type=int, default=3, help="cells across the ribbon (default 3)")
    ap.add_argument("--height", type=float, default=0.01, help="crossing bump height H (m, default 0.01)")
    ap.add_argument("--sigma", type=float, default=0.015, help="crossing bump width in arc length (m, default 0.015)")
    ap.add_argument("--thickness", type=float, default=0.002,
                    help="cloth thickness of the scene: the strand distance must be >= 3x it (m, default 0.002)")
    ap.add_argument("--no-check", action="store_true", help="skip the brute-force mesh check")
    a = ap.parse_args()
    if not (0 < a.r_in < a.r_out and a.width < a.r_out - a.r_in + a.width and a.x0 > 0
            and a.length > a.x0 + a.r_out and a.ds > 0 and a.nw >= 1 and a.height > 0 and a.sigma > 0):
        sys.exit("make_reef_knot.py: need 0 < r_in < r_out, x0 > 0, length > x0 + r_out, ds, nw, height, sigma > 0")

    ca, cb, table = centre_curves(a)
    f, nc, w = jones_f(closure(ca, cb, a.length))
    kind = classify(f)
    print("crossings of the planar diagram: %d (writhe of the closure %d)" % (nc, w))
    for x, y, where, who in table:
        print("  (%+.4f, %+.4f)  %-28s %s" % (x, y, where, who))
    print("closure (upper ends joined, lower ends joined): f(A) = %s -> %s" % (poly_str(f), kind))
    ga, gb, _ = centre_curves(a, GRANNY)
    fg, _, _ = jones_f(closure(ga, gb, a.length))
    print("same diagram, each bight weaving through the other's legs: f(A) = %s -> %s" % (poly_str(fg), classify(fg)))
    if not kind.startswith("square"):
        sys.exit("make_reef_knot.py: the diagram is not a reef knot (%s)" % kind)

    verts, faces, comp, arc = [], [], [], []
    rows = []
    for k, c in enumerate((ca, cb)):
        r, s = resample(c, a.ds)
        base = sum(len(v) for v in verts)
        v = sweep(r, a.width, a.nw)
        verts.append(v)
        faces += strip_faces(len(r), a.nw + 1, base)
        comp.append(np.full(len(v), k))
        arc.append(np.repeat(s, a.nw + 1))
        rows.append(len(r))
    x = np.concatenate(verts)
    faces = np.array(faces)
    comp, arc = np.concatenate(comp), np.concatenate(arc)
    ds_true = arc[a.nw + 1] - arc[0]
    print("mesh: %d + %d rows of %d vertices (row spacing %.5f m), %d vertices, %d triangles"
          % (rows[0], rows[1], a.nw + 1, ds_true, len(x), len(faces)))
    lines = []
    if not a.no_check:
        hits, strand, any_ = check_mesh(x, faces, comp, arc, 3 * a.width)
        print("check: edge-triangle crossings %d, min distance between strands %.5f m "
              "(%.1f x thickness %.4g), min distance between non-adjacent features %.5f m"
              % (hits, strand, strand / a.thickness, a.thickness, any_))
        if hits or strand < 3 * a.thickness:
            sys.exit("make_reef_knot.py: the mesh fails the check")
        lines.append("Check: 0 edge-triangle crossings; min distance between strands %.5f m (%.1f x thickness "
                     "%.4g m), between non-adjacent features %.5f m." % (strand, strand / a.thickness,
                                                                         a.thickness, any_))
    cmd = "analysis/tools/make_reef_knot.py " + " ".join(
        "--%s %s" % (k.replace("_", "-"), getattr(a, k)) for k in
        ("width", "r_in", "r_out", "x0", "length", "ds", "nw", "height", "sigma", "thickness"))
    header = [
        "acm_reef_knot.obj — two ribbons tied loosely in a reef (square) knot, Harmon et al. 2009 Figs. 8-9",
        "(data/scenes/acm_reef_knot.yaml). Ribbon A: vertices 1..%d, ends at x = %g (its standing part" % (
            rows[0] * (a.nw + 1), -a.length),
        "and end), bight around (%g, 0); ribbon B = A turned 180 degrees about z, ends at x = %g." % (a.x0, a.length),
        "Width %g m, %d cells across, rows every %.4g m; legs at |y| = %g (inside the other bight) and" % (
            a.width, a.nw, ds_true, a.r_in),
        "%g (around the other's legs); crossings separated vertically by 2 x %g m." % (a.r_out, a.height),
        "Knot: %d crossings; the closure (upper ends joined, lower ends joined) has" % nc,
        "f(A) = %s, the square knot (reef); the same diagram with each" % poly_str(f),
        "bight weaving through the other's legs gives f(A) = %s, the granny" % poly_str(fg),
        "(how this was checked: the script's --help).",
    ] + lines + ["Generated by: " + cmd + " -o data/meshes/acm_reef_knot.obj"]
    with open(a.out, "w") as fh:
        for line in header:
            fh.write("# %s\n" % line)
        for v in x:
            fh.write("v %.9f %.9f %.9f\n" % tuple(v + 0.0))
        for t in faces:
            fh.write("f %d %d %d\n" % (t[0] + 1, t[1] + 1, t[2] + 1))
    print("wrote %s: %d vertices, %d triangles" % (a.out, len(x), len(faces)))


if __name__ == "__main__":
    main()
