"""The GPU backend from Python (lavapipe in CI, which sets
REPOSE_REQUIRE_GPU=1; elsewhere skipped, visibly, when no adapter exists)."""

import os

import numpy as np
import pytest

import repose

from conftest import SCENES


def gpu_simulation(**kw):
    try:
        return repose.Simulation(SCENES / "column.ron", backend="gpu", **kw)
    except repose.RunError as e:
        if "no GPU adapter" in str(e) and not os.environ.get("REPOSE_REQUIRE_GPU"):
            pytest.skip(f"SKIPPED: no GPU adapter ({e}); set REPOSE_REQUIRE_GPU=1 to make this a failure")
        raise


def test_the_gpu_backend_steps_a_column_as_the_f32_cpu_mirror_does():
    # The f32 CPU backend runs the GPU's records and operations; the two
    # differ by the order of f32 sums and fused multiply-adds, i.e. by a
    # few f32 roundings (6e-8 relative) of each step's velocity change
    # (g h = 0.01 m/s): < 1e-8 m/s a step, < 1e-8 m over 100 steps of 1 ms.
    gpu = gpu_simulation(solver="jacobi")
    cpu = repose.Simulation(SCENES / "column.ron", backend="cpu-f32", solver="jacobi")
    assert gpu.backend.startswith("gpu"), gpu.backend
    gpu.step(100)
    cpu.step(100)
    diff = np.abs(gpu.positions - cpu.positions).max()
    assert diff <= 1e-8, f"GPU and f32 CPU positions differ by {diff:.3e} m after 100 steps (bound 1e-8 m)"
    assert gpu.last_step["contacts"] == cpu.last_step["contacts"]
