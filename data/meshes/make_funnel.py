#!/usr/bin/python3
"""data/meshes/make_funnel.py -- writes data/meshes/funnel.obj, the funnel of the gauntlet's
funnel scene (data/scenes/gauntlet/funnel.yaml, issue 33).

A closed surface of revolution about the z axis: a funnel whose wall is 1 cm thick. Its
inner surface is a cone from the rim (radius 0.30 m at z = 0.70 m) down to the throat
(radius 0.07 m at z = 0.35 m), then a straight neck of the throat's radius down to
z = 0.15 m; the outer surface is the inner one moved 1 cm out horizontally, and flat
rings close the wall at the rim and at the neck's end. Closed, so it has an inside (the
wall): a vertex that goes into or through the wall is seen by the penetration metrics
and the audit, which an open cone (unsigned distance) would hide. The closed profile
(inner rim, down the inside, across the neck's end, up the outside, across the rim) is
cut about every 5 cm on the inside (the outside and the flat rings are one band each)
and turned about z in 16 steps; each profile segment sweeps a band of two triangles
per step, all wound the same way.
Run: /usr/bin/python3 data/meshes/make_funnel.py [OUT.obj] (default: funnel.obj beside
this script; tests/test_gauntlet.c writes it to a temporary file and compares it with
the bundled one).
"""
import math
import os
import sys

RIM = (0.30, 0.70)     # (radius, z) of the inner rim
THROAT = (0.07, 0.35)  # (radius, z) where the inner cone meets the neck
NECK_END = 0.15        # z of the neck's lower end
WALL = 0.01            # wall thickness, horizontal (m)
SEGMENTS = 16          # vertices per ring
SPACING = 0.05         # rough distance between rings along the profile (m)


def profile():
    """(radius, z) of every ring of the closed profile, without repeating the first."""
    inner = [RIM, THROAT, (THROAT[0], NECK_END)]
    outer = [(r + WALL, z) for r, z in reversed(inner)]
    corners = inner + outer
    pts = []
    for i in range(len(corners)):
        (r0, z0), (r1, z1) = corners[i], corners[(i + 1) % len(corners)]
        # the inside, which the cloth touches, cut every SPACING; the outside and the
        # flat rings in one band each (fewer triangles: a cheaper closest-point query)
        n = max(1, round(math.hypot(r1 - r0, z1 - z0) / SPACING)) if i < len(inner) - 1 else 1
        for k in range(n):  # the segment's end is the next segment's start
            s = k / n
            pts.append((r0 + s * (r1 - r0), z0 + s * (z1 - z0)))
    return pts


def main():
    rings = profile()
    path = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(os.path.abspath(__file__)), "funnel.obj")
    n = len(rings)
    with open(path, "w") as f:
        f.write("# Funnel: data/meshes/make_funnel.py wrote it (read its header).\n")
        f.write("# inner rim r %.3f at z %.3f, throat r %.3f at z %.3f, neck to z %.3f, wall %.3f; %d rings of %d\n"
                % (RIM[0], RIM[1], THROAT[0], THROAT[1], NECK_END, WALL, n, SEGMENTS))
        for r, z in rings:
            for j in range(SEGMENTS):
                a = 2.0 * math.pi * j / SEGMENTS
                f.write("v %.9f %.9f %.9f\n" % (r * math.cos(a), r * math.sin(a), z))
        for i in range(n):
            i1 = (i + 1) % n
            for j in range(SEGMENTS):
                j1 = (j + 1) % SEGMENTS
                a, b = 1 + i * SEGMENTS + j, 1 + i * SEGMENTS + j1
                c, d = 1 + i1 * SEGMENTS + j, 1 + i1 * SEGMENTS + j1
                f.write("f %d %d %d\nf %d %d %d\n" % (a, b, c, b, d, c))  # outward normals
    print("%s: %d rings of %d vertices, %d triangles" % (path, n, SEGMENTS, 2 * SEGMENTS * n))


if __name__ == "__main__":
    main()
