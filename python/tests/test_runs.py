"""Whole runs from Python: the same bits as the command line, the summary
as a dict, measure, sweep, and clean stops on Ctrl-C."""

import json
import os
import signal
import subprocess
import sys
import time

import pytest

import repose

from conftest import ROOT, SCENES


def test_a_run_from_python_equals_the_command_lines_bit_for_bit(cli, tmp_path):
    scene = SCENES / "column.ron"
    summary = repose.run(scene, out=tmp_path / "py", frames=False, progress=False)
    done = subprocess.run(
        [cli, "run", str(scene), "--backend", "auto", "--no-frames", "--out", str(tmp_path / "cli")],
        capture_output=True,
        text=True,
    )
    assert done.returncode == 0, done.stderr
    py_csv = (tmp_path / "py" / "final.csv").read_bytes()
    cli_csv = (tmp_path / "cli" / "final.csv").read_bytes()
    assert py_csv == cli_csv, "final.csv differs between repose.run and `repose run`"
    assert (tmp_path / "py" / "walls.csv").read_bytes() == (tmp_path / "cli" / "walls.csv").read_bytes()
    on_disk = json.loads((tmp_path / "py" / "summary.json").read_text())
    assert summary["steps"] == on_disk["steps"] == 1000
    assert summary["stopped"] == "completed"
    assert summary == on_disk


def test_run_refuses_to_mix_outputs_and_measure_reads_them_back(tmp_path):
    out = tmp_path / "pile"
    scene = repose.Scene.load(SCENES / "pile.ron", set={"spheres.0.count": 300})
    s = repose.run(scene, out=out, frames=False, picture=False, progress=False)
    with pytest.raises(repose.RunError, match="overwrite"):
        repose.run(scene, out=out, progress=False)
    m = repose.measure(out)
    recorded = s["extra"]["angle_of_repose"]
    assert m["angle_deg"] == pytest.approx(recorded["angle_deg"], abs=1e-12), (m, recorded)
    assert m["floor_source"]
    rows = repose.read_table(out / "final.csv")
    assert len(rows) == 300 and rows[0]["id"] == 0 and isinstance(rows[0]["x"], float)


def test_a_sweep_returns_its_table(tmp_path):
    rows = repose.sweep(
        SCENES / "column.ron",
        {"materials.0.friction": [0.2, 0.4], "duration": "0.05"},
        jobs=2,
        out=tmp_path / "sweep",
        progress=False,
    )
    assert len(rows) == 2
    assert [r["materials.0.friction"] for r in rows] == [0.2, 0.4]
    assert all(r["error"] is None for r in rows), rows
    assert (tmp_path / "sweep" / "sweep.csv").is_file()


def test_a_sweeps_set_applies_to_every_run_and_is_not_a_column(tmp_path):
    out = tmp_path / "sweep"
    rows = repose.sweep(
        SCENES / "column.ron",
        {"materials.0.friction": [0.2, 0.4]},
        set={"duration": 0.05, "solver.method": "Pgs"},
        out=out,
        progress=False,
    )
    assert len(rows) == 2 and all(r["error"] is None for r in rows), rows
    assert "duration" not in rows[0] and "solver.method" not in rows[0], rows[0]
    runs = sorted((out / "runs").iterdir())
    assert len(runs) == 2
    for run in runs:
        scene = repose.Scene.load(run / "scene.ron")
        assert scene.duration == 0.05 and "method: Pgs" in scene.to_str(), run
    with pytest.raises(repose.RunError, match="also varied"):
        repose.sweep(
            SCENES / "column.ron",
            {"materials.0.friction": [0.2, 0.4]},
            set={"materials.0.friction": 0.5},
            out=tmp_path / "bad",
            progress=False,
        )


def test_a_sweep_takes_a_scene_as_it_takes_the_scenes_file(tmp_path):
    scene = repose.Scene.load(SCENES / "column.ron", set={"duration": 0.05})
    vary = {"materials.0.friction": [0.2, 0.4]}
    by_scene = repose.sweep(scene, vary, out=tmp_path / "scene", progress=False)
    path = tmp_path / "column.ron"
    path.write_text(scene.to_str())
    by_file = repose.sweep(path, vary, out=tmp_path / "file", progress=False)
    assert len(by_scene) == len(by_file) == 2
    assert all(r["error"] is None for r in by_scene + by_file), by_scene + by_file
    assert (tmp_path / "scene" / "base_scene.ron").read_text() == scene.to_str()
    for a, b in zip(sorted((tmp_path / "scene" / "runs").iterdir()), sorted((tmp_path / "file" / "runs").iterdir())):
        assert a.name == b.name
        assert (a / "final.csv").read_bytes() == (b / "final.csv").read_bytes(), a.name


# The child stands for an interactive Python, where Ctrl-C raises
# KeyboardInterrupt: Python leaves SIGINT ignored when it starts with it
# ignored (as a background job of a non-interactive shell does), so the
# child installs the interactive handler itself.
CHILD = r"""
import signal, sys, json, repose
signal.signal(signal.SIGINT, signal.default_int_handler)
kind, scene, out = sys.argv[1], sys.argv[2], sys.argv[3]
print("started", flush=True)
if kind == "run":
    try:
        repose.run(scene, out=out, set={"duration": 1000.0}, frames=False, progress=False)
    except repose.Interrupted as e:
        print(json.dumps({"stopped": e.result["stopped"], "steps": e.result["steps"]}), flush=True)
        sys.exit(0)
else:
    sim = repose.Simulation(scene, set={"duration": 1000.0})
    try:
        sim.step(10**9)
    except KeyboardInterrupt:
        sim.step(1)   # still usable afterwards
        print(json.dumps({"step_index": sim.step_index}), flush=True)
        sys.exit(0)
sys.exit(3)
"""


@pytest.mark.parametrize("kind", ["run", "simulation"])
def test_ctrl_c_stops_cleanly_with_the_partial_result(kind, tmp_path):
    out = tmp_path / "out"
    child = subprocess.Popen(
        [sys.executable, "-c", CHILD, kind, str(SCENES / "column.ron"), str(out)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    assert child.stdout.readline().strip() == "started"
    time.sleep(2.0)
    child.send_signal(signal.SIGINT)
    stdout, stderr = child.communicate(timeout=60)
    assert child.returncode == 0, f"exit {child.returncode}\n{stdout}\n{stderr}"
    got = json.loads(stdout.strip().splitlines()[-1])
    if kind == "run":
        assert got["stopped"] == "interrupted" and got["steps"] > 0, got
        summary = json.loads((out / "summary.json").read_text())
        assert summary["stopped"] == "interrupted" and summary["steps"] == got["steps"]
        rows = (out / "final.csv").read_text().splitlines()
        assert len(rows) == 11, "final.csv: a header and the 10 spheres"
        assert (out / "checkpoint.bin").is_file(), "an interrupted run keeps its checkpoint"
    else:
        assert got["step_index"] > 1, got


def small_pile(beads=300):
    """The demo pile at `beads` beads."""
    return repose.Scene.load(SCENES / "pile.ron", set={"spheres.0.count": beads})


def test_a_calibration_out_of_reach_names_the_closest_end(tmp_path):
    # 80° is beyond any rho of the range for 300 beads: the search stops
    # after the two ends, as `repose calibrate` does (tests/calibrate.rs).
    # The scene given as a Scene; below as a file.
    outcome = repose.calibrate(
        small_pile(),
        {"materials.0.rolling+materials.0.spinning": (0.0005, 0.002)},
        80.0,
        jobs=2,
        out=tmp_path / "cal",
        progress=False,
    )
    assert outcome["status"] == "out_of_reach", outcome["message"]
    assert len(outcome["evaluations"]) == 2
    assert outcome["estimate"] == [0.002], outcome
    assert any(f.endswith("calibrate.csv") for f in outcome["files"])
    assert len(outcome["table"]) == 2
    assert (tmp_path / "cal" / "scene_0.ron").read_text() == small_pile().to_str()
    # A set path that is also calibrated is refused before any run.
    path = tmp_path / "pile_small.ron"
    path.write_text(small_pile().to_str())
    with pytest.raises(repose.RunError, match="calibrated"):
        repose.calibrate(
            path,
            {"materials.0.rolling+materials.0.spinning": (0.0005, 0.002)},
            80.0,
            set={"materials.0.spinning": 0.001},
            out=tmp_path / "bad",
            progress=False,
        )
    assert not (tmp_path / "bad" / "runs").exists()


def test_progress_reaches_every_step_and_tables_become_frames(tmp_path):
    seen = []
    scene = repose.Scene.load(SCENES / "column.ron", set={"duration": 0.3})
    text, interrupted = repose._repose.run_scene(
        scene, out=str(tmp_path / "run"), frames=False, on_progress=lambda done, total: seen.append((done, total))
    )
    assert not interrupted
    assert seen and all(t == 300 for _, t in seen), seen[:3]
    assert [d for d, _ in seen] == sorted(d for d, _ in seen), "progress went backwards"
    assert seen[-1][0] == 300, f"last progress call at step {seen[-1][0]} of 300"
    frame = repose.to_frame(repose.read_table(tmp_path / "run" / "walls.csv"))
    assert list(frame.columns[:3]) == ["step", "time", "boundary"]
    assert len(frame) == 300 and frame["step"].iloc[-1] == 300
