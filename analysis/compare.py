#!/usr/bin/env python3
"""analysis/compare.py — the comparison table of a sweep, and metrics against swept parameters.

    compare.py SWEEP_DIR [--x KEY] [--y METRIC ...] [--reference REF.h5] [--allow-missing] [--quiet]

Reads SWEEP_DIR/index.csv (written by `clothbench sweep`; its numbers are those of
`clothbench info`) and writes, next to it:
  table.csv   one row per run: run, solver, scene, the swept parameters, status and
              energy_drift (J), energy_peak (J), max_contact_depth_corrected (m: the depth
              the solver's contact stage moved vertices out of, hidden from the end state),
              contact_work_added (J: energy that stage added), max_penetration_depth (m:
              vertices, edges and triangles), crossings (the audit's, in steps),
              max_self_intersections, max_strain, mean_ms_per_step, at full precision; the
              run with the largest hidden depth is marked in bold in table.md / table.tex
  table.md    the same as a Markdown table (4 significant digits; printed on stdout)
  table.tex   a LaTeX booktabs tabular (needs \\usepackage{booktabs}; numbers right-aligned, a
              unit under every numeric header; wide: \\small on a landscape page fits the
              default comparison)
  plots       for every swept parameter with two or more values (or --x KEY): each metric
              (or --y METRIC) against it, one line per solver (mean over repeats, min-max
              bars): <metric>_vs_<key>.png/.pdf; without swept parameters one bar chart
              per metric over the runs: summary.png/.pdf
With --reference REF.h5 (a trajectory of `clothbench reference` on the sweep's scene) three
columns follow: error_vs_reference (m: the mass-weighted RMS distance of the run's last
frame to the reference at the same time, computed here from the two files' frames, so the
sweep need not have logged position_error), energy_error (J: the run's total energy minus
the reference's at that time) and order (the least-squares slope of log error against log
dt over the ok runs of the same solver, scene and other swept values: a run's method's
order of accuracy; NaN without two or more dt values).
Per-solver grid keys of one parameter (solvers.pbd.iterations and solvers.xpbd.iterations)
are one column and one axis, "iterations", in table.md, table.tex and the plots; --x takes
such a bare name too (a run's value is that of its own solver's key).
The column model is the model each run solved (the run file's attribute: stretch, bending and
contact terms); when the runs of one scene solved different models a warning goes to stderr
and into the table's note (their differences are then partly the models').
A pending, running or missing run is an error (--allow-missing leaves it out). Runs made by
different commits (index column git_commit) are an error unless --mixed-builds; the
table's note (under table.md, a comment in table.tex) names the commit(s).
"""
import argparse
import csv
import math
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import cbrun  # noqa: E402

# (index column, Markdown header, LaTeX header: two lines and the unit)
TABLE = [("energy_drift", "energy drift (J)", ("energy", "drift", "J")),
         ("energy_peak", "peak energy (J)", ("peak", "energy", "J")),
         ("max_contact_depth_corrected", "hidden depth (m)", ("hidden", "depth", "m")),
         ("contact_work_added", "contact work (J)", ("contact", "work", "J")),
         ("max_penetration_depth", "edge/face pen. (m)", ("edge/face", "pen.", "m")),
         ("crossings", "crossings in steps (count)", ("crossings", "in steps", "count")),
         ("max_self_intersections", "self intersections (count)", ("self", "int.", "count")),
         ("max_strain", "max strain (m/m)", ("max", "strain", "m/m")),
         ("mean_ms_per_step", "time / step (ms)", ("time", "per step", "ms"))]
# Units of the index's metric columns (for axis labels and CSV headers).
METRIC_UNITS = {m: h[2] for m, _, h in TABLE}
METRIC_UNITS.update({"energy_drift_rel": "-", "momentum_drift": "-", "min_separation": "m", "t_end": "s",
                     "max_vertex_penetration_depth": "m", "contact_work": "J", "audit_ms_per_step": "ms"})
# Units of swept parameters (scene keys, and solver keys by their last part); a solver
# whose key means something else has its own entry.
PARAM_UNITS = {"dt": "s", "duration": "s", "frame_rate": "1/s", "log_every": "count", "bound": "m",
               "cloth.grid.nx": "count", "cloth.grid.ny": "count", "cloth.density": "kg/m^2",
               "cloth.line_density": "kg/m", "cloth.stretch": "N/m", "cloth.bend": "N m", "cloth.thickness": "m",
               "cloth.initial_stretch": "1", "iterations": "count", "max_iterations": "count", "substeps": "count",
               "lambda_iterations": "count", "correction_iterations": "count", "self_iterations": "count",
               "tolerance": "1", "stretch_stiffness": "1", "bend_stiffness": "1", "volume_stiffness": "1",
               "contact_offset": "m", "self_thickness": "m", "self_margin": "m", "self_distance": "m",
               "contact_band": "m", "safety": "1", "penalty_safety": "1", "restitution": "1", "friction": "1",
               "eta": "m", "refactor_rate": "1", "correction_stiffness": "1", "velocity_slack": "m/s",
               "bend_max_step": "rad", "contact_stiffness": "N/m", "repeat": "count"}
SOLVER_PARAM_UNITS = {("explicit", "damping"): "1/s", ("pbd", "damping"): "1", ("xpbd", "damping"): "1",
                      ("fms", "damping"): "1"}
# the columns --reference adds
REF_TABLE = [("error_vs_reference", "error vs ref. (m)", ("error vs", "reference", "m")),
             ("energy_error", "energy error (J)", ("energy", "error", "J")),
             ("order", "order in dt (1)", ("order", "in dt", "1"))]
METRIC_UNITS.update({m: h[2] for m, _, h in REF_TABLE})
ALL_METRICS = [m for m, _, _ in REF_TABLE] + cbrun.METRICS + [m for m, _, _ in TABLE if m not in cbrun.METRICS]
HIDDEN = "max_contact_depth_corrected"   # the column whose largest value stands out


def derive(rows):
    """Columns computed from the index: crossings = self + collider crossings of the audit,
    the colliders' vertices, edges and triangles (NaN when not audited; an older index
    without the edge and triangle columns: vertices only); missing columns of an older
    index are NaN."""
    for r in rows:
        s, c = cbrun.num(r.get("self_crossings")), cbrun.num(r.get("collider_crossings"))
        for beyond in ("collider_edge_crossings", "collider_face_crossings"):
            b = cbrun.num(r.get(beyond))
            c += 0.0 if math.isnan(b) else b
        r["crossings"] = "" if math.isnan(s) or math.isnan(c) else repr(s + c)
        for m, _, _ in TABLE:
            r.setdefault(m, "")
        r.setdefault("self_collision", "unknown")
        r["model"] = cbrun.model_of(r)


def hidden_leader(rows):
    """Index of the run with the largest hidden depth (> 0), or None."""
    best, at = 0.0, None
    for i, r in enumerate(rows):
        v = cbrun.num(r[HIDDEN])
        if not math.isnan(v) and v > best:
            best, at = v, i
    return at


def solver_key(k):
    """(solver, parameter) of a grid key solvers.<solver>.<parameter>, else None."""
    parts = k.split(".", 2)
    return (parts[1], parts[2]) if len(parts) == 3 and parts[0] == "solvers" else None


def param_unit(k):
    """Unit of a grid key or of a merged per-solver parameter name; None when unknown."""
    sk = solver_key(k)
    if sk:
        return SOLVER_PARAM_UNITS.get(sk, PARAM_UNITS.get(sk[1]))
    return PARAM_UNITS.get(k)


def param_columns(keys, rows):
    """The parameter columns of table.md / table.tex and the default plot axes: the grid
    keys, except that two or more per-solver keys of one parameter with one unit
    (solvers.pbd.iterations, solvers.xpbd.iterations) become one column named by the
    parameter, each run showing its own solver's value (set in rows here)."""
    groups = {}
    for k in keys:
        sk = solver_key(k)
        groups.setdefault(sk[1] if sk else k, []).append(k)
    cols = []
    for name, ks in groups.items():
        sks = [solver_key(k) for k in ks]
        if (len(ks) >= 2 and all(sks) and len({s for s, _ in sks}) == len(ks) and name not in keys and
                len({param_unit(k) for k in ks}) == 1):
            bare_column(name, rows)
            cols.append(name)
        else:
            cols.extend(ks)
    return cols


def bare_column(name, rows):
    """rows[name] = the run's value of solvers.<its solver>.<name> ('' if not swept)."""
    for r in rows:
        r[name] = r.get("solvers.%s.%s" % (r["solver"], name), "")


def param_labels(cols):
    """Short header text per parameter column: its last part when that is unique, else the key."""
    short = [c.split(".")[-1] for c in cols]
    return [s if short.count(s) == 1 else c for s, c in zip(short, cols)]


def short_model(model):
    """The model in a narrow column (table.tex): its kinds only, "springs / shells / penalty"
    for "stretch springs / bending shells / contact penalty"."""
    words = {"stretch ": "", "bending ": "", "contact ": ""}
    parts = []
    for part in model.split(" / "):
        for w in words:
            if part.startswith(w):
                part = part[len(w):]
        parts.append(part)
    return " / ".join(parts)


def tex_model(model):
    """The model's kinds stacked in one narrow cell of table.tex (one line per term)."""
    return "\\begin{tabular}[c]{@{}l@{}}%s\\end{tabular}" % " \\\\ ".join(
        tex_escape(p) for p in short_model(model).split(" / "))


def tex_escape(s):
    rep = {"\\": "\\textbackslash{}", "_": "\\_", "&": "\\&", "%": "\\%", "$": "\\$", "#": "\\#",
           "{": "\\{", "}": "\\}", "~": "\\textasciitilde{}", "^": "\\textasciicircum{}"}
    return "".join(rep.get(ch, ch) for ch in s)


def tex_num(v):
    t = cbrun.fmt(v)
    if t == "-":
        return "--"
    if "inf" in t:
        return "$%s\\infty$" % ("-" if t[0] == "-" else "")
    if "e" in t:
        m, e = t.split("e")
        return "$%s \\times 10^{%d}$" % (m, int(e))
    return "$%s$" % t  # math mode: a minus sign, not a hyphen


def tex_unit(u):
    """A unit for a LaTeX header: '(m)', '(kg/m$^2$)'; dimensionless '(1)'."""
    return "(%s)" % tex_escape(u if u else "scene units").replace("\\textasciicircum{}2", "$^2$")


def build_note(rows, mixed_ok):
    """One sentence saying which commit made the runs (index column git_commit). Runs of
    different commits are refused (CompareError) unless mixed_ok: a table must not mix
    the numbers of two versions of the code silently. A run without the column (older
    run files) counts as 'not recorded'."""
    counts = {}
    for r in rows:
        c = r.get("git_commit", "") or "not recorded"
        counts[c] = counts.get(c, 0) + 1
    if len(counts) == 1:
        (c,) = counts
        if c == "not recorded":
            return "The run files do not record the commit that made them."
        dirty = " (a tree with uncommitted changes)" if c.endswith("-dirty") else ""
        return "All runs made by clothbench commit %s%s." % (c[:12] + ("-dirty" if dirty else ""), dirty)
    listing = "; ".join("%s: %d run%s" % (c[:12] + ("-dirty" if c.endswith("-dirty") else ""), n,
                                         "" if n == 1 else "s") for c, n in sorted(counts.items()))
    if not mixed_ok:
        raise CompareError("the runs were made by %d different builds (%s); rerun them with one build "
                           "(clothbench sweep --check shows what changed) or pass --mixed-builds"
                           % (len(counts), listing))
    return "Runs made by %d different builds of clothbench (%s)." % (len(counts), listing)


class CompareError(Exception):
    pass


def reference_columns(folder, ref_path, keys, rows):
    """error_vs_reference, energy_error and order of every row against the reference
    trajectory ref_path (see the module's docstring); raises CompareError for a reference
    that is not one, or of another mesh."""
    import numpy as np
    try:
        ref = cbrun.open_run(ref_path)
    except cbrun.RunError as exc:
        raise CompareError("--reference %s" % exc)
    if "frames" not in ref or "positions" not in ref["frames"]:
        raise CompareError("--reference %s: no /frames (write it with clothbench reference)" % ref_path)
    rt, rx = ref["frames/time"][()], ref["frames/positions"]
    st, se = cbrun.series(ref, "time"), cbrun.series(ref, "total_energy")
    spacing = (rt[-1] - rt[0]) / (len(rt) - 1) if len(rt) > 1 else 1.0
    tol = 1e-9 * (spacing if spacing > 0 else 1.0)
    for r in rows:
        r["error_vs_reference"] = r["energy_error"] = r["order"] = ""
        if r["status"] not in ("ok", "diverged", "interrupted"):
            continue
        f = cbrun.open_run(os.path.join(folder, r["file"]))
        try:
            if "frames" not in f:
                continue
            t, x = f["frames/time"][()], f["frames/positions"]
            if x.shape[1] != rx.shape[1]:
                raise CompareError("--reference %s has %d vertices, run %s %d: not the same scene"
                                   % (ref_path, rx.shape[1], r["file"], x.shape[1]))
            m = f["mesh/masses"][()]
            for k in range(len(t) - 1, -1, -1):   # the last frame at a reference frame time
                j = int(np.argmin(np.abs(rt - t[k])))
                if abs(rt[j] - t[k]) <= tol and np.all(np.isfinite(x[k])):
                    d = x[k] - rx[j]
                    r["error_vs_reference"] = repr(float(np.sqrt(np.sum(m * np.sum(d * d, axis=1)) / np.sum(m))))
                    fe, ft = cbrun.series(f, "total_energy"), cbrun.series(f, "time")
                    a, b = np.abs(ft - t[k]) <= tol, np.abs(st - t[k]) <= tol
                    if a.any() and b.any():
                        r["energy_error"] = repr(float(fe[a][0] - se[b][0]))
                    break
        finally:
            f.close()
    ref.close()
    if "dt" not in keys:
        return
    others = [k for k in keys if k != "dt"]
    groups = {}
    for r in rows:
        groups.setdefault((r["solver"], r["scene"]) + tuple(r[k] for k in others), []).append(r)
    for g in groups.values():
        pts = [(cbrun.num(r["dt"]), cbrun.num(r["error_vs_reference"])) for r in g if r["status"] == "ok"]
        pts = [(d, e) for d, e in pts if d > 0 and e > 0 and math.isfinite(e)]
        if len({d for d, _ in pts}) >= 2:
            order = float(np.polyfit(np.log([p[0] for p in pts]), np.log([p[1] for p in pts]), 1)[0])
            for r in g:
                r["order"] = repr(order)


def write_tables(folder, keys, rows, quiet, note="", table=None):
    TABLE = table or globals()["TABLE"]  # noqa: N806 (the columns of this table)
    head = ["run", "solver", "scene"] + keys + ["status", "self_collision", "model"] + [m for m, _, _ in TABLE]
    with open(os.path.join(folder, "table.csv"), "w", newline="") as fh:
        w = csv.writer(fh, lineterminator="\n")
        w.writerow(head)
        for r in rows:
            w.writerow([cbrun.stem(r["file"]), r["solver"], r["scene"]] + [r[k] for k in keys] +
                       [r["status"], r["self_collision"], r["model"]] +
                       [repr(cbrun.num(r[m])) if r[m] != "" else "nan" for m, _, _ in TABLE])
    pcols = param_columns(keys, rows)
    labels = param_labels(pcols)
    units = [param_unit(c) for c in pcols]
    md_head = ["run", "solver"] + ["%s (%s)" % (lab, u or "scene units") for lab, u in zip(labels, units)] + \
        ["status", "self coll.", "model"] + [h for _, h, _ in TABLE]
    lines = ["| " + " | ".join(md_head) + " |", "|" + "|".join(["---"] * 2 + ["---:"] * len(pcols) + ["---"] * 3 +
                                                                ["---:"] * len(TABLE)) + "|"]
    lead = hidden_leader(rows)
    for i, r in enumerate(rows):
        cells = [cbrun.stem(r["file"]), r["solver"]] + [r[k] for k in pcols] + [r["status"], r["self_collision"], r["model"]] + \
                [("**%s**" if i == lead and m == HIDDEN else "%s") % cbrun.fmt(r[m]) for m, _, _ in TABLE]
        lines.append("| " + " | ".join(c.replace("|", "\\|") for c in cells) + " |")
    md = "\n".join(lines) + "\n" + ("\n" + note + "\n" if note else "")
    with open(os.path.join(folder, "table.md"), "w") as fh:
        fh.write(md)
    # three header rows (two lines of the name, then the unit of every numeric column)
    head = [("solver", "", ""), ("scene", "", "")] + [(lab, "", tex_unit(u)) for lab, u in zip(labels, units)] + \
        [("status", "", ""), ("self", "coll.", ""), ("model", "", "")] + [(a, b, tex_unit(u)) for _, _, (a, b, u) in TABLE]
    cols = "ll" + "r" * len(pcols) + "lll" + "r" * len(TABLE)
    tex = ["% clothbench comparison table (compare.py): \\input it inside a table; needs \\usepackage{booktabs};",
           "% wide: \\small on a landscape page (geometry) fits the default comparison",
           "% " + note,
           "\\begin{tabular}{%s}" % cols, "\\toprule"]
    for line in range(3):
        tex.append(" & ".join(tex_escape(h[line]) if line < 2 else h[line] for h in head) + " \\\\")
    tex.append("\\midrule")

    def param_cell(v):
        return tex_num(v) if not math.isnan(cbrun.num(v)) else tex_escape(v)

    for i, r in enumerate(rows):
        tex.append(" & ".join([tex_escape(r["solver"]), tex_escape(r["scene"])] + [param_cell(r[k]) for k in pcols] +
                              [tex_escape(r["status"]), tex_escape(r["self_collision"]), tex_model(r["model"])] +
                              [("{\\boldmath\\bfseries %s}" if i == lead and m == HIDDEN else "%s") % tex_num(r[m])
                               for m, _, _ in TABLE]) + " \\\\")
    tex += ["\\bottomrule", "\\end{tabular}", ""]
    with open(os.path.join(folder, "table.tex"), "w") as fh:
        fh.write("\n".join(tex))
    if not quiet:
        sys.stdout.write(md)


def plot_against(plt, folder, key, metric, rows):
    """metric against key, one line per solver; returns the PNG path or None."""
    sub = [r for r in rows if r[key] != ""]
    values = sorted({r[key] for r in sub}, key=lambda v: (math.isnan(cbrun.num(v)), cbrun.num(v), v))
    if len(values) < 2:
        return None
    numeric = all(not math.isnan(cbrun.num(v)) for v in values)
    xpos = {v: (cbrun.num(v) if numeric else i) for i, v in enumerate(values)}
    fig, ax = plt.subplots(figsize=(6, 4))
    table = []
    for solver in sorted({r["solver"] for r in sub}):
        xs, ys, lo, hi = [], [], [], []
        for v in values:
            ms = [cbrun.num(r[metric]) for r in sub if r["solver"] == solver and r[key] == v]
            ms = [m for m in ms if not math.isnan(m)]
            if not ms:
                continue
            xs.append(xpos[v])
            mean = sum(ms) / len(ms)
            ys.append(mean)
            lo.append(mean - min(ms))
            hi.append(max(ms) - mean)
            table.append([solver, v, mean, min(ms), max(ms), len(ms)])
        if xs:
            ax.errorbar(xs, ys, yerr=[lo, hi] if any(lo) or any(hi) else None, marker="o", capsize=3, label=solver)
    if not numeric:
        ax.set_xticks(range(len(values)))
        ax.set_xticklabels(values, rotation=30, ha="right")
    elif min(xpos.values()) > 0 and max(xpos.values()) / min(xpos.values()) > 50:
        ax.set_xscale("log")
    xunit = param_unit(key) or "-"
    yunit = METRIC_UNITS.get(metric, "-")
    ax.set_xlabel("%s [%s]" % (key, xunit))
    ax.set_ylabel("%s [%s]" % (metric, yunit))
    if not cbrun.empty_panel(ax, [t[2] for t in table], metric):
        ax.legend(loc="best")
    safe = "".join(ch if ch.isalnum() or ch in "._-" else "_" for ch in key)
    png = cbrun.save(fig, os.path.join(folder, "%s_vs_%s.png" % (metric, safe)),
                     ["solver", "%s [%s]" % (key, xunit), "%s_mean [%s]" % (metric, yunit),
                      "%s_min [%s]" % (metric, yunit), "%s_max [%s]" % (metric, yunit), "runs"], table)[0]
    plt.close(fig)
    return png


def plot_summary(plt, folder, rows):
    metrics = [m for m, _, _ in TABLE]
    lead = hidden_leader(rows)
    fig, axes = plt.subplots(3, 3, figsize=(13, 10))
    names = ["%s\n%s" % (r["solver"], r["scene"]) if len({x["scene"] for x in rows}) > 1 else r["solver"]
             for r in rows]
    if len(set(names)) < len(names):
        names = [cbrun.stem(r["file"]) for r in rows]
    for ax, (m, h, _) in zip(axes.ravel(), TABLE):
        vals = [cbrun.num(r[m]) for r in rows]
        bars = ax.bar(range(len(rows)), [0 if math.isnan(v) else v for v in vals],
                      color=["C0" if r["status"] == "ok" else "C3" for r in rows])
        for i, v in enumerate(vals):  # a metric the run does not have: say so, not 0
            if math.isnan(v):
                ax.text(i, 0, "n/a", ha="center", va="bottom", fontsize=7, color="0.4")
        if m == HIDDEN and lead is not None:
            bars[lead].set_color("C1")
            bars[lead].set_edgecolor("k")
            ax.annotate("largest hidden\npenetration", (lead, vals[lead]), ha="center", va="top", fontsize=8)
        ax.set_xticks(range(len(rows)))
        ax.set_xticklabels(names, rotation=30, ha="right", fontsize=7)
        ax.set_title(h.replace(" (", " [").replace(")", "]"))
        ax.grid(alpha=0.3, axis="y")
        ax.grid(False, axis="x")
        if all(v == 0 or math.isnan(v) for v in vals):
            ax.text(0.5, 0.5, "all zero" if any(v == 0 for v in vals) else "no data", transform=ax.transAxes,
                    ha="center", va="center", color="0.3")
            ax.set_yticks([])
    fig.suptitle("%s (red: run did not end ok; orange: the largest depth hidden by a contact stage)"
                 % os.path.basename(os.path.abspath(folder)))
    png = cbrun.save(fig, os.path.join(folder, "summary.png"),
                     ["run", "solver", "scene", "status"] + ["%s [%s]" % (m, METRIC_UNITS.get(m, "-")) for m in metrics],
                     [[r["run"], r["solver"], r["scene"], r["status"]] + [cbrun.num(r[m]) for m in metrics]
                      for r in rows])[0]
    plt.close(fig)
    del metrics
    return png


def main(argv=None):
    ap = argparse.ArgumentParser(description="The comparison table of a sweep (CSV, Markdown, LaTeX) and plots of "
                                             "metrics against swept parameters, one line per solver.",
                                 epilog="Outputs go into SWEEP_DIR: table.csv, table.md, table.tex, "
                                        "<metric>_vs_<key>.png/.pdf or summary.png/.pdf.")
    ap.add_argument("folder", metavar="SWEEP_DIR", help="output folder of clothbench sweep (holds index.csv)")
    ap.add_argument("--x", metavar="KEY", help="plot against this swept parameter only (a grid key of the index)")
    ap.add_argument("--y", metavar="METRIC", action="append",
                    help="plot only this metric (repeatable); one of: " + ", ".join(ALL_METRICS))
    ap.add_argument("--reference", metavar="REF.h5",
                    help="add error_vs_reference, energy_error and order columns against this reference "
                         "trajectory (clothbench reference)")
    ap.add_argument("--allow-missing", action="store_true", help="leave out pending/running/missing runs")
    ap.add_argument("--no-plots", action="store_true", help="tables only")
    ap.add_argument("-q", "--quiet", action="store_true", help="do not print the Markdown table")
    ap.add_argument("--mixed-builds", action="store_true",
                    help="allow runs made by different commits in one table (the note under the table lists them)")
    a = ap.parse_args(argv)
    try:
        cols, rows = cbrun.read_index(a.folder)
        rows = cbrun.check_rows(a.folder, rows, a.allow_missing)
    except cbrun.RunError as exc:
        cbrun.fail(str(exc))
    if not rows:
        cbrun.fail("%s: no finished runs in the index" % a.folder)
    keys = cbrun.grid_keys(cols)
    derive(rows)
    try:
        note = build_note(rows, a.mixed_builds)
    except CompareError as exc:
        cbrun.fail("%s: %s" % (a.folder, exc))
    for scene in sorted({r["scene"] for r in rows}):
        w = cbrun.warn_models([r for r in rows if r["scene"] == scene], what="%s, scene %s" % (a.folder, scene))
        if w:
            note += " Scene %s: %s." % (scene, w)
    axes = param_columns(keys, rows)
    if a.x and a.x not in keys and a.x not in axes:
        if not any(solver_key(k) and solver_key(k)[1] == a.x for k in keys):
            cbrun.fail("--x %s: not a swept parameter of this sweep (grid keys: %s; a bare parameter name takes "
                       "each run's solvers.<its solver>.%s)" % (a.x, ", ".join(keys) or "none", a.x))
        bare_column(a.x, rows)
    for m in a.y or []:
        if m not in ALL_METRICS:
            cbrun.fail("--y %s: unknown metric; one of: %s" % (m, ", ".join(ALL_METRICS)))
    table = TABLE
    if a.reference:
        try:
            reference_columns(a.folder, a.reference, keys, rows)
        except (CompareError, cbrun.RunError) as exc:
            cbrun.fail("%s: %s" % (a.folder, exc))
        table = TABLE + REF_TABLE
        note += " Errors against the reference %s." % a.reference
    else:
        for m in a.y or []:
            if m in [t[0] for t in REF_TABLE]:
                cbrun.fail("--y %s needs --reference" % m)
    write_tables(a.folder, keys, rows, a.quiet, note, table)
    written = [os.path.join(a.folder, n) for n in ("table.csv", "table.md", "table.tex")]
    if not a.no_plots:
        plt = cbrun.use_agg()
        metrics = a.y or [m for m, _, _ in table]
        plot_keys = [a.x] if a.x else [k for k in axes if len({r[k] for r in rows if r[k] != ""}) >= 2]
        for k in plot_keys:
            for m in metrics:
                p = plot_against(plt, a.folder, k, m, rows)
                if p:
                    written.append(p)
        if not plot_keys:
            written.append(plot_summary(plt, a.folder, rows))
    if not a.quiet:
        print("\nwrote " + ", ".join(written))
    return 0


if __name__ == "__main__":
    sys.exit(main())
