"""analysis/cbrun.py — shared helpers for the clothbench analysis scripts.

Reads a sweep's index.csv (the csv module only, so any Python 3 works) and run
files (h5py), with one clear error message for every way a run can be missing or
unfinished, and parses the scene text stored in a run file (PyYAML). Used by plot_runs.py,
compare.py, render.py and analysis/figures/*.py:

    import cbrun
    cols, rows = cbrun.read_index(folder)          # rows: list of dicts (strings)
    f = cbrun.open_run(path)                       # h5py.File, or cbrun.RunError
    t = cbrun.series(f, "time")
"""
import csv
import math
import os
import re
import sys

# Columns of index.csv in order (experiments/sweep.c, README "Sweeps"); grid keys sit between repeat and status.
HEAD = ["run", "file", "scene", "solver", "repeat"]
TAIL = ["status", "message", "steps", "t_end", "energy_drift", "energy_drift_rel", "momentum_drift",
        "max_penetration_depth", "max_self_intersections", "min_separation", "max_strain", "mean_ms_per_step"]
METRICS = TAIL[3:]
FINISHED = ("ok", "diverged", "interrupted", "error")


class RunError(Exception):
    """A run file or index that is missing, unreadable or unfinished."""


def fail(message, code=1):
    """Print 'SCRIPT: error: message' on stderr and exit."""
    sys.stderr.write("%s: error: %s\n" % (os.path.basename(sys.argv[0]), message))
    sys.exit(code)


def need_h5py():
    try:
        import h5py  # noqa: F401
        return h5py
    except ImportError:
        fail("h5py is not available for %s; use Debian's /usr/bin/python3 (apt install python3-h5py)"
             % sys.executable)


def num(text):
    """A number from an index cell: '' and unparsable text are NaN."""
    try:
        return float(text)
    except (TypeError, ValueError):
        return math.nan


def read_index(folder):
    """(columns, rows) of <folder>/index.csv; rows are dicts of strings."""
    path = os.path.join(folder, "index.csv")
    if not os.path.isfile(path):
        raise RunError("%s: no index.csv here (is it a sweep output folder? run `clothbench sweep "
                       "EXPERIMENT` or `clothbench sweep EXPERIMENT --index`)" % folder)
    with open(path, newline="") as fh:
        reader = csv.reader(fh)
        try:
            cols = next(reader)
        except StopIteration:
            raise RunError("%s: empty file" % path)
        if cols[:5] != HEAD or any(c not in cols for c in TAIL):
            raise RunError("%s: not a clothbench index (columns %s)" % (path, ",".join(cols[:6])))
        rows = []
        for line_no, rec in enumerate(reader, start=2):
            if not rec:
                continue
            if len(rec) != len(cols):
                raise RunError("%s:%d: %d fields, expected %d" % (path, line_no, len(rec), len(cols)))
            rows.append(dict(zip(cols, rec)))
    return cols, rows


def grid_keys(cols):
    """The grid key columns of an index (between 'repeat' and 'status')."""
    return cols[cols.index("repeat") + 1:cols.index("status")]


def natural_key(text):
    """Sort key that orders the numbers inside a text by value ("it=2" before "it=10")."""
    return [(0, float(t), "") if re.fullmatch(r"\d+(\.\d+)?", t) else (1, 0.0, t)
            for t in re.split(r"(\d+(?:\.\d+)?)", text) if t]


def variant(row, cols):
    """A run's method as a figure's legend names it: the solver, then the values of the
    grid keys of that solver's own block (solvers.fms.iterations: "fms iterations=10"),
    so one solver swept over its own parameter is one curve per value."""
    extra = []
    for k in grid_keys(cols):
        parts = k.split(".", 2)
        if len(parts) == 3 and parts[0] == "solvers" and parts[1] == row["solver"] and row.get(k, "") != "":
            extra.append("%s=%s" % (parts[2], row[k]))
    return " ".join([row["solver"]] + extra)


def model_of(row):
    """The model a run solved (index column `model`, the run file's attribute of that name;
    "unknown" for runs made before the attribute existed)."""
    return row.get("model", "") or "unknown"


def material(model):
    """The model without its contact part ("stretch springs / bending shells"): what a
    figure without colliders compares."""
    return model.split(" / contact")[0] if model else "unknown"


def model_warning(rows, key=model_of):
    """None when every row solved the same model (key(row)); else one sentence naming each
    model and the methods (variant names, or solvers) that solved it, for a warning on stderr
    and under a figure's table: numbers of different models measure the model as well as
    the method."""
    models = {}
    for r in rows:
        models.setdefault(key(r), set()).add(r.get("variant") or r.get("solver", "?"))
    if len(models) < 2:
        return None
    return "the runs solved %d different models (%s): their differences are partly the models'" % (
        len(models), "; ".join("%s: %s" % (m, ", ".join(sorted(v, key=natural_key)))
                               for m, v in sorted(models.items())))


def warn_models(rows, key=model_of, what=""):
    """model_warning written to stderr as `warning: WHAT...`; returns the sentence or None."""
    w = model_warning(rows, key)
    if w:
        sys.stderr.write("warning: %s%s\n" % (what + ": " if what else "", w))
    return w


def reference_material(path):
    """material() of the model of the reference trajectory at path, None when there is none."""
    if not os.path.exists(path):
        return None
    f = open_run(path)
    m = attr(f, "model") or "unknown"
    f.close()
    return material(m)


def other_model_note(curve_models, ref_model):
    """For a curve whose runs solved the models curve_models (materials): "" when that is the
    reference's (or there is no reference), else " [model: ...]" for its legend (and the
    curve is drawn dashed)."""
    other = sorted(m for m in curve_models if m != ref_model) if ref_model else []
    return " [model: %s]" % "; ".join(other) if other else ""


def check_rows(folder, rows, allow_missing=False):
    """Rows whose runs are finished and whose files exist; raises RunError for a pending,
    running or missing run unless allow_missing (then those rows are left out)."""
    good = []
    for r in rows:
        path = os.path.join(folder, r["file"])
        problem = None
        if r["status"] == "pending":
            problem = "%s: missing run file (status pending: the sweep has not run it yet)" % path
        elif r["status"] == "running":
            problem = ("%s: unfinished run file (status running: still running, or the sweep was killed; "
                       "rerun the sweep to finish it)" % path)
        elif r["status"] in ("ok", "diverged", "interrupted") and not os.path.isfile(path):
            problem = "%s: missing run file (the index says %s)" % (path, r["status"])
        if problem:
            if allow_missing:
                sys.stderr.write("warning: %s; left out\n" % problem)
                continue
            raise RunError(problem)
        good.append(r)
    return good


def figure_args(name, doc, extra=None):
    """Command-line arguments of a figure script: the output folder of the sweep
    experiments/figures/<name>.yaml; extra(parser) may add options."""
    import argparse
    ap = argparse.ArgumentParser(description=doc.split("\n\n")[0],
                                 epilog="Example: %(prog)s runs/figures/" + name)
    ap.add_argument("folder", help="output folder of the %s sweep (holds index.csv)" % name)
    if extra:
        extra(ap)
    return ap.parse_args()


def load_sweep(folder, name, required=()):
    """(cols, rows) of a finished sweep's index.csv; fails with a message naming the file
    when a run is pending, unfinished or missing, or a required column is absent."""
    try:
        cols, rows = read_index(folder)
        rows = check_rows(folder, rows)
    except RunError as e:
        fail(str(e))
    for k in required:
        if k not in cols:
            fail("%s/index.csv has no column %s: not the output of the %s sweep" % (folder, k, name))
    return cols, rows


def open_run(path, allow_unfinished=False):
    """The run file as an h5py.File (read-only); RunError if missing, unreadable or unfinished."""
    h5py = need_h5py()
    if not os.path.isfile(path):
        raise RunError("%s: missing run file" % path)
    try:
        f = h5py.File(path, "r", locking=False)
    except OSError as exc:
        raise RunError("%s: not a readable HDF5 run file (%s)" % (path, exc))
    if "solver" not in f.attrs or "series" not in f or "time" not in f["series"]:
        f.close()
        raise RunError("%s: not a clothbench run file (no solver attribute or /series/time)" % path)
    try:
        rows = readable_rows(f)
        for name in f["series"]:
            check_series(f, name, path, rows)
    except RunError:
        f.close()
        raise
    st = attr(f, "status")
    if st == "running" and not allow_unfinished:
        f.close()
        raise RunError("%s: unfinished run file (status running: the run is still going or was killed)" % path)
    return f


def is_run_file(path):
    """False for an HDF5 file that exists but is no run file (a sweep's index.h5, which
    DIR/*.h5 picks up); True otherwise, also for a missing or unreadable path, so that
    open_run reports those."""
    if os.path.basename(path) == "index.h5":
        return False
    h5py = need_h5py()
    try:
        with h5py.File(path, "r", locking=False) as f:
            return "solver" in f.attrs and "series" in f and "time" in f["series"]
    except (OSError, TypeError):
        return True


def attr(f, name, default=""):
    v = f.attrs.get(name, default)
    if isinstance(v, bytes):
        v = v.decode("utf-8", "replace")
    return str(v)


def readable_rows(f):
    """The rows of /series readers index by: /series/time's, or for a run still going or
    killed (status running) the rows every series holds. A kill inside a flush can leave the
    metrics written in part (HDF5 without SWMR orders nothing between datasets); a finished
    run with a short series stays damaged (check_series)."""
    rows = f["series"]["time"].shape[0]
    if attr(f, "status") == "running":
        for name in f["series"]:
            d = f["series"][name]
            if d.shape:
                rows = min(rows, d.shape[0])
    return rows


def check_series(f, name, path=None, rows=None):
    """/series/<name> of f; RunError unless it holds numbers, one row per readable row
    (readable_rows, or `rows` when the caller has it) or more. Readers index every series by
    the time column's rows: a shorter one (a damaged file) would be read past its end or
    give a wrong-length column."""
    d = f["series"][name]
    rows = readable_rows(f) if rows is None else rows
    where = "%s: /series/%s" % (path or f.filename, name)
    if d.dtype.kind not in "fiu":
        raise RunError("%s does not hold numbers (a damaged run file)" % where)
    if len(d.shape) < 1 or d.shape[0] < rows:
        raise RunError("%s has %d rows, /series/time %d: a series shorter than the time column (a damaged run "
                       "file); refusing to read past its end" % (where, d.shape[0] if d.shape else 0, rows))
    return d


def series(f, name):
    """/series/<name> as a numpy array of /series/time's rows (NaN-filled when the metric is
    absent; RunError when it is there but shorter or not numbers)."""
    import numpy as np
    rows = readable_rows(f)
    if name in f["series"]:
        return check_series(f, name, rows=rows)[:rows]
    return np.full(rows, np.nan)


def label(f, path=None):
    """'solver {parameters}' for legends."""
    p = attr(f, "parameters_given") or attr(f, "parameters")  # as set; "parameters" is every key
    s = attr(f, "solver")
    return s if p in ("", "{}") else "%s %s" % (s, p)


def stem(path):
    base = os.path.basename(path)
    return base[:-3] if base.endswith(".h5") else base


def diverged_cause(message):
    """What ended a diverged run, from its message: "energy" (the health rule's E - E0 -
    W_ext beyond E_ref), "strain" (beyond its bound) or "non-finite" (a NaN or a state
    beyond the scene's bound)."""
    m = message or ""
    if "energy E - E0" in m:
        return "energy"
    if "strain" in m:
        return "strain"
    return "non-finite"


def fmt(v, digits=4):
    """Compact number text for tables: '-' for NaN."""
    if isinstance(v, str):
        v = num(v)
    if v is None or math.isnan(v):
        return "-"
    if math.isinf(v):
        return "inf" if v > 0 else "-inf"
    return "%.*g" % (digits, v)


# ---------------------------------------------------------------- one style, every figure

STYLE = {
    "figure.constrained_layout.use": True,   # no clipped or overlapping labels
    "figure.dpi": 100,
    "savefig.dpi": 150,
    "font.size": 9,
    "axes.titlesize": 9,
    "axes.labelsize": 9,
    "xtick.labelsize": 8,
    "ytick.labelsize": 8,
    "legend.fontsize": 7.5,
    "legend.framealpha": 0.85,
    "axes.grid": True,
    "grid.alpha": 0.3,
    "lines.linewidth": 1.3,
    "lines.markersize": 4,
    "axes.spines.top": False,
    "axes.spines.right": False,
}


def use_agg():
    """matplotlib with the Agg backend and the one clothbench style (STYLE): every
    script calls this before making a figure. Axis labels carry their unit in
    brackets ("[-]" when dimensionless)."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    plt.rcParams.update(STYLE)
    return plt


def empty_panel(ax, values, what):
    """If every value is zero or NaN, say so in the panel instead of drawing an axis
    range around nothing (e.g. -0.04..0.04). Returns True when it marked the panel."""
    import numpy as np
    v = np.asarray(values, dtype=float).ravel()
    if v.size and np.any(np.isfinite(v) & (v != 0.0)):
        return False
    text = ("%s: all zero" % what) if (v.size and np.any(np.isfinite(v))) else ("%s: no data" % what)
    for artist in list(ax.get_lines()) + list(ax.collections):   # nothing drawn across the message
        artist.remove()
    ax.text(0.5, 0.5, text, transform=ax.transAxes, ha="center", va="center", fontsize=9, color="0.3")
    ax.set_yticks([])
    return True


def write_csv(path, header, rows):
    """A CSV with a header row (units in the column names) and the plotted numbers."""
    with open(path, "w", newline="") as fh:
        w = csv.writer(fh)
        w.writerow(header)
        for r in rows:
            w.writerow(["%.10g" % x if isinstance(x, float) else x for x in r])
    return path


def save(fig, png, header, rows):
    """Write X.png, X.pdf and X.csv (the numbers plotted: a header with units, then the
    rows) for png = .../X.png; returns the three paths. Every figure writes its data."""
    if not header:
        raise ValueError("cbrun.save: a figure without its data table (%s)" % png)
    stem = os.path.splitext(png)[0]
    fig.savefig(png)
    fig.savefig(stem + ".pdf")
    return png, stem + ".pdf", write_csv(stem + ".csv", header, rows)


# ---------------------------------------------------------------- scene text

def parse_scene(text):
    """The scene YAML stored in a run file as Python data (PyYAML's safe_load; Debian's
    python3-yaml, installed by experiments/install-deps.sh)."""
    try:
        import yaml
    except ImportError:
        fail("PyYAML is not available for %s; use Debian's /usr/bin/python3 (apt install python3-yaml)"
             % sys.executable)
    return yaml.safe_load(text)
