#!/usr/bin/python3
"""data/meshes/make_capstan.py -- writes the strips of the capstan scenes
(data/scenes/capstan_{90,180,270}.yaml, issue 32 item 1): capstan_90.obj, capstan_180.obj, capstan_270.obj.

A strip 0.02 m wide (two vertices across, a ladder of triangles, ~0.01 m segments) whose
centre line is a straight leg of 0.1 m (the fixed end, vertices 0 and 1), a helix of wrap
angle phi about the y axis with a pitch of 0.006 m per radian (the legs of the 270 degree
wrap pass each other 28 mm apart instead of crossing), and a straight leg of 0.06 m along
the helix's tangent (the pulled end: the last two vertices). The wrap is symmetric about
the top of the cylinder (+z).

The collider offset is 0.051 m (the capsule's radius 0.05 m plus half the cloth thickness
0.002 m). The strip starts GAP = 0.05 mm outside it everywhere, not at it: a barrier
method (ipc) cannot start at the offset (its barrier is infinite there). The nearest
points of the wrap to the axis are its chords' midpoints (every edge and triangle of a
segment projects onto its chord), so the helix's vertices are at radius
R = (0.051 + GAP) / cos(da / 2), da the wrap angle of a segment (0.196 rad in all three
wraps: R = 0.051296 m, the vertices 0.30 mm outside the offset, the chords 0.05 mm).
The other methods pull the strip onto the offset in the first steps (it is pulled from
the start). Euler-Eytelwein's ratio is exp(mu phi cos beta), beta the helix angle where
the strip rests on the offset, tan beta = 0.006 / 0.051 (cos beta = 0.9931; at the
vertices' radius R it would be 0.9932; the strip's curvature on a helix is cos^2 beta / r
over a length r phi / cos beta). Run: /usr/bin/python3 data/meshes/make_capstan.py
"""
import math
import os

OFFSET = 0.051  # collider radius + thickness / 2
GAP = 5e-5      # clearance of every edge and triangle outside the offset
PITCH = 0.006  # y advance per radian of wrap
SEG = 0.01     # segment length
WIDTH = 0.02
LEG_FIXED, LEG_PULLED = 0.10, 0.06


def centre_line(phi):
    """Points of the centre line and the unit tangent at each (fixed end first)."""
    a0 = math.pi / 2 + phi / 2  # the wrap goes clockwise seen from +y, over the top
    # segments of ~SEG on the arc at the offset; the vertices' radius puts the chords GAP out
    na = max(1, round(OFFSET * phi / math.cos(math.atan(PITCH / OFFSET)) / SEG))
    R = (OFFSET + GAP) / math.cos(phi / na / 2)
    def helix(a_off):  # a_off in [0, phi]: angle travelled from the fixed side
        a = a0 - a_off
        return (R * math.cos(a), PITCH * (a_off - phi / 2), R * math.sin(a))
    def tangent(a_off):
        a = a0 - a_off
        t = (R * math.sin(a), PITCH, -R * math.cos(a))
        n = math.sqrt(sum(c * c for c in t))
        return tuple(c / n for c in t)
    pts = []
    t0, p0 = tangent(0.0), helix(0.0)
    nf = round(LEG_FIXED / SEG)
    for k in range(nf, 0, -1):
        pts.append(tuple(p0[i] - k * SEG * t0[i] for i in range(3)))
    for k in range(na + 1):
        pts.append(helix(phi * k / na))
    t1, p1 = tangent(phi), helix(phi)
    for k in range(1, round(LEG_PULLED / SEG) + 1):
        pts.append(tuple(p1[i] + k * SEG * t1[i] for i in range(3)))
    return pts, t1


def write(phi_deg):
    phi = math.radians(phi_deg)
    pts, t1 = centre_line(phi)
    path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "capstan_%d.obj" % phi_deg)
    with open(path, "w") as f:
        f.write("# Capstan strip, wrap %d degrees: data/meshes/make_capstan.py wrote it (read its header).\n"
                % phi_deg)
        f.write("# %d vertices; fixed end: 0 1; pulled end: %d %d; pulled along (%.6f, %.6f, %.6f)\n"
                % (2 * len(pts), 2 * len(pts) - 2, 2 * len(pts) - 1, *t1))
        for p in pts:  # across the strip: the cylinder's axis, y +- WIDTH/2
            for s in (-0.5, 0.5):
                f.write("v %.9f %.9f %.9f\n" % (p[0], p[1] + s * WIDTH, p[2]))
        for k in range(len(pts) - 1):
            a, b, c, d = 2 * k + 1, 2 * k + 2, 2 * k + 3, 2 * k + 4
            f.write("f %d %d %d\nf %d %d %d\n" % (a, c, b, b, c, d))
    return 2 * len(pts), t1


if __name__ == "__main__":
    for deg in (90, 180, 270):
        n, t1 = write(deg)
        print("capstan_%d.obj: %d vertices, pulled end %d %d along (%.6f, %.6f, %.6f)" % (deg, n, n - 2, n - 1, *t1))
