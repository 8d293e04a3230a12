"""Shared fixtures: the repository's paths and the command-line binary."""

import os
import shutil
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
SCENES = ROOT / "scenes"
BAD = ROOT / "tests" / "data" / "bad"


@pytest.fixture(scope="session")
def cli() -> str:
    """The `repose` binary the Python module is compared with: $REPOSE_BIN,
    else the repository's release build. Missing is a failure, not a skip:
    build it with `cargo build --release`."""
    exe = os.environ.get("REPOSE_BIN") or str(ROOT / "target" / "release" / "repose")
    if not Path(exe).is_file():
        found = shutil.which("repose")
        if found is None:
            pytest.fail(f"no repose binary at {exe} (run `cargo build --release` or set REPOSE_BIN)")
        exe = found
    return exe
