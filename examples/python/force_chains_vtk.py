"""Force chains of a run drawn with VTK, the library ParaView is built on,
by ParaView's own recipe: read the last `contacts_NNNNN.vtu`, Cell Data to
Point Data, Tube with the radius varying by `normal_force`, coloured by it.

    repose run scenes/pile.ron --contacts --out out/pile
    pip install vtk
    python examples/python/force_chains_vtk.py out/pile force_chains_vtk.png

Renders off screen (no display needed). The same steps in ParaView's
window: open `contacts.pvd`, Filters → Cell Data to Point Data, Filters →
Tube (Vary Radius: By Scalar, Scalars: normal_force), colour by
normal_force.
"""

import glob
import os
import sys

import vtk


def main(run: str, png: str) -> None:
    files = sorted(glob.glob(os.path.join(run, "contacts_*.vtu")))
    if not files:
        sys.exit(f"{run}: no contacts_NNNNN.vtu: run the scene with --contacts")
    reader = vtk.vtkXMLUnstructuredGridReader()
    reader.SetFileName(files[-1])
    reader.Update()
    lines = reader.GetOutput()
    forces = lines.GetCellData().GetArray("normal_force")
    values = sorted(forces.GetValue(k) for k in range(forces.GetNumberOfTuples()))
    strongest = values[-1]
    # Colours saturate at the 99th percentile: a few contacts under the
    # peak carry twice the rest, and would leave the chains all blue.
    top = values[int(0.99 * (len(values) - 1))]
    lines.GetCellData().SetActiveScalars("normal_force")

    # ParaView's Cell Data to Point Data: each line has its own two
    # points, so both ends take the line's force exactly.
    to_points = vtk.vtkCellDataToPointData()
    to_points.SetInputData(lines)
    surface = vtk.vtkGeometryFilter()
    surface.SetInputConnection(to_points.GetOutputPort())
    tube = vtk.vtkTubeFilter()
    tube.SetInputConnection(surface.GetOutputPort())
    tube.SetVaryRadiusToVaryRadiusByScalar()
    tube.SetRadius(2e-4)
    tube.SetRadiusFactor(12.0)
    tube.SetNumberOfSides(10)

    colours = vtk.vtkLookupTable()
    colours.SetHueRange(0.66, 0.0)
    colours.SetTableRange(0.0, top)
    colours.Build()
    mapper = vtk.vtkPolyDataMapper()
    mapper.SetInputConnection(tube.GetOutputPort())
    mapper.SetScalarModeToUsePointFieldData()
    mapper.SelectColorArray("normal_force")
    mapper.SetLookupTable(colours)
    mapper.SetScalarRange(0.0, top)
    actor = vtk.vtkActor()
    actor.SetMapper(mapper)

    bar = vtk.vtkScalarBarActor()
    bar.SetLookupTable(colours)
    bar.SetTitle("normal force (N)")
    bar.SetNumberOfLabels(5)
    bar.SetWidth(0.08)
    for text in (bar.GetTitleTextProperty(), bar.GetLabelTextProperty()):
        text.SetColor(0.0, 0.0, 0.0)
        text.SetFontSize(14)
        text.BoldOff()
        text.ItalicOff()

    scene = vtk.vtkRenderer()
    scene.SetBackground(1.0, 1.0, 1.0)
    scene.AddActor(actor)
    scene.AddViewProp(bar)
    window = vtk.vtkRenderWindow()
    window.SetOffScreenRendering(1)
    window.AddRenderer(scene)
    window.SetSize(1400, 640)
    camera = scene.GetActiveCamera()
    camera.SetFocalPoint(0.0, 0.0, 0.035)
    camera.SetPosition(0.0, -0.45, 0.18)
    camera.SetViewUp(0.0, 0.0, 1.0)
    camera.SetViewAngle(30.0)
    scene.ResetCameraClippingRange()
    window.Render()

    grab = vtk.vtkWindowToImageFilter()
    grab.SetInput(window)
    grab.Update()
    writer = vtk.vtkPNGWriter()
    writer.SetFileName(png)
    writer.SetInputConnection(grab.GetOutputPort())
    writer.Write()
    loaded = sum(1 for k in range(forces.GetNumberOfTuples()) if forces.GetValue(k) > 0.0)
    print(f"{png}: {loaded} loaded contacts of {lines.GetNumberOfCells()} from {files[-1]}, strongest {strongest:.3g} N")


if __name__ == "__main__":
    if len(sys.argv) != 3:
        sys.exit("usage: force_chains_vtk.py RUN_DIR OUT.png")
    main(sys.argv[1], sys.argv[2])
