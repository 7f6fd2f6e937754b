#!/usr/bin/env python3
"""analysis/figures/gauntlet.py — the contact gauntlet's scoreboard (issue 33): rows are the
methods, columns the scenes of `clothbench sweep experiments/gauntlet.yaml` (whatever scenes
and methods its index holds), each cell one run: its status, its worst symptom and a
severity colour, and per method whether it kept its paper's promise on every scene.

Every row of the index is a cell and every method x scene pair is drawn: a run that timed
out (the experiment's time_limit), was interrupted, is still running, was never run
(pending, no file) or could not start is drawn as such, never left out.

Symptoms of a cell (from the run file's series; the audit's when the sweep ran with it):
  crossings     the continuous audit's counts summed over the steps: every series named
                *_crossings_in_step (self_crossings_in_step: cloth pairs that touched during
                a step; collider_crossings_in_step: vertices whose path went inside a
                collider; any other count series the audit writes, e.g. edges and faces
                through a collider, is shown under its own name; one a run lacks is
                "absent")
  pairs         intersecting triangle pairs of the cloth at the end (self_intersections,
                its last value)
  depth         the deepest penetration of a vertex, edge or triangle into a collider over
                the run (collider_max_depth), against the cloth thickness t
  energy        max over t of E - E0 - W_ext, the energy the method added beyond the work
                of moving pins and colliders, in J and in units of the health rule's E_ref
  strain        the peak strain (max_strain)
  ms/step       the solver's mean wall time per step (and the audit's, apart)

Severity:
  green         status ok, no crossing, no intersecting pair, no depth, energy and strain
                within the tolerances below, and the method's promise kept
  yellow        symptoms within tolerance: 0 < depth <= t, energy rise > 0.1 E_ref, peak
                strain > 0.1, a broken promise that is no red symptom, or no audit (run
                without it, no crossing can be seen)
  orange        the only crossings are edges or triangles a collider passed through
                between their vertices (collider_edge / collider_face), with depth <= t: a
                triangle cutting a collider more curved or thinner than it (the flat
                triangles of a coarse cloth around a ball, a blade under a triangle); every
                method whose collider contact is per vertex shows it, so it is set apart
                from the crossings that separate the methods
  red           a self crossing or a vertex crossing during a step, an intersecting pair at
                the end, depth > t, or ended diverged (the health rule or a non-finite
                state). A ball that passes through the cloth with status ok and depth 0
                while the audit counts collider crossings is red.
  n/a (grey)    the method refused the scene (e.g. acm and mesh colliders); the reason is
                in the CSV and the Markdown
  unfinished    timed out, interrupted or running: hatched; red when what it logged before
                it stopped is already red
  missing       never run (pending) or no run file, or an error: hatched white

The promise column: each method's claim (PROMISES below, from its paper, quoted in its
solver's header comment and the README), checked on every cell it finished:
"kept" / "broken on: scenes", with the cells it could not judge counted.

Writes gauntlet.png, .pdf and .csv (one row per cell, every symptom, units in the header),
and gauntlet_table.csv, gauntlet_table.md (printed) and gauntlet_table.tex (a booktabs
tabular with coloured cells: needs \\usepackage{booktabs} and \\usepackage[table]{xcolor}).
--render draws the end frame of the worst cell of every scene with analysis/render.py
(gauntlet_worst_<scene>.png; skipped with a message when VTK is not installed).
"""
import math
import os
import re
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import cbrun  # noqa: E402

# Audit count series known today; any other series named *crossings*_in_step (other than
# the sum crossings_in_step) is shown too, so new audit counts need no change here.
AUDIT_KNOWN = ["self_crossings_in_step", "collider_crossings_in_step",
               "collider_edge_crossings_in_step", "collider_face_crossings_in_step"]
AUDIT_SUM = "crossings_in_step"
ENERGY_TOL = 0.1     # energy rise above which a cell is yellow, in units of E_ref
STRAIN_TOL = 0.1     # peak strain above which a cell is yellow
DEFAULT_THICKNESS = 0.002   # core/scene.c's default cloth thickness (m)
REFUSAL = re.compile(r"does not support|not supported|unsupported|refuse|not applicable", re.I)

SEVERITIES = ["green", "yellow", "orange", "red", "n/a", "unfinished", "missing"]
# crossings between a collider and the cloth's edges or triangles only (not its vertices)
BETWEEN_VERTICES = ("collider_edge_crossings_in_step", "collider_face_crossings_in_step")
COLOURS = {"green": "#4daf4a", "yellow": "#ffd92f", "orange": "#ff7f00", "red": "#e41a1c", "n/a": "#bdbdbd",
           "unfinished": "#9ecae1", "missing": "#ffffff"}
TEX_COLOURS = {"green": "green!25", "yellow": "yellow!40", "orange": "orange!45", "red": "red!35", "n/a": "black!15",
               "unfinished": "cyan!15", "missing": "white"}
RANK = {"red": 5, "orange": 4, "yellow": 3, "unfinished": 2, "green": 1, "n/a": 0, "missing": 0}


# ---------------------------------------------------------------- the methods' promises

def no_crossing(c):
    """No crossing during any step and no intersecting pair at the end."""
    return _zero(c["crossings_total"]) and _zero(c["pairs_end"])


def no_collider_crossing(c):
    """No vertex path through a collider (the audit) and no vertex inside one at a step's end."""
    return _zero(c["crossings"].get("collider_crossings_in_step")) and not _positive(c["vertex_depth"])


def stable(c):
    """Not ended diverged (the health rule or a non-finite state)."""
    return c["status"] != "diverged"


def no_pairs_no_depth(c):
    """No intersecting pair at the end and no vertex inside a collider at a step's end."""
    return _zero(c["pairs_end"]) and not _positive(c["vertex_depth"])


# solver -> (claim, source, check). The claims are the papers' own (the solver files' header
# comments cite them); a method whose paper promises nothing about contact is held to what
# it does promise (stability at large steps) and, where our implementation adds a contact
# guarantee of its own, to that (said so in the claim).
PROMISES = {
    "acm": ("never a crossing (self or collider) and no intersection: the simulation may stall, never "
            "interpenetrate", "Harmon et al. 2009, sec. 4-5", no_crossing),
    "ipc": ("never a crossing (self or collider) and no intersection: intersection-free by construction",
            "Li et al. 2020, sec. 4", lambda c: no_crossing(c)),
    "pbd": ("unconditionally stable; a vertex never passes into a collider (continuous collision "
            "constraints on the segment x -> p); self collision vertex-triangle only, so no self promise",
            "Mueller et al. 2007, sec. 3.5, 4.4", lambda c: stable(c) and no_collider_crossing(c)),
    "xpbd": ("PBD's contact and stability (the XPBD paper changes the stiffness, not the contact): "
             "stable, no vertex into a collider", "Macklin et al. 2016; Mueller et al. 2007",
             lambda c: stable(c) and no_collider_crossing(c)),
    "fms": ("stable at large time steps (implicit Euler by local/global steps); the paper leaves "
            "contact to the application, so no contact promise", "Liu et al. 2013, sec. 1, 4", stable),
    "newton": ("stable at large time steps (implicit Euler, Newton with line search); our line search "
               "keeps vertices outside colliders at the end of each step (solvers/newton.c)",
               "Liu et al. 2013, sec. 5; Nocedal & Wright ch. 3",
               lambda c: stable(c) and not _positive(c["vertex_depth"])),
    "avgforce": ("the separating-axis response removes vertex-triangle and edge-edge penetrations: no "
                 "intersecting pair and no vertex in a collider at the end of a step",
                 "Jin et al. 2020, sec. 3", no_pairs_no_depth),
    "explicit": ("no paper (the textbook baseline): stable with its automatic substeps, vertices "
                 "projected out of colliders after each drift; no self collision, so no self promise",
                 "solvers/explicit.c", lambda c: stable(c) and not _positive(c["vertex_depth"])),
}


def _zero(v):
    """True for a count known to be 0 (NaN: not measured, counts as no evidence against)."""
    return v is None or not (v > 0)


def _positive(v):
    return v is not None and v > 0


# ---------------------------------------------------------------- reading one cell

def audit_series(f):
    """Names of the audit count series in a run file: the known ones present and any other
    *crossings*_in_step but the sum."""
    names = [n for n in f["series"] if n.endswith("_in_step") and "crossings" in n and n != AUDIT_SUM]
    return sorted(names, key=lambda n: (n not in AUDIT_KNOWN, AUDIT_KNOWN.index(n) if n in AUDIT_KNOWN else 0, n))


def thickness_of(f):
    """The cloth thickness of the run's scene text (cloth.thickness), the scene default
    when it gives none; (value, assumed?)."""
    try:
        scene = cbrun.parse_scene(cbrun.attr(f, "scene_text")) or {}
        t = (scene.get("cloth") or {}).get("thickness")
        if t is not None and float(t) > 0:
            return float(t), False
    except Exception:  # noqa: BLE001 - an unreadable scene text falls back to the default
        pass
    return DEFAULT_THICKNESS, True


def status_word(row):
    """The cell's status: ok, diverged, timeout, interrupted, running, n/a, error, missing."""
    st, msg = row.get("status", "pending"), row.get("message", "")
    if st == "interrupted" and msg.startswith("time limit"):
        return "timeout"
    if st == "error" and REFUSAL.search(msg):
        return "n/a"
    if st == "pending":
        return "missing"
    return st


def read_symptoms(np, path, allow_unfinished):
    """The symptoms of one run file (dict), or None when it cannot be read."""
    try:
        f = cbrun.open_run(path, allow_unfinished=allow_unfinished)
    except cbrun.RunError as e:
        sys.stderr.write("warning: %s\n" % e)
        return None
    try:
        s = {}
        s["crossings"] = {}
        for n in audit_series(f):
            v = cbrun.series(f, n)
            s["crossings"][n] = float(np.nansum(v)) if np.any(np.isfinite(v)) else math.nan
        known = [v for v in s["crossings"].values() if not math.isnan(v)]
        s["crossings_total"] = float(sum(known)) if known else math.nan
        si = cbrun.series(f, "self_intersections")
        si = si[np.isfinite(si)]
        s["pairs_end"] = float(si[-1]) if len(si) else math.nan

        def peak(name):
            v = cbrun.series(f, name)
            v = v[np.isfinite(v)]
            return float(np.max(v)) if len(v) else math.nan
        s["depth"] = peak("collider_max_depth")
        s["vertex_depth"] = peak("vertex_max_depth")
        s["strain"] = peak("max_strain")
        E = cbrun.series(f, "total_energy")
        W = cbrun.series(f, "external_work")
        W = np.where(np.isfinite(W), W, 0.0)
        rise = (E - E[0] - W)[np.isfinite(E)]
        s["energy_rise"] = float(np.max(rise)) if len(rise) else math.nan
        e_ref = cbrun.num(cbrun.attr(f, "health_energy_ref"))
        s["energy_ref"] = e_ref
        s["energy_rise_rel"] = s["energy_rise"] / e_ref if e_ref > 0 else math.nan
        s["thickness"], s["thickness_assumed"] = thickness_of(f)
        s["frames"] = int(f["frames"]["time"].shape[0]) if "frames" in f and "time" in f["frames"] else 0
        s["t_end"] = float(cbrun.series(f, "time")[-1]) if f["series"]["time"].shape[0] else math.nan
    finally:
        f.close()
    return s


def audited(c):
    """Whether the run had the continuous audit (some audit count series with numbers):
    without it no crossing is seen, and a cell cannot be called clean."""
    return any(not math.isnan(v) for v in c.get("crossings", {}).values())


def severity(c):
    """The severity of a cell (dict with status and, when read, the symptoms) and the
    promise check (True, False or None: not judged)."""
    st = c["status"]
    if st == "n/a":
        return "n/a"
    if not c.get("read"):
        return "unfinished" if st in ("timeout", "interrupted", "running") else "missing"
    t = c["thickness"]
    between = sum(v for n, v in c.get("crossings", {}).items() if n in BETWEEN_VERTICES and not math.isnan(v))
    other = c["crossings_total"] - between if not math.isnan(c["crossings_total"]) else math.nan
    red = (st == "diverged" or _positive(other) or _positive(c["pairs_end"]) or (c["depth"] > t))
    if red:
        return "red"
    if _positive(between):
        return "orange" if st == "ok" else "unfinished"
    if st != "ok":
        return "unfinished" if st in ("timeout", "interrupted", "running") else "missing"
    yellow = (_positive(c["depth"]) or c["energy_rise_rel"] > ENERGY_TOL or c["strain"] > STRAIN_TOL or
              c.get("promise") is False or not audited(c))
    return "yellow" if yellow else "green"


def promise_of(c):
    """True/False: the method's promise on this cell; None when it cannot be judged (no
    promise recorded, n/a, missing, or unfinished without a violation so far)."""
    p = PROMISES.get(c["solver"])
    if p is None or not c.get("read") or c["status"] in ("n/a", "missing", "error"):
        return None
    kept = bool(p[2](c))
    if c["status"] in ("timeout", "interrupted", "running") and kept:
        return None
    return kept


def worst_symptom(c):
    """The one symptom that decides the cell, as short text."""
    st = c["status"]
    if st == "n/a":
        return "refused"
    if not c.get("read"):
        return {"timeout": "timed out", "interrupted": "interrupted", "running": "running"}.get(st, st)
    t = c["thickness"]
    if _positive(c["crossings_total"]):
        name, v = max(c["crossings"].items(), key=lambda kv: kv[1] if not math.isnan(kv[1]) else -1)
        return "%d crossings (%s %d)" % (c["crossings_total"], short_series(name), v)
    if _positive(c["pairs_end"]):
        return "%d pairs at end" % c["pairs_end"]
    if c["depth"] > t:
        return "depth %.3g mm > t" % (1e3 * c["depth"])
    if st == "diverged":
        return "diverged (%s)" % cbrun.diverged_cause(c["message"])   # the status line says it
    if _positive(c["depth"]):
        return "depth %.3g mm" % (1e3 * c["depth"])
    if c["energy_rise_rel"] > ENERGY_TOL:
        return "energy +%.2g E_ref" % c["energy_rise_rel"]
    if c["strain"] > STRAIN_TOL:
        return "strain %.3g" % c["strain"]
    if c.get("promise") is False:
        return "promise broken"
    if not audited(c):
        return "no audit"
    return "clean"


def short_series(name):
    return name.replace("_crossings_in_step", "").replace("_in_step", "")


def cell_of(np, folder, row):
    """One cell from one index row."""
    c = {"solver": row["solver"], "scene": row["scene"], "file": row.get("file", ""),
         "status": status_word(row), "message": row.get("message", ""), "read": False,
         "ms_step": cbrun.num(row.get("mean_ms_per_step")), "audit_ms_step": cbrun.num(row.get("audit_ms_per_step")),
         "steps": cbrun.num(row.get("steps"))}
    path = os.path.join(folder, c["file"]) if c["file"] else ""
    if c["status"] not in ("n/a", "missing", "error") and path and os.path.isfile(path):
        s = read_symptoms(np, path, allow_unfinished=c["status"] == "running")
        if s is not None:
            c.update(s)
            c["read"] = True
    elif c["status"] in ("ok", "diverged"):
        c["status"] = "missing"   # the index says it ran, but the file is gone
    c["promise"] = promise_of(c)
    c["severity"] = severity(c)
    c["worst"] = worst_symptom(c)
    return c


def missing_cell(solver, scene):
    c = {"solver": solver, "scene": scene, "file": "", "status": "missing", "message": "not in the index",
         "read": False, "ms_step": math.nan, "audit_ms_step": math.nan, "steps": math.nan}
    c["promise"] = None
    c["severity"] = severity(c)
    c["worst"] = worst_symptom(c)
    return c


def build(np, folder, cols, rows):
    """(methods, scenes, cells[(method, scene)]): every method x scene of the index."""
    methods, scenes, cells = [], [], {}
    for r in rows:
        m = cbrun.variant(r, cols)
        if m not in methods:
            methods.append(m)
        if r["scene"] not in scenes:
            scenes.append(r["scene"])
        key = (m, r["scene"])
        if key in cells:
            sys.stderr.write("warning: %s on %s has several runs (repeats or grid values); the first is shown\n"
                             % key)
            continue
        c = cell_of(np, folder, r)
        c["method"] = m
        cells[key] = c
    for m in methods:
        for s in scenes:
            if (m, s) not in cells:
                solver = m.split(" ")[0]
                cells[(m, s)] = dict(missing_cell(solver, s), method=m)
    return methods, scenes, cells


def promise_summary(method, scenes, cells):
    """'kept (n of n)', 'broken on: a, b', or 'no promise recorded'; with the cells not judged."""
    solver = method.split(" ")[0]
    if solver not in PROMISES:
        return "no promise recorded"
    verdicts = [(s, cells[(method, s)]["promise"]) for s in scenes]
    broken = [s for s, v in verdicts if v is False]
    judged = sum(1 for _, v in verdicts if v is not None)
    unknown = len(verdicts) - judged
    if not judged:
        return "not judged (%d cell%s)" % (unknown, "" if unknown == 1 else "s")
    text = ("broken on: %s" % ", ".join(short_scene(s) for s in broken)) if broken else \
        "kept (%d of %d)" % (judged, judged)
    if unknown:
        text += "; %d not judged" % unknown
    return text


def promise_lines(text, per_line):
    """The promise summary as lines: "broken on:" then `per_line` scenes a line, then the rest."""
    out = []
    for x in text.split("; "):
        if x.startswith("broken on: "):
            names = x[len("broken on: "):].split(", ")
            out.append("broken on:")
            out += [", ".join(names[k:k + per_line]) for k in range(0, len(names), per_line)]
        else:
            out.append(x)
    return out


def short_scene(s):
    return s[len("gauntlet_"):] if s.startswith("gauntlet_") else s


def cell_text(c):
    """(first line, second line) of a cell: the status (a diverged run with its cause: the
    health rule's energy or strain, or a non-finite state), then the worst symptom when it
    is not that, and the solver's ms/step."""
    st = c["status"]
    first = "diverged (%s)" % cbrun.diverged_cause(c["message"]) if st == "diverged" else st
    rest = [] if c["worst"] in (first, st, "timed out") else [c["worst"]]
    if c.get("read") and not math.isnan(c["ms_step"]):
        rest.append("%s ms/step" % cbrun.fmt(c["ms_step"], 3))
    return first, "; ".join(rest)


# ---------------------------------------------------------------- the outputs

def md_escape(s):
    return s.replace("|", "\\|")


def tex_escape(s):
    out = []
    for ch in s:
        out.append({"&": "\\&", "%": "\\%", "$": "\\$", "#": "\\#", "_": "\\_", "{": "\\{", "}": "\\}",
                    "~": "\\textasciitilde{}", "^": "\\textasciicircum{}", "\\": "\\textbackslash{}",
                    ">": "\\textgreater{}", "<": "\\textless{}"}.get(ch, ch))
    return "".join(out)


def write_tables(folder, methods, scenes, cells):
    """gauntlet_table.csv/.md/.tex: rows methods, columns scenes, then the promise."""
    import csv
    head = ["method"] + [short_scene(s) for s in scenes] + ["promise kept"]
    paths = [os.path.join(folder, "gauntlet_table." + e) for e in ("csv", "md", "tex")]
    with open(paths[0], "w", newline="") as fh:
        w = csv.writer(fh)
        w.writerow(head)
        for m in methods:
            w.writerow([m] + ["%s: %s: %s" % (cells[(m, s)]["severity"], *cell_text(cells[(m, s)])) for s in scenes] +
                       [promise_summary(m, scenes, cells)])
    md = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for m in methods:
        row = [m]
        for s in scenes:
            c = cells[(m, s)]
            a, b = cell_text(c)
            row.append(md_escape("**%s** %s%s" % (c["severity"], a, (": " + b) if b else "")))
        row.append(md_escape(promise_summary(m, scenes, cells)))
        md.append("| " + " | ".join(row) + " |")
    md += ["", "Severity: green promise kept and clean; yellow symptoms within tolerance (depth <= thickness, "
           "energy rise > %g E_ref, strain > %g, or no audit); orange only edges or triangles through a collider between "
           "their vertices (a triangle cutting a collider more curved or thinner than it), depth <= thickness; red a self "
           "or vertex crossing in a step, an intersecting pair at the end, depth > thickness or diverged; n/a refused (reason below); unfinished timed out or interrupted; "
           "missing never run." % (ENERGY_TOL, STRAIN_TOL), ""]
    for m in methods:
        for s in scenes:
            c = cells[(m, s)]
            if c["status"] in ("n/a", "error", "timeout", "interrupted") and c["message"]:
                md.append("- %s on %s (%s): %s" % (m, short_scene(s), c["status"], md_escape(c["message"])))
    md.append("")
    md.append("Promises (analysis/figures/gauntlet.py, PROMISES):")
    for solver in sorted({m.split(" ")[0] for m in methods}):
        if solver in PROMISES:
            md.append("- %s: %s (%s)" % (solver, PROMISES[solver][0], PROMISES[solver][1]))
    with open(paths[1], "w") as fh:
        fh.write("\n".join(md) + "\n")
    tex = ["% clothbench gauntlet scoreboard (analysis/figures/gauntlet.py); \\input it inside a table;",
           "% needs \\usepackage{booktabs} and \\usepackage[table]{xcolor}",
           "\\begin{tabular}{l%sl}" % ("c" * len(scenes)), "\\toprule",
           " & ".join(tex_escape(h) for h in head) + " \\\\", "\\midrule"]

    def lines(parts, align="c"):
        return "\\begin{tabular}[c]{@{}%s@{}}%s\\end{tabular}" % (align, " \\\\ ".join(
            tex_escape(x) for x in parts if x) or "~")
    for m in methods:
        row = [tex_escape(m)]
        for s in scenes:
            c = cells[(m, s)]
            a, b = cell_text(c)
            parts = []   # narrow columns: a parenthesis on a line of its own
            for x in [a] + b.split("; "):
                parts += x.replace(" (", "\n(").split("\n")
            row.append("\\cellcolor{%s}%s" % (TEX_COLOURS[c["severity"]], lines(parts)))
        row.append(lines(promise_lines(promise_summary(m, scenes, cells), 2), "l"))
        tex.append(" & ".join(row) + " \\\\")
    tex += ["\\bottomrule", "\\end{tabular}", ""]
    with open(paths[2], "w") as fh:
        fh.write("\n".join(tex))
    return paths, "\n".join(md)


def draw(folder, methods, scenes, cells):
    plt = cbrun.use_agg()
    from matplotlib.patches import Patch, Rectangle
    nm, ns = len(methods), len(scenes)
    fig, ax = plt.subplots(figsize=(2.0 + 1.55 * ns + 2.6, 1.2 + 0.62 * nm))
    for i, m in enumerate(methods):
        for j, s in enumerate(scenes):
            c = cells[(m, s)]
            sev = c["severity"]
            hatch = "//" if c["status"] in ("timeout", "interrupted", "running", "missing", "error") else None
            ax.add_patch(Rectangle((j, i), 1, 1, facecolor=COLOURS[sev], edgecolor="0.4", lw=0.6, hatch=hatch))
            a, b = cell_text(c)
            ax.text(j + 0.5, i + 0.32, a, ha="center", va="center", fontsize=7, weight="bold")
            ax.text(j + 0.5, i + 0.68, b.replace("; ", "\n"), ha="center", va="center", fontsize=5.5)
        ax.text(ns + 0.08, i + 0.5, "\n".join(promise_lines(promise_summary(m, scenes, cells), 3)), ha="left",
                va="center", fontsize=6.5)
    ax.set_xlim(0, ns + 1.7)
    ax.set_ylim(nm, 0)
    ax.set_xticks([j + 0.5 for j in range(ns)] + [ns + 0.85])
    ax.set_xticklabels([short_scene(s) for s in scenes] + ["promise kept"], rotation=20, ha="right")
    ax.set_yticks([i + 0.5 for i in range(nm)])
    ax.set_yticklabels(methods)
    ax.grid(False)
    for side in ("top", "right", "left", "bottom"):
        ax.spines[side].set_visible(False)
    ax.tick_params(length=0)
    ax.legend(handles=[Patch(facecolor=COLOURS[k], edgecolor="0.4", label=k,
                             hatch="//" if k in ("unfinished", "missing") else None) for k in SEVERITIES],
              loc="upper center", bbox_to_anchor=(0.5, -0.12), ncol=len(SEVERITIES), fontsize=7)
    ax.set_title("Contact gauntlet: status and worst symptom per method and scene (audit on, default health rule)")
    series = sorted({n for c in cells.values() if c.get("read") for n in c["crossings"]},
                    key=lambda n: (n not in AUDIT_KNOWN, n))
    for n in AUDIT_KNOWN:
        if n not in series:
            series.append(n)
    header = ["method", "solver", "scene", "severity", "status", "worst symptom", "promise kept"] + \
        ["%s [count]" % n for n in series] + \
        ["crossings total [count]", "intersecting pairs at end [count]", "collider depth [m]",
         "vertex depth [m]", "thickness [m]", "energy rise E-E0-W_ext [J]", "energy rise [E_ref]", "E_ref [J]",
         "peak strain [-]", "solver ms/step [ms]", "audit ms/step [ms]", "steps [count]", "t_end [s]", "file",
         "message"]
    table = []
    for m in methods:
        for s in scenes:
            c = cells[(m, s)]
            g = c.get

            def v(k):
                return float(g(k)) if c.get("read") and g(k) is not None else math.nan
            counts = []
            for n in series:
                counts.append(c["crossings"][n] if c.get("read") and n in c["crossings"] else
                              ("absent" if c.get("read") else ""))
            table.append([m, c["solver"], s, c["severity"], c["status"], c["worst"],
                          {True: "yes", False: "no", None: "not judged"}[c["promise"]]] + counts +
                         [v("crossings_total"), v("pairs_end"), v("depth"), v("vertex_depth"), v("thickness"),
                          v("energy_rise"), v("energy_rise_rel"), v("energy_ref"), v("strain"), c["ms_step"],
                          c["audit_ms_step"], c["steps"], v("t_end"), c["file"], c["message"]])
    return cbrun.save(fig, os.path.join(folder, "gauntlet.png"), header, table)


def worst_cell(scene, methods, cells):
    """The worst cell of a scene that has a run file with frames: highest severity, then
    most crossings, pairs, depth, energy."""
    def key(c):
        def n(x):
            return -1.0 if x is None or (isinstance(x, float) and math.isnan(x)) else x
        return (RANK[c["severity"]], n(c.get("crossings_total")), n(c.get("pairs_end")), n(c.get("depth")),
                n(c.get("energy_rise_rel")))
    cands = [cells[(m, scene)] for m in methods if cells[(m, scene)].get("read") and cells[(m, scene)]["frames"] > 0]
    return max(cands, key=key) if cands else None


def render_worst(folder, methods, scenes, cells):
    """The end frame of each scene's worst cell (analysis/render.py); skipped with a
    message when the VTK module render.py needs is missing."""
    have = subprocess.run([sys.executable, "-c", "import vtk"], stdout=subprocess.DEVNULL,
                          stderr=subprocess.DEVNULL).returncode == 0
    if not have:
        print("render: skipped: no VTK for %s (render.py needs the vtk module of python3-paraview, the one "
              "pvpython uses: apt install python3-paraview)" % sys.executable)
        return []
    render = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "render.py")
    done = []
    for s in scenes:
        c = worst_cell(s, methods, cells)
        if c is None:
            print("render: %s: no run file with frames" % s)
            continue
        out = os.path.join(folder, "gauntlet_worst_%s.png" % short_scene(s))
        args = [sys.executable, render, os.path.join(folder, c["file"]), "-o", out]
        if c["status"] == "running":
            args.append("--allow-unfinished")
        rc = subprocess.run(args).returncode
        if rc == 0:
            print("render: %s: %s (%s, %s)" % (s, out, c["method"], c["worst"]))
            done.append(out)
        else:
            print("render: %s: render.py failed (exit %d) on %s" % (s, rc, c["file"]))
    return done


def main():
    args = cbrun.figure_args("gauntlet", __doc__, extra=lambda ap: (
        ap.add_argument("--render", action="store_true",
                        help="also draw the end frame of each scene's worst cell (analysis/render.py)"),
        ap.add_argument("-q", "--quiet", action="store_true", help="do not print the Markdown table")))
    try:
        cols, rows = cbrun.read_index(args.folder)
    except cbrun.RunError as e:
        cbrun.fail(str(e))
    if not rows:
        cbrun.fail("%s/index.csv holds no runs" % args.folder)
    import numpy as np
    methods, scenes, cells = build(np, args.folder, cols, rows)
    paths, md = write_tables(args.folder, methods, scenes, cells)
    if not args.quiet:
        print(md)
    out = draw(args.folder, methods, scenes, cells)
    print("wrote " + ", ".join(list(out) + paths))
    if args.render:
        render_worst(args.folder, methods, scenes, cells)


if __name__ == "__main__":
    main()
