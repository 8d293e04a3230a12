"""Pour a pile of glass beads, measure its angle of repose, then sweep the
beads' rolling resistance over four values and plot the angle against it.

    pip install ./python matplotlib
    python examples/python/rolling_sweep.py            # 1,000 beads, about 2 min on 2 cores
    python examples/python/rolling_sweep.py --beads 500 --out out/quick

Writes <out>/pile/ (one run's outputs), <out>/sweep/ (the sweep's runs and
sweep.csv) and <out>/angle_vs_rolling.png.
"""

import argparse
from pathlib import Path

import matplotlib

matplotlib.use("Agg")  # files only: no window needed
import matplotlib.pyplot as plt

import repose

ROOT = Path(__file__).resolve().parents[2]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--beads", type=int, default=1000, help="beads poured (default 1000)")
    ap.add_argument("--out", type=Path, default=Path("out/python_example"), help="output directory")
    ap.add_argument("--jobs", type=int, default=2, help="sweep runs at a time")
    args = ap.parse_args()

    # The demo pile of the README, with the number of beads as asked.
    scene = repose.Scene.load(ROOT / "scenes" / "pile.ron", set={"spheres.0.count": args.beads})

    # One run: pour, settle, measure (the scene stops once it has settled).
    summary = repose.run(scene, out=args.out / "pile", overwrite=True, frames=False)
    angle = summary["extra"]["angle_of_repose"]
    solver = summary["solver"]
    print(
        f"one pile: {angle['angle_deg']:.1f}° ± {angle['angle_stderr_deg']:.1f}° after {summary['steps']} steps; "
        f"{summary['steps'] - solver['steps_not_converged']} of {summary['steps']} steps met the solver's tolerance"
    )

    # Its heap measured again from the files, as `repose measure` does.
    again = repose.measure(args.out / "pile")
    print(f"measured again from final.csv: {again['angle_deg']:.1f}°")

    # Rolling (and spinning) resistance over four values, R/10 to 2R/5.
    rhos = [0.0005, 0.001, 0.0015, 0.002]
    rows = repose.sweep(
        scene,
        {"materials.0.rolling+materials.0.spinning": rhos},
        jobs=args.jobs,
        out=args.out / "sweep",
    )
    failed = [r for r in rows if r["error"]]
    if failed:
        raise SystemExit(f"{len(failed)} runs failed: {[r['error'] for r in failed]}")

    rho = [1000 * r["materials.0.rolling+materials.0.spinning"] for r in rows]
    deg = [r["angle_deg"] for r in rows]
    err = [r["angle_stderr_deg"] for r in rows]
    for x, y, e in zip(rho, deg, err):
        print(f"rho = {x:.2f} mm: {y:.1f}° ± {e:.1f}°")

    fig, ax = plt.subplots(figsize=(5, 3.5), dpi=120)
    ax.errorbar(rho, deg, yerr=err, marker="o", capsize=3)
    ax.set_xlabel("rolling resistance ρ (mm)")
    ax.set_ylabel("angle of repose (°)")
    ax.set_title(f"{args.beads} glass beads, R = 5 mm")
    ax.grid(alpha=0.3)
    fig.tight_layout()
    png = args.out / "angle_vs_rolling.png"
    fig.savefig(png)
    print(png)


if __name__ == "__main__":
    main()
