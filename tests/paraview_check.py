"""tests/paraview_check.py — open a run's XDMF sidecar with ParaView's readers and compare
with the HDF5 file (run by tests/test_paraview.c through pvpython).

    pvpython tests/paraview_check.py RUN.xdmf RUN.h5 READER

READER is xdmf3s, xdmf3t or legacy. Prints one line
    points P cells C steps S maxdiff D
where maxdiff is the largest difference of the last frame's positions from /frames/positions
in the HDF5 file, or an error line and exit status 1.
"""
import sys

import h5py
import numpy as np
from paraview import servermanager as sm
from paraview import simple
from vtk.numpy_interface import dataset_adapter as dsa


def main():
    xdmf, h5, which = sys.argv[1], sys.argv[2], sys.argv[3]
    make = {"xdmf3s": simple.Xdmf3ReaderS, "xdmf3t": simple.Xdmf3ReaderT, "legacy": simple.XDMFReader}[which]
    reader = make(FileName=[xdmf]) if which != "legacy" else make(FileNames=[xdmf])
    times = list(reader.TimestepValues) if reader.TimestepValues else []
    if not times:
        print("error: %s found no time steps" % which)
        return 1
    reader.UpdatePipeline(times[-1])
    data = sm.Fetch(reader)
    if data.IsA("vtkMultiBlockDataSet"):
        data = data.GetBlock(0)
    d = dsa.WrapDataObject(data)
    pts = np.asarray(d.Points) if d.Points is not None else np.zeros((0, 3))
    with h5py.File(h5, "r", locking=False) as f:
        ref = f["frames/positions"][-1]
    diff = float(np.max(np.abs(pts - ref))) if pts.shape == ref.shape else float("inf")
    print("points %d cells %d steps %d maxdiff %.3g" % (data.GetNumberOfPoints(), data.GetNumberOfCells(), len(times), diff))
    return 0


if __name__ == "__main__":
    sys.exit(main())
