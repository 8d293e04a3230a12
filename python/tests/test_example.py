"""The Python example runs as the docs say and shows what it should: the
angle of repose rising with rolling resistance."""

import math
import subprocess
import sys

import repose

from conftest import ROOT


def test_the_example_pours_measures_sweeps_and_plots(tmp_path):
    # 500 beads instead of the example's 1,000: the same code in 20 s.
    done = subprocess.run(
        [sys.executable, str(ROOT / "examples" / "python" / "rolling_sweep.py"), "--beads", "500", "--out", str(tmp_path)],
        capture_output=True,
        text=True,
        timeout=900,
    )
    assert done.returncode == 0, done.stdout + done.stderr[-4000:]
    png = tmp_path / "angle_vs_rolling.png"
    assert png.is_file() and png.stat().st_size > 5000, "the plot was not written"
    rows = repose.read_table(tmp_path / "sweep" / "sweep.csv")
    assert len(rows) == 4 and all(r["settled"] for r in rows), rows
    lo, hi = rows[0], rows[-1]
    # rho from R/10 to 2R/5: the pile stands steeper (tests/repose_trend.rs
    # holds the same law on converged 1,000-bead piles), by more than three
    # standard errors of the difference.
    se = math.hypot(lo["angle_stderr_deg"], hi["angle_stderr_deg"])
    rise = hi["angle_deg"] - lo["angle_deg"]
    assert rise > 3 * se, f"angle {lo['angle_deg']:.2f}° at rho = R/10 and {hi['angle_deg']:.2f}° at 2R/5: rise {rise:.2f}° not above 3 x {se:.2f}°"
