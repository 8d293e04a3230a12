"""The VTU/PVD outputs opened by VTK's own reader, the one ParaView uses:
every series lists files that exist, a frame's points and arrays are the
bodies of final.csv, and a contact file's lines and loads are its CSV's
rows, to the bit."""

import csv
import xml.etree.ElementTree as ET

import numpy as np
import vtk
from vtk.util.numpy_support import vtk_to_numpy

import repose

from conftest import SCENES


def read_vtu(path):
    reader = vtk.vtkXMLUnstructuredGridReader()
    reader.SetFileName(str(path))
    reader.Update()
    assert reader.GetErrorCode() == 0, f"{path}: VTK error {reader.GetErrorCode()}"
    return reader.GetOutput()


def series(pvd):
    """The (time, file) entries of a .pvd, each file checked to exist."""
    root = ET.parse(pvd).getroot()
    entries = [(float(d.get("timestep")), pvd.parent / d.get("file")) for d in root.iter("DataSet")]
    assert entries, f"{pvd} lists no files"
    for t, f in entries:
        assert f.is_file(), f"{pvd} lists {f}, which is missing"
    times = [t for t, _ in entries]
    assert times == sorted(times), f"{pvd}: times out of order"
    return entries


def test_vtk_reads_the_frames_and_contact_lines_as_the_csv_files_give_them(tmp_path):
    out = tmp_path / "pile"
    repose.run(
        SCENES / "pile.ron",
        out=out,
        set={
            "spheres.0.count": 300,
            "duration": 0.3,
            "analysis.stop_when_settled": False,
            "output.contacts": True,
        },
        picture=False,
        progress=False,
    )
    frames = series(out / "frames.pvd")
    contacts = series(out / "contacts.pvd")
    assert [t for t, _ in frames] == [t for t, _ in contacts], "contacts beside every frame"

    # The last frame is the state of final.csv.
    final = np.genfromtxt(out / "final.csv", delimiter=",", names=True, dtype=None, encoding="utf-8")
    grid = read_vtu(frames[-1][1])
    assert grid.GetNumberOfPoints() == len(final) == 300
    points = vtk_to_numpy(grid.GetPoints().GetData())
    order = np.argsort(vtk_to_numpy(grid.GetPointData().GetArray("id")))
    xyz = np.column_stack([final["x"], final["y"], final["z"]])
    assert np.array_equal(points[order], xyz), "frame positions differ from final.csv"
    radius = vtk_to_numpy(grid.GetPointData().GetArray("radius"))[order]
    assert np.array_equal(radius, final["radius"])
    velocity = vtk_to_numpy(grid.GetPointData().GetArray("velocity"))[order]
    assert np.array_equal(velocity, np.column_stack([final["vx"], final["vy"], final["vz"]]))

    # The last contact lines: a cell per CSV row, loads to the bit, each
    # line from body A's centre.
    lines = read_vtu(contacts[-1][1])
    with open(contacts[-1][1].with_suffix(".csv")) as f:
        rows = list(csv.DictReader(f))
    m = lines.GetNumberOfCells()
    assert m == len(rows) > 100
    cells = lines.GetCellData()
    for name, column in [("normal_force", "fn"), ("spinning_torque", "ts"), ("gap", "gap"), ("elastic_energy", "elastic_energy")]:
        got = vtk_to_numpy(cells.GetArray(name))
        want = np.array([float(r[column]) for r in rows])
        assert np.array_equal(got, want), f"{name} differs from the CSV's {column}"
    tangential = vtk_to_numpy(cells.GetArray("tangential_force"))
    assert np.array_equal(tangential, np.array([[float(r[k]) for k in ("ftx", "fty", "ftz")] for r in rows]))
    ends = vtk_to_numpy(lines.GetPoints().GetData()).reshape(m, 2, 3)
    body_a = vtk_to_numpy(cells.GetArray("body_a"))
    assert np.array_equal(body_a, np.array([int(r["body_a"]) for r in rows]))
    assert np.array_equal(ends[:, 0, :], xyz[body_a]), "lines start at body A's centre"
    assert (vtk_to_numpy(cells.GetArray("normal_force")) > 0).sum() > m // 2
