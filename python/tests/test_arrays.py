"""The state as NumPy arrays: documented shapes and dtypes, copies, and
checked setters."""

import numpy as np
import pytest

import repose

from conftest import SCENES


@pytest.fixture()
def sim():
    s = repose.Simulation(SCENES / "column.ron", backend="cpu")
    s.step(5)
    return s


def test_state_arrays_have_the_documented_shapes_and_dtypes(sim):
    n = len(sim)
    assert n == 10
    expected = {
        "positions": ((n, 3), np.float64),
        "velocities": ((n, 3), np.float64),
        "angular_velocities": ((n, 3), np.float64),
        "orientations": ((n, 4), np.float64),
        "radii": ((n,), np.float64),
        "masses": ((n,), np.float64),
        "material_ids": ((n,), np.int64),
        "shape_ids": ((n,), np.int64),
        "gravity": ((3,), np.float64),
    }
    for name, (shape, dtype) in expected.items():
        a = getattr(sim, name)
        assert isinstance(a, np.ndarray), name
        assert a.shape == shape and a.dtype == dtype, f"{name}: {a.shape} {a.dtype}, documented {shape} {dtype}"
    c = sim.contacts()
    m = len(c["body_a"])
    assert m > 0
    for name in ("point", "normal", "force", "tangential_force", "rolling_torque"):
        assert c[name].shape == (m, 3) and c[name].dtype == np.float64, name
    for name in ("gap", "normal_force", "spinning_torque", "elastic_energy"):
        assert c[name].shape == (m,) and c[name].dtype == np.float64, name
    for name in ("body_a", "body_b", "boundary"):
        assert c[name].shape == (m,) and c[name].dtype == np.int64, name
    # Unit quaternions, scalar first as in final.csv; unit normals.
    assert np.allclose(np.linalg.norm(sim.orientations, axis=1), 1.0, atol=1e-12)
    assert np.allclose(np.linalg.norm(c["normal"], axis=1), 1.0, atol=1e-12)
    # A plain sphere's shape id is -1; boundary contacts name their wall.
    assert (sim.shape_ids == -1).all()
    walls = c["boundary"][c["body_b"] < 0]
    assert ((walls >= 0) & (walls < len(sim.boundary_names))).all()
    assert (c["boundary"][c["body_b"] >= 0] == -1).all()


def test_arrays_are_copies(sim):
    x = sim.positions
    x[:] = 123.0
    assert not np.any(sim.positions == 123.0), "writing into a returned array changed the simulation"
    before = sim.positions.copy()
    sim.velocities[:] = 1.0
    sim.step(1)
    assert np.abs(sim.positions - before).max() < 0.01


def test_setters_change_the_state_and_refuse_bad_arrays(sim):
    n = len(sim)
    v = np.zeros((n, 3))
    v[:, 0] = 0.25
    sim.set_velocities(v)
    assert np.array_equal(sim.velocities, v)
    sim.set_angular_velocities([[0.0, 0.0, 1.0]] * n)  # any array-like
    assert np.array_equal(sim.angular_velocities[:, 2], np.ones(n))
    with pytest.raises(ValueError, match=r"shape \(10, 3\)"):
        sim.set_velocities(np.zeros((n - 1, 3)))
    bad = np.zeros((n, 3))
    bad[4, 1] = np.nan
    with pytest.raises(ValueError, match="row 4 is not finite"):
        sim.set_positions(bad)
    x = sim.positions
    x[:, 0] += 0.001
    sim.set_positions(x)
    assert np.array_equal(sim.positions, x)


def test_removing_bodies_renumbers_the_rest(sim):
    x = sim.positions
    sim.remove_bodies([0, 9])
    assert len(sim) == 8
    assert np.array_equal(sim.positions, x[1:9])
    assert len(sim.contacts()["body_a"]) == 0, "the last step's contacts are forgotten"
    with pytest.raises(IndexError, match="out of range"):
        sim.remove_bodies([8])
    sim.step(10)
    assert np.isfinite(sim.positions).all()
    assert sim.last_step["contacts"] > 0


def test_ids_and_times_that_are_not_what_they_claim_are_refused_by_name(sim, tmp_path):
    n = len(sim)
    for ids in ([1.5], np.array([0.0, 2.0]), [True]):
        with pytest.raises(TypeError, match="remove_bodies: body ids must be whole numbers"):
            sim.remove_bodies(ids)
    assert len(sim) == n, "nothing removed"
    sim.remove_bodies([])
    assert len(sim) == n
    for until in (float("nan"), float("inf")):
        with pytest.raises(ValueError, match="run: until must be a finite time"):
            sim.run(until=until, progress=False)
    with pytest.raises(TypeError, match="run: steps must be a whole number"):
        sim.run(steps=2.5, progress=False)
    binary = tmp_path / "frames.bin"
    binary.write_bytes(bytes(range(256)) * 64)
    nul = tmp_path / "nul.csv"
    nul.write_bytes(bytes(4096))
    for path in (binary, nul):
        with pytest.raises(ValueError, match=f"{path.name}: not a table repose wrote"):
            repose.read_table(path)


def test_step_statistics_and_stage_times(sim):
    s = sim.last_step
    assert set(s) == {"iterations", "residual", "residual_abs", "converged", "contacts", "substeps", "fallback_iterations", "fallback_seconds", "timed_out"}
    assert s["fallback_iterations"] is None and s["fallback_seconds"] == 0.0
    assert s["substeps"] == 1 and s["contacts"] > 0
    assert sim.step_index == 5 and abs(sim.time - 5 * sim.time_step) < 1e-15
    assert {"collide", "solve", "integrate"} <= set(sim.stage_times)


def test_a_fallback_reports_its_iterations_and_time():
    # Two iterations cannot meet 1e-10 on a column of spheres: a step whose
    # warm start does not already meet it goes on to the interior point.
    sim = repose.Simulation(
        SCENES / "column.ron",
        backend="cpu",
        set={"solver.max_iterations": 2, "solver.tolerance": 1e-10, "solver.fallback": "Some(InteriorPoint)"},
    )
    ran = []
    for _ in range(10):
        sim.step()
        s = sim.last_step
        if s["fallback_iterations"] is None:
            assert s["fallback_seconds"] == 0.0, s
        else:
            assert s["fallback_iterations"] > 0 and s["fallback_seconds"] > 0.0, s
            ran.append(s)
    assert ran, "the fallback never ran in 10 steps"


def test_scene_round_trips_through_text_and_takes_overrides():
    s = repose.Scene.load(SCENES / "column.ron", set={"materials.0.friction": 0.25, "duration": 0.5})
    assert s.duration == 0.5 and s.steps == 500
    again = repose.Scene.from_str(s.to_str(), name="again.ron")
    assert again.to_str() == s.to_str()
    assert "friction: 0.25" in again.to_str()
    t = s.with_set({"solver.method": "Jacobi", "output.picture.enabled": False})
    assert "method: Jacobi" in t.to_str()
    with pytest.raises(TypeError, match="not a scene value"):
        s.with_set({"duration": [1, 2]})


def test_contacts_stay_those_of_the_last_step_after_a_setter(sim):
    before = sim.contacts()
    sim.set_velocities(np.ones((len(sim), 3)))
    sim.set_positions(sim.positions + 0.001)
    after = sim.contacts()
    for k in before:
        assert np.array_equal(before[k], after[k]), f"contacts()[{k!r}] changed with the state"
