#!/usr/bin/env python3
"""analysis/figures/cantilever.py — bending against the elastica (issue 32): the chord angle
of Peirce's cantilever at rest against Gamma = rho_A g L^3 / B, every method's runs as
markers over the inextensible elastica (`clothbench elastica`), and the overhang at which
each method's chord reaches ASTM D1388's 41.5 degrees, in bending lengths (the elastica:
2.000).

Reads the output folder of `clothbench sweep experiments/figures/cantilever.yaml` (explicit),
with --also those of cantilever_methods.yaml (xpbd, pbd, fms, newton on the same grid) and
cantilever_fms.yaml (fms at 100 iterations, which brings it to rest; filled beside its hollow
10-iteration markers), and
with --fabrics that of experiments/figures/cantilever_fabrics.yaml (the measured fabrics
of data/materials/, one marker each, and their table); --runs adds single run files (a
method too slow to sweep). Per run: L = the largest rest x (the
clamp edge is x = 0), rho_A = the cloth's mass / its rest area, B = 4.8 cloth.bend when the
scene sets the bend, else the material's E t^3 / (12 (1 - nu^2)) (core/material.h); the
chord from the mean of the clamp-edge vertices to the mean of the tip column, last frame.
A run is at rest when its chord moved less than 0.01 degrees over its last 0.5 s (else it
is drawn hollow and flagged). pbd's bending ignores cloth.bend (its dimensionless
bend_stiffness): its markers sit at the Gamma the scene asks for, drawn apart, and it gets
no crossing. Runs that did not end ok are an x at the top. Writes cantilever.png, .pdf and
.csv (every run), cantilever_crossing.csv and, with --fabrics, cantilever_fabrics.csv.
"""
import math
import os
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import cbrun  # noqa: E402

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")
HINGE = 4.8          # B / k_bend (CB_HINGE_STIFFNESS, core/material.h)
ASTM = 41.5          # degrees
SETTLED = 0.01       # degrees over the last 0.5 s
IGNORES_BEND = {"pbd": "pbd (bend_stiffness 0.1; ignores cloth.bend)"}


def extra(ap):
    ap.add_argument("--also", nargs="+", default=[], metavar="DIR",
                    help="more Gamma sweeps of the cantilever (cantilever_methods: the other methods)")
    ap.add_argument("--fabrics", metavar="DIR", help="output folder of the cantilever_fabrics sweep")
    ap.add_argument("--runs", nargs="+", default=[], metavar="RUN.h5",
                    help="single cantilever run files to add (diamonds), e.g. a method too slow to sweep")
    ap.add_argument("--clothbench", default=os.environ.get("CLOTHBENCH", "build/clothbench"),
                    help="the program that solves the elastica (default build/clothbench)")


def elastica_curve(np, exe):
    try:
        out = subprocess.run([exe, "elastica", "--min", "0.03", "--max", "300", "--points", "401"],
                             check=True, capture_output=True, text=True).stdout
    except (OSError, subprocess.CalledProcessError) as e:
        cbrun.fail("cannot run '%s elastica' (%s); give --clothbench" % (exe, e))
    rows = [list(map(float, line.split(","))) for line in out.strip().split("\n")[1:]]
    a = np.array(rows)
    return a[:, 0], a[:, 3]  # gamma, chord_deg


def material(name):
    path = os.path.join(ROOT, "data", "materials", name + ".yaml")
    try:
        with open(path) as f:
            return cbrun.parse_scene(f.read())
    except OSError:
        cbrun.fail("%s: no such material file" % path)


def measure(np, path):
    """gamma, chord (deg), its change over the last 0.5 s, solver, material, status."""
    f = cbrun.open_run(path)
    scene = cbrun.parse_scene(cbrun.attr(f, "scene_text"))
    cloth = scene["cloth"]
    X = f["mesh/rest_positions"][()]
    L = float(X[:, 0].max())
    area = float(np.prod(cloth["grid"]["size"]))
    rho_a = float(np.sum(f["mesh/masses"][()])) / area
    g = float(np.linalg.norm(scene.get("gravity", [0, 0, -9.81])))
    name = cloth.get("material", "")
    if "bend" in cloth:
        B = HINGE * float(cloth["bend"])
    else:
        m = material(name)
        E, t, nu = float(m["youngs_modulus"]), float(m["thickness"]), float(m["poisson_ratio"])
        B = E * t ** 3 / (12 * (1 - nu * nu))
    clamp = np.abs(X[:, 0]) < 1e-9
    tip = np.abs(X[:, 0] - L) < 1e-9

    def chord(x):
        d = x[tip].mean(axis=0) - x[clamp].mean(axis=0)
        return math.degrees(math.atan2(-d[2], d[0]))
    times = f["frames/time"][()]
    frames = f["frames/positions"]
    last = chord(frames[-1])
    k = int(np.searchsorted(times, times[-1] - 0.5 - 1e-9))
    moved = abs(last - chord(frames[k])) if k < len(times) - 1 else float("nan")
    out = dict(gamma=rho_a * g * L ** 3 / B, chord=last, moved=moved, solver=cbrun.attr(f, "solver"),
               material=name, status=cbrun.attr(f, "status"), L=L, rho_a=rho_a, B=B, g=g)
    f.close()
    return out


def runs(np, folder, name):
    _, rows = cbrun.load_sweep(folder, name)
    out = []
    for r in rows:
        try:
            m = measure(np, os.path.join(folder, r["file"]))
        except cbrun.RunError as e:
            cbrun.fail(str(e))
        m["sweep"] = name
        out.append(m)
    return out


def crossing(np, pts):
    """Gamma where the chord crosses ASTM's 41.5 degrees (log-linear between neighbours)."""
    pts = sorted(pts)
    for (g0, c0), (g1, c1) in zip(pts, pts[1:]):
        if c0 <= ASTM <= c1 and c1 > c0:
            s = (ASTM - c0) / (c1 - c0)
            return math.exp(math.log(g0) + s * (math.log(g1) - math.log(g0)))
    return float("nan")


def main():
    args = cbrun.figure_args("cantilever", __doc__, extra)
    import numpy as np
    gam, chd = elastica_curve(np, args.clothbench)

    def exact(g):
        return float(np.interp(math.log(g), np.log(gam), chd))
    all_runs = runs(np, args.folder, "cantilever")
    for d in args.also:
        all_runs += runs(np, d, os.path.basename(os.path.normpath(d)))
    fabric_runs = runs(np, args.fabrics, "cantilever_fabrics") if args.fabrics else []
    single = []
    for p in args.runs:
        try:
            single.append(dict(measure(np, p), sweep=os.path.basename(p)))
        except cbrun.RunError as e:
            cbrun.fail(str(e))
    plt = cbrun.use_agg()
    fig, (ax, ax2) = plt.subplots(2, 1, figsize=(6.8, 7.2), sharex=True, height_ratios=[3, 1.4])
    ax.semilogx(gam, chd, "k-", lw=1.2, label="elastica (clothbench elastica)")
    ax.axhline(ASTM, color="0.6", lw=0.6, ls="--")
    ax.axvline(8.0, color="0.6", lw=0.6, ls="--")
    solvers = sorted({r["solver"] for r in all_runs + fabric_runs + single})
    colours = {s: "C%d" % i for i, s in enumerate(solvers)}
    table, cross, labelled = [], [], set()
    for i, s in enumerate(solvers):
        lab = IGNORES_BEND.get(s, s)
        size = 7.5 - 4.0 * i / max(1, len(solvers) - 1)  # smaller on top: coinciding methods stay visible
        for group, marker in ((all_runs, "o"), (fabric_runs, "s"), (single, "D")):
            mine = [r for r in group if r["solver"] == s]
            ok = [r for r in mine if r["status"] == "ok"]
            rest = [r for r in ok if r["moved"] < SETTLED]
            moving = [r for r in ok if not r["moved"] < SETTLED]
            face = "none" if s in IGNORES_BEND else colours[s]
            if rest:
                ax.plot([r["gamma"] for r in rest], [r["chord"] for r in rest], marker, color=colours[s],
                        mfc=face, ms=size if marker == "o" else size + 2, ls="none",
                        label=None if s in labelled else lab, zorder=3)
                labelled.add(s)
                if s not in IGNORES_BEND:
                    ax2.semilogx([r["gamma"] for r in rest], [r["chord"] - exact(r["gamma"]) for r in rest],
                                 marker, color=colours[s], ms=5, ls="none")
            if moving:
                ax.plot([r["gamma"] for r in moving], [r["chord"] for r in moving], marker, color=colours[s],
                        mfc="none", mew=0.6, ms=9, ls="none",
                        label=None if (s, "moving") in labelled else lab + " (not at rest)")
                labelled.add((s, "moving"))
            bad = [r for r in mine if r["status"] != "ok"]
            if bad:
                ax.plot([r["gamma"] for r in bad], [92] * len(bad), "x", color=colours[s], ms=8)
            for r in mine:
                table.append([r["sweep"], s, r["material"], r["gamma"], r["chord"], exact(r["gamma"]),
                              r["chord"] - exact(r["gamma"]), r["moved"], r["status"]])
        if s not in IGNORES_BEND:
            g = crossing(np, [(r["gamma"], r["chord"]) for r in all_runs
                              if r["solver"] == s and r["status"] == "ok" and r["moved"] < SETTLED])
            cross.append([s, g, g ** (1 / 3) if g == g else float("nan")])
    ge = crossing(np, list(zip(gam, chd)))
    cross.insert(0, ["elastica", ge, ge ** (1 / 3)])
    ax.set_ylabel("chord angle below horizontal [deg]")
    ax.set_ylim(0, 95)
    ax.legend(loc="lower right", fontsize=8)
    ax.set_title("Peirce's cantilever at rest: clamp-to-tip chord against Gamma\n"
                 "circles: Gamma by cloth.bend; squares: fabrics; diamonds: single runs;\n"
                 "large hollow: not at rest; "
                 "dashed: ASTM D1388's 41.5 deg at Gamma 8", fontsize=9)
    ax2.axhline(0, color="k", lw=0.6)
    ax2.set_xlabel("Gamma = rho_A g L^3 / B [-]")
    ax2.set_yscale("symlog", linthresh=1.0)  # explicit's tenths of a degree beside xpbd's tens
    ax2.set_ylim(-0.3, 150)
    ax2.set_ylabel("chord - elastica [deg]")
    out = cbrun.save(fig, os.path.join(args.folder, "cantilever.png"),
                     ["sweep", "solver", "material", "gamma [-]", "chord [deg]", "elastica_chord [deg]",
                      "error [deg]", "moved_last_0.5s [deg]", "status"], table)
    cpath = cbrun.write_csv(os.path.join(args.folder, "cantilever_crossing.csv"),
                            ["method", "gamma_at_41.5deg [-]", "overhang_over_bending_length [-]"], cross)
    print("overhang at chord 41.5 deg, in bending lengths (elastica 2.000; ASTM D1388 2):")
    for m, g, r in cross:
        if g == g:
            print("  %-10s Gamma %7.3f  L/c %.4f  (%+.2f%% from 2)" % (m, g, r, 100 * (r / 2 - 1)))
        else:
            print("  %-10s none: its runs at rest do not bracket 41.5 deg" % m)
    print("runs not at rest (chord moved >= %.2g deg in the last 0.5 s): %s" % (
        SETTLED, ", ".join("%s %s G=%.3g" % (r[1], r[2], r[3]) for r in table if not r[7] < SETTLED) or "none"))
    files = list(out) + [cpath]
    if fabric_runs:
        ftab = []
        for name in sorted({r["material"] for r in fabric_runs}):
            mine = [r for r in fabric_runs + single if r["material"] == name and "bend" not in r["sweep"]]
            r0 = mine[0]
            c = (r0["B"] / (r0["rho_a"] * r0["g"])) ** (1 / 3)
            row = [name, r0["rho_a"], r0["B"], c, r0["L"], r0["gamma"], exact(r0["gamma"])]
            row += [next((r["chord"] if r["status"] == "ok" else float("nan") for r in mine if r["solver"] == s),
                         float("nan")) for s in solvers]
            row.append(" ".join(r["solver"] for r in mine if not r["moved"] < SETTLED))
            ftab.append(row)
        files.append(cbrun.write_csv(os.path.join(args.folder, "cantilever_fabrics.csv"),
                                     ["material", "rho_A [kg/m^2]", "B [N m]", "bending_length [m]",
                                      "overhang [m]", "gamma [-]", "elastica_chord [deg]"] +
                                     ["%s_chord [deg]" % s for s in solvers] + ["not_at_rest"], ftab))
        print("| fabric | rho_A kg/m^2 | B N m | c mm | Gamma at L | elastica | " + " | ".join(solvers) + " |")
        for row in ftab:
            moving = row[-1].split()
            print("| %s | %.4f | %.3g | %.2f | %.1f | %.2f | " % (row[0], row[1], row[2], 1e3 * row[3], row[5], row[6])
                  + " | ".join("%.2f%s" % (v, "*" if s in moving else "") for s, v in zip(solvers, row[7:-1]))
                  + " |")
        print("(* not at rest: the chord still moved >= %.2g deg in the last 0.5 s)" % SETTLED)
    print("wrote " + ", ".join(files))


if __name__ == "__main__":
    main()
