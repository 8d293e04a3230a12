"""Bad input raises the command line's message as a Python exception."""

import subprocess

import pytest

import repose

from conftest import BAD, SCENES

BAD_SCENES = sorted(p for p in BAD.glob("*.ron"))


@pytest.mark.parametrize("path", BAD_SCENES, ids=lambda p: p.name)
def test_a_bad_scene_raises_the_command_lines_message(path, cli, tmp_path):
    out = tmp_path / "out"
    with pytest.raises((repose.SceneError, repose.RunError)) as caught:
        repose.run(path, out=out, progress=False)
    done = subprocess.run([cli, "run", str(path), "--out", str(tmp_path / "cli")], capture_output=True, text=True)
    assert done.returncode == 1, done.stderr
    lines = [l for l in done.stderr.splitlines() if l.startswith("error: ")]
    assert lines, done.stderr
    cli_message = done.stderr[done.stderr.index("error: ") + len("error: "):].rstrip("\n")
    assert str(caught.value) == cli_message.replace(str(tmp_path / "cli"), str(out))


def test_scene_errors_carry_file_position_and_issues():
    with pytest.raises(repose.SceneError) as e:
        repose.Scene.load(BAD / "negative_friction.ron")
    err = e.value
    assert err.kind == "invalid" and err.file.endswith("negative_friction.ron")
    assert any(path.startswith("materials[0]") for path, _ in err.issues), err.issues
    with pytest.raises(repose.SceneError) as e:
        repose.Scene.load(BAD / "syntax_error.ron")
    assert e.value.kind == "syntax" and e.value.line >= 1 and e.value.col >= 1
    with pytest.raises(repose.SceneError) as e:
        repose.Scene.load(SCENES / "column.ron", set={"materials.0.frcition": 0.3})
    assert e.value.kind == "override" and e.value.issues[0][0] == "materials.0.frcition"
    assert "frcition" in str(e.value)
    with pytest.raises(ValueError, match="backend"):
        repose.Simulation(SCENES / "column.ron", backend="tpu")
    with pytest.raises(ValueError, match="solver"):
        repose.Simulation(SCENES / "column.ron", solver="magic")
