#!/usr/bin/env python3
"""tests/gauntlet_check.py — checks of analysis/figures/gauntlet.py for tests/test_analysis.c.

    gauntlet_check.py values DIR     every cell of DIR/gauntlet.csv against its run file, read
                                     here with h5py on its own: the audit counts summed, the
                                     last intersecting-pair count, the peak collider depth,
                                     strain and E - E0 - W_ext, the status; prints
                                     "checked N cells, M mismatches" and each mismatch
    gauntlet_check.py craft SRC DST  a copy of the sweep folder SRC in DST whose index has a
                                     timed-out run, an interrupted one, a refused one (acm's
                                     message for a mesh collider), a pending one and a row
                                     removed; prints which cell got which
    gauntlet_check.py rules          the severity and promise rules on synthetic cells; prints
                                     "rule NAME: got X" per case
"""
import csv
import math
import os
import shutil
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "analysis", "figures"))
sys.path.insert(0, os.path.join(HERE, "..", "analysis"))


def close(a, b):
    if a == "" or b == "":
        return a == b
    a, b = float(a), float(b)
    if math.isnan(a) or math.isnan(b):
        return math.isnan(a) and math.isnan(b)
    return abs(a - b) <= 1e-9 * max(1.0, abs(a), abs(b))


def values(folder):
    import h5py
    import numpy as np
    rows = list(csv.DictReader(open(os.path.join(folder, "gauntlet.csv"))))
    bad, n = [], 0
    for r in rows:
        if not r["file"] or not os.path.isfile(os.path.join(folder, r["file"])):
            continue
        f = h5py.File(os.path.join(folder, r["file"]), "r")
        s = f["series"]
        n += 1

        def want(col, value):
            if not close(r[col], value):
                bad.append("%s %s: table %s, run file %s" % (r["file"], col, r[col], value))
        for name in s:
            if name.endswith("crossings_in_step") and name != "crossings_in_step":
                want("%s [count]" % name, float(np.nansum(s[name][:])))
        si = s["self_intersections"][:]
        si = si[np.isfinite(si)]
        want("intersecting pairs at end [count]", float(si[-1]) if len(si) else math.nan)
        want("collider depth [m]", float(np.nanmax(s["collider_max_depth"][:])))
        want("peak strain [-]", float(np.nanmax(s["max_strain"][:])))
        E, W = s["total_energy"][:], s["external_work"][:]
        want("energy rise E-E0-W_ext [J]", float(np.max(E - E[0] - np.nan_to_num(W))))
        status = f.attrs["status"]
        status = status.decode() if isinstance(status, bytes) else str(status)
        if r["status"] != status and not (r["status"] == "timeout" and status == "interrupted"):
            bad.append("%s status: table %s, run file %s" % (r["file"], r["status"], status))
        f.close()
    print("checked %d cells, %d mismatches" % (n, len(bad)))
    for b in bad:
        print("mismatch: " + b)
    return 0 if n and not bad else 1


def craft(src, dst):
    if os.path.exists(dst):
        shutil.rmtree(dst)
    shutil.copytree(src, dst)
    path = os.path.join(dst, "index.csv")
    with open(path, newline="") as fh:
        reader = csv.reader(fh)
        cols = next(reader)
        rows = [dict(zip(cols, r)) for r in reader if r]
    assert len(rows) >= 4, "craft needs four runs"
    rows[0]["status"], rows[0]["message"] = "interrupted", "time limit of 600 s reached at step 3 (t = 0.003 s)"
    rows[1]["status"], rows[1]["message"] = "interrupted", "interrupted by a signal at step 2 (t = 0.002 s)"
    rows[2]["status"] = "error"
    rows[2]["message"] = ("acm: collider 0 (line 20) is a triangle-mesh collider, which acm does not support yet "
                          "(its certificates assume analytic translating colliders)")
    os.remove(os.path.join(dst, rows[2]["file"]))
    rows[3]["status"], rows[3]["message"] = "pending", ""
    os.remove(os.path.join(dst, rows[3]["file"]))
    extra = dict(rows[1], scene="gauntlet_extra", status="pending", message="",
                 file=rows[1]["file"].replace(".h5", "_extra.h5"))
    rows.append(extra)   # a scene only one method has: the other's cell is not in the index
    with open(path, "w", newline="") as fh:
        w = csv.writer(fh)
        w.writerow(cols)
        for r in rows:
            w.writerow([r[c] for c in cols])
    names = ["timeout", "interrupted", "n/a", "missing"]
    for name, r in zip(names, rows):
        print("crafted %s: %s on %s" % (name, r["solver"], r["scene"]))
    others = sorted({r["solver"] for r in rows} - {extra["solver"]})
    print("crafted not in the index: %s on %s" % (", ".join(others), extra["scene"]))
    return 0


def rules():
    import gauntlet as g
    nan = math.nan

    def cell(**kw):
        c = {"solver": "fms", "status": "ok", "message": "", "read": True,
             "crossings": {"self_crossings_in_step": 0.0, "collider_crossings_in_step": 0.0},
             "crossings_total": 0.0, "pairs_end": 0.0, "depth": 0.0, "vertex_depth": 0.0, "strain": 0.01,
             "energy_rise": 0.0, "energy_rise_rel": 0.0, "thickness": 0.002, "ms_step": 1.0}
        c.update(kw)
        if "crossings" in kw:
            c["crossings_total"] = float(sum(kw["crossings"].values()))
        c["promise"] = g.promise_of(c)
        return c
    cases = {
        "clean": cell(),
        "newton_ball_through": cell(solver="newton", crossings={"collider_crossings_in_step": 40.0}),
        "ball_through": cell(crossings={"collider_crossings_in_step": 40.0, "self_crossings_in_step": 0.0}),
        "self_crossing": cell(crossings={"self_crossings_in_step": 1.0}),
        "new_series": cell(crossings={"edge_collider_crossings_in_step": 3.0}),
        "between_vertices": cell(crossings={"collider_edge_crossings_in_step": 5.0,
                                            "collider_face_crossings_in_step": 1.0}, depth=0.001),
        "between_and_vertex": cell(crossings={"collider_edge_crossings_in_step": 5.0,
                                              "collider_crossings_in_step": 1.0}),
        "between_deep": cell(crossings={"collider_edge_crossings_in_step": 5.0}, depth=0.003),
        "pairs": cell(pairs_end=2.0),
        "shallow": cell(depth=0.001),
        "deep": cell(depth=0.003),
        "energy": cell(energy_rise_rel=0.5),
        "strain": cell(strain=0.3),
        "diverged": cell(status="diverged", message="health check: step 5: strain 1.2 > 1"),
        "timeout_clean": cell(status="timeout", read=False),
        "timeout_crossed": cell(status="timeout", crossings={"self_crossings_in_step": 4.0}),
        "refused": cell(status="n/a", read=False),
        "missing": cell(status="missing", read=False),
        "acm_crossing": cell(solver="acm", crossings={"self_crossings_in_step": 1.0}),
        "acm_clean": cell(solver="acm"),
        "pbd_ball_through": cell(solver="pbd", crossings={"collider_crossings_in_step": 2.0}),
        "pbd_self": cell(solver="pbd", crossings={"self_crossings_in_step": 2.0}),
        "avgforce_pairs": cell(solver="avgforce", pairs_end=1.0),
        "newton_vertex_in": cell(solver="newton", vertex_depth=1e-4, depth=1e-4),
        "unknown_method": cell(solver="nosuch"),
        "unmeasured_audit": cell(crossings={"self_crossings_in_step": nan}),
        "no_audit_series": cell(crossings={}),
    }
    for name, c in cases.items():
        c["severity"] = g.severity(c)
        print("rule %s: got %s promise %s worst %s" % (name, c["severity"],
                                                      {True: "kept", False: "broken", None: "unjudged"}[c["promise"]],
                                                      g.worst_symptom(c)))
    return 0


def main():
    if len(sys.argv) >= 3 and sys.argv[1] == "values":
        return values(sys.argv[2])
    if len(sys.argv) >= 4 and sys.argv[1] == "craft":
        return craft(sys.argv[2], sys.argv[3])
    if len(sys.argv) >= 2 and sys.argv[1] == "rules":
        return rules()
    sys.stderr.write(__doc__)
    return 2


if __name__ == "__main__":
    sys.exit(main())
