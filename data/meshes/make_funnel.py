#!/usr/bin/python3
"""data/meshes/make_funnel.py -- writes data/meshes/funnel.obj, the funnel of the gauntlet's
funnel scene (data/scenes/gauntlet/funnel.yaml, issue 33).

An open surface of revolution about the z axis (no caps, no wall thickness: a mesh
collider whose distance is unsigned, so the cloth stays on the side it starts on): a cone
from the rim (radius 0.30 m at z = 0.70 m) down to the throat (radius 0.05 m at z = 0.35 m),
then a straight neck of the throat's radius down to z = 0.15 m. The wall is cut into
rings about 5 cm apart along the profile, each of 16 vertices; neighbouring rings are
joined by two triangles per segment. Run: /usr/bin/python3 data/meshes/make_funnel.py
[OUT.obj] (default: funnel.obj beside this script; tests/test_gauntlet.c writes it to a
temporary file and compares it with the bundled one).
"""
import math
import os
import sys

RIM = (0.30, 0.70)     # (radius, z) of the rim
THROAT = (0.05, 0.35)  # (radius, z) where the cone meets the neck
NECK_END = 0.15        # z of the neck's lower end
SEGMENTS = 16          # vertices per ring
SPACING = 0.05         # rough distance between rings along the profile (m)


def profile():
    """(radius, z) of every ring, rim first."""
    pts = []
    for (r0, z0), (r1, z1) in ((RIM, THROAT), (THROAT, (THROAT[0], NECK_END))):
        n = max(1, round(math.hypot(r1 - r0, z1 - z0) / SPACING))
        start = 0 if not pts else 1  # the throat ring once
        for k in range(start, n + 1):
            s = k / n
            pts.append((r0 + s * (r1 - r0), z0 + s * (z1 - z0)))
    return pts


def main():
    rings = profile()
    path = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(os.path.abspath(__file__)), "funnel.obj")
    with open(path, "w") as f:
        f.write("# Funnel: data/meshes/make_funnel.py wrote it (read its header).\n")
        f.write("# rim r %.3f at z %.3f, throat r %.3f at z %.3f, neck to z %.3f; %d rings of %d\n"
                % (RIM[0], RIM[1], THROAT[0], THROAT[1], NECK_END, len(rings), SEGMENTS))
        for r, z in rings:
            for j in range(SEGMENTS):
                a = 2.0 * math.pi * j / SEGMENTS
                f.write("v %.9f %.9f %.9f\n" % (r * math.cos(a), r * math.sin(a), z))
        for i in range(len(rings) - 1):
            for j in range(SEGMENTS):
                a = 1 + i * SEGMENTS + j
                b = 1 + i * SEGMENTS + (j + 1) % SEGMENTS
                c, d = a + SEGMENTS, b + SEGMENTS
                f.write("f %d %d %d\nf %d %d %d\n" % (a, c, b, b, c, d))
    print("%s: %d rings of %d vertices, %d triangles"
          % (path, len(rings), SEGMENTS, 2 * SEGMENTS * (len(rings) - 1)))


if __name__ == "__main__":
    main()
