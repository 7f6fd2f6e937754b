#!/usr/bin/env python3
"""analysis/tools/pbd_reference.py — an independent PBD (Mueller et al. 2007) in numpy.

Not clothbench's solver: a from-scratch implementation of the paper's loop with stretch
(distance) constraints only, stiffness 1, no bending, no collisions, no damping:
    v += dt g; p = x + dt v (pins: p = x); `iterations` Gauss-Seidel sweeps over the edges,
    each edge moving its ends by the mass-weighted share of (|p_a - p_b| - L);
    v = (p - x) / dt; x = p.
The sweeps go colour by colour (a greedy colouring of the edges so that no two edges of
a colour share a vertex): within a colour the projections are independent, so this is
exactly a serial Gauss-Seidel sweep in that order.

It takes the mesh (rest positions, edges, lumped masses) from a clothbench run file, so
it runs the same grid; pins are the vertices given (default: the two top corners of a
grid hanging in the xz plane, as data/scenes/hanging.yaml). It prints, per iteration
count, the largest edge strain |l - L| / L at the end and over the run, to compare with
clothbench's pbd run with the same settings:

    build-release/clothbench run data/scenes/hanging.yaml --solver pbd -o h.h5 \
        --set solvers.pbd.stepping=paper --set solvers.pbd.bend_stiffness=0 \
        --set solvers.pbd.self_collision=false --set health.max_strain=1000 \
        --set health.energy_factor=1e9
    /usr/bin/python3 analysis/tools/pbd_reference.py h.h5 --iterations 10 100

pbd's default small steps are this loop with dt / substeps and one iteration
(substeps = ceil(dt / max_substep), 67 at 1/60 s): `--iterations 1 --substeps 67` against
a run with the default stepping (README "Benchmarks": the hanging cloth at 128 x 128).
"""
import argparse
import sys

import numpy as np


def colour_edges(edges, nv):
    """Greedy colouring: lists of edge indices, no two edges of a list share a vertex."""
    colours, used = [], []
    for e, (a, b) in enumerate(edges):
        for c, u in enumerate(used):
            if a not in u and b not in u:
                colours[c].append(e)
                u.update((a, b))
                break
        else:
            colours.append([e])
            used.append({a, b})
    return [np.array(c) for c in colours]


def simulate(x0, edges, w, dt, steps, iterations, g, substeps=1):
    """`steps` steps of dt, each `substeps` runs of the loop with dt / substeps (small
    steps, Macklin et al. 2019, with substeps = ceil(dt / max_substep) and 1 iteration);
    returns the max strain at the end and its largest value at the end of any step."""
    dt = dt / substeps
    x = x0.copy()
    v = np.zeros_like(x)
    L = np.linalg.norm(x0[edges[:, 0]] - x0[edges[:, 1]], axis=1)
    colours = colour_edges(edges.tolist(), len(x0))
    free = w > 0
    peak = 0.0
    for n in range(steps * substeps):
        v[free] += dt * g
        p = x + dt * v
        for _ in range(iterations):
            for c in colours:
                a, b = edges[c, 0], edges[c, 1]
                d = p[a] - p[b]
                l = np.linalg.norm(d, axis=1)
                ws = w[a] + w[b]
                ok = (ws > 0) & (l > 0)
                s = np.where(ok, (l - L[c]) / np.where(ok, ws * l, 1.0), 0.0)[:, None] * d
                p[a] -= w[a][:, None] * s
                p[b] += w[b][:, None] * s
        v = (p - x) / dt
        x = p
        if (n + 1) % substeps:
            continue
        strain = np.max(np.abs(np.linalg.norm(x[edges[:, 0]] - x[edges[:, 1]], axis=1) - L) / L)
        peak = max(peak, strain)
        if not np.isfinite(strain):
            break
    return strain, peak


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("run", help="a clothbench run file: its /mesh and dt, duration and gravity")
    ap.add_argument("--iterations", type=int, nargs="+", default=[10])
    ap.add_argument("--pins", type=int, nargs="*", help="pinned vertex indices (default: the two top corners)")
    ap.add_argument("--steps", type=int, help="steps (default: the run's duration / dt)")
    ap.add_argument("--substeps", type=int, default=1,
                    help="loops per step, each of dt / substeps (pbd's small steps: ceil(dt / max_substep), "
                         "with --iterations 1; default 1, the paper's loop)")
    a = ap.parse_args()
    import h5py
    with h5py.File(a.run, "r", locking=False) as f:
        x0 = f["mesh/rest_positions"][:].astype(float)
        edges = f["mesh/edges"][:].astype(int)
        m = f["mesh/masses"][:].astype(float)
        dt = float(f["series/dt"][1]) if len(f["series/dt"]) > 1 else float(f["series/dt"][0])
        text = f.attrs["scene_text"]
        text = text.decode() if isinstance(text, bytes) else text
    import re
    dur = float(re.search(r"^duration:\s*([0-9.eE+-]+)", text, re.M).group(1))
    steps = a.steps or int(round(dur / dt))
    if a.pins is None:
        top = x0[:, 2].max()
        row = np.where(np.abs(x0[:, 2] - top) < 1e-9)[0]
        pins = [row[np.argmin(x0[row, 0])], row[np.argmax(x0[row, 0])]]
    else:
        pins = a.pins
    w = np.where(m > 0, 1.0 / np.where(m > 0, m, 1.0), 0.0)
    w[pins] = 0.0
    g = np.array([0.0, 0.0, -9.81])
    print("reference PBD: %d vertices, %d edges, pins %s, dt %g, %d steps of %d substeps"
          % (len(x0), len(edges), list(pins), dt, steps, a.substeps))
    print("iterations,final_max_strain,max_strain_over_run")
    for it in a.iterations:
        s, p = simulate(x0, edges, w, dt, steps, it, g, a.substeps)
        print("%d,%.6g,%.6g" % (it, s, p))
        sys.stdout.flush()


if __name__ == "__main__":
    main()
