#!/usr/bin/env python3
"""analysis/figures/contact_accuracy.py — accuracy with contact: every method's error
against its cost on the drape (a work-precision diagram with contact, issue 34).

Reads the runs of the contact_accuracy sweep (experiments/figures/contact_accuracy.yaml)
and its reference (reference.h5 in the same folder: ipc at a tight tolerance and dt / Q,
checked against the same at half the step; clothbench reference). For every method and
dt: the largest position_error over the frames (m; the measure of the reference's own
check) against the wall time per simulated second. One curve per method (dashed when its
model is not the reference's), the Pareto front, runs not ok as an x at their cost. The
reference holds the frames where its check is within its bound (its window, printed; the
errors are over it). The reference's own error, about 2 D for its check D (first order:
implicit Euler), is drawn as a dotted line: a method below it is as close to the
reference as the reference is to the converged trajectory, no closer. Writes
contact_accuracy.png, .pdf and .csv into that folder.
"""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import cbrun  # noqa: E402
import work_precision  # noqa: E402


def main():
    args = cbrun.figure_args("contact_accuracy", __doc__)
    ref = os.path.join(args.folder, "reference.h5")
    if not os.path.exists(ref):
        cbrun.fail("%s: no reference (the contact_accuracy sweep makes it)" % ref)
    f = cbrun.open_run(ref)
    D = float(f.attrs.get("reference_difference", float("nan")))
    W = float(f.attrs.get("reference_window", float("nan")))
    method = cbrun.attr(f, "reference_method") or "unknown"
    f.close()
    print("reference: %s; its check D = %.3g m, its own error about %.3g m; its window 0 to %.4g s (the errors are "
          "over it)" % (method, D, 2 * D, W))
    work_precision.figure(args.folder, "contact_accuracy", "contact_accuracy", "max",
                          "largest position error over the frames [m]",
                          "Accuracy with contact: the drape against ipc (along a curve: dt; x: not ok)", floor=2 * D)


if __name__ == "__main__":
    main()
