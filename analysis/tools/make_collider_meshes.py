#!/usr/bin/env python3
"""analysis/tools/make_collider_meshes.py — generates the closed collider meshes shipped
in data/meshes/ (plain Python, no dependencies):

  blob.obj   a bunny-like blob: an icosphere (icosahedron subdivided 4 times, 5120
             triangles) whose radius is modulated by a few smooth Gaussian bumps
             (a radial function, so the surface stays closed and free of
             self-intersections);
  table.obj  a table: a top on four legs, as ONE watertight surface (the boundary of a
             union of grid cells, sharing the vertices where the legs meet the top), so
             the mesh collider can tell inside from outside.

Usage: python3 analysis/tools/make_collider_meshes.py [OUTDIR]   (default data/meshes)
"""
import argparse
import math
import os


def icosphere(levels):
    t = (1.0 + math.sqrt(5.0)) / 2.0
    v = [(-1, t, 0), (1, t, 0), (-1, -t, 0), (1, -t, 0), (0, -1, t), (0, 1, t),
         (0, -1, -t), (0, 1, -t), (t, 0, -1), (t, 0, 1), (-t, 0, -1), (-t, 0, 1)]
    v = [normalize(p) for p in v]
    f = [(0, 11, 5), (0, 5, 1), (0, 1, 7), (0, 7, 10), (0, 10, 11), (1, 5, 9), (5, 11, 4),
         (11, 10, 2), (10, 7, 6), (7, 1, 8), (3, 9, 4), (3, 4, 2), (3, 2, 6), (3, 6, 8),
         (3, 8, 9), (4, 9, 5), (2, 4, 11), (6, 2, 10), (8, 6, 7), (9, 8, 1)]
    for _ in range(levels):
        mid = {}

        def midpoint(a, b):
            k = (min(a, b), max(a, b))
            if k not in mid:
                pa, pb = v[a], v[b]
                v.append(normalize(tuple(0.5 * (pa[i] + pb[i]) for i in range(3))))
                mid[k] = len(v) - 1
            return mid[k]

        nf = []
        for a, b, c in f:
            ab, bc, ca = midpoint(a, b), midpoint(b, c), midpoint(c, a)
            nf += [(a, ab, ca), (b, bc, ab), (c, ca, bc), (ab, bc, ca)]
        f = nf
    return v, f


def normalize(p):
    n = math.sqrt(sum(c * c for c in p))
    return tuple(c / n for c in p)


def blob():
    v, f = icosphere(4)
    radius, center = 0.28, (0.0, 0.0, 0.24)
    # (direction, amplitude relative to the radius, angular width in radians)
    bumps = [((0.0, 0.0, 1.0), 0.25, 0.55),    # head
             ((0.35, 0.25, 0.9), 0.45, 0.22),  # ear
             ((-0.35, 0.25, 0.9), 0.40, 0.22), # ear
             ((0.9, 0.0, -0.3), 0.20, 0.50),   # haunch
             ((0.0, -1.0, 0.1), 0.15, 0.45),   # snout
             ((0.0, 0.0, -1.0), -0.15, 0.60)]  # flattened base
    bumps = [(normalize(d), a, w) for d, a, w in bumps]
    out = []
    for p in v:
        r = 1.0
        for d, a, w in bumps:
            ang = math.acos(max(-1.0, min(1.0, sum(p[i] * d[i] for i in range(3)))))
            r += a * math.exp(-(ang / w) ** 2)
        out.append(tuple(center[i] + radius * r * p[i] for i in range(3)))
    return out, f


def table():
    xs = [-0.5, -0.45, 0.45, 0.5]
    ys = [-0.3, -0.25, 0.25, 0.3]
    zs = [0.0, 0.66, 0.7]
    nx, ny, nz = len(xs) - 1, len(ys) - 1, len(zs) - 1

    def solid(i, j, k):
        if not (0 <= i < nx and 0 <= j < ny and 0 <= k < nz):
            return False
        return k == 1 or (i in (0, 2) and j in (0, 2))  # top slab, or a leg

    index, verts, faces = {}, [], []

    def vid(node):
        if node not in index:
            index[node] = len(verts)
            verts.append((xs[node[0]], ys[node[1]], zs[node[2]]))
        return index[node]

    for i in range(nx):
        for j in range(ny):
            for k in range(nz):
                if not solid(i, j, k):
                    continue
                cell = (i, j, k)
                for a in range(3):
                    for s in (0, 1):
                        nb = list(cell)
                        nb[a] += 1 if s else -1
                        if solid(*nb):
                            continue
                        b, c = (a + 1) % 3, (a + 2) % 3
                        quad = []
                        for db, dc in ((0, 0), (1, 0), (1, 1), (0, 1)):
                            node = list(cell)
                            node[a] += s
                            node[b] += db
                            node[c] += dc
                            quad.append(vid(tuple(node)))
                        if not s:  # -a side: reverse so the normal points outward
                            quad.reverse()
                        faces += [(quad[0], quad[1], quad[2]), (quad[0], quad[2], quad[3])]
    return verts, faces


def write(path, header, v, f):
    with open(path, "w") as fp:
        for line in header:
            fp.write("# " + line + "\n")
        fp.write("# %d vertices, %d triangles; closed, counter-clockwise seen from outside.\n"
                 % (len(v), len(f)))
        for p in v:
            fp.write("v %.6f %.6f %.6f\n" % p)
        for a, b, c in f:
            fp.write("f %d %d %d\n" % (a + 1, b + 1, c + 1))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\nUsage:")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("outdir", nargs="?", default=os.path.join("data", "meshes"),
                    help="output folder (default data/meshes)")
    out = ap.parse_args().outdir
    v, f = blob()
    lo = [min(p[i] for p in v) for i in range(3)]
    hi = [max(p[i] for p in v) for i in range(3)]
    write(os.path.join(out, "blob.obj"),
          ["A bunny-like blob for mesh-collider scenes, bounding box [%.3f, %.3f] x [%.3f, %.3f]"
           % (lo[0], hi[0], lo[1], hi[1]) + " x [%.3f, %.3f] m:" % (lo[2], hi[2]),
           "an icosphere (4 subdivisions) with smooth radial bumps. Made by",
           "analysis/tools/make_collider_meshes.py."], v, f)
    v, f = table()
    write(os.path.join(out, "table.obj"),
          ["A table (top 1.0 x 0.6 x 0.04 m at height 0.66..0.7, legs 0.05 x 0.05 m) as one",
           "watertight surface. Made by analysis/tools/make_collider_meshes.py."], v, f)


if __name__ == "__main__":
    main()
