"""Writes bed.data: the 6,000 beads of scenes/bench_penalty_bed.ron for LAMMPS.

The same lattice as the scene (20 x 20 x 15 sites 4.4 mm apart from
(-0.0418, -0.0418, 0.0025), radius 2 mm, density 2500 kg/m^3, each coordinate
moved by a uniform offset within 4 % of the spacing); the offsets come from
Python's generator, not repose's, so the two beds settle alike but not bead
for bead. Usage: python3 lammps_bed.py [OUT]  (default bed.data).
"""
import random
import sys

SPACING, RADIUS, DENSITY, JITTER = 0.0044, 0.002, 2500.0, 0.04
ORIGIN = (-0.0418, -0.0418, 0.0025)
COUNT = (20, 20, 15)


def main(out):
    rng = random.Random(7)
    amp = JITTER * SPACING
    atoms = []
    for iz in range(COUNT[2]):
        for iy in range(COUNT[1]):
            for ix in range(COUNT[0]):
                x, y, z = (
                    o + i * SPACING + rng.uniform(-amp, amp)
                    for o, i in zip(ORIGIN, (ix, iy, iz))
                )
                k = len(atoms) + 1
                atoms.append(f"{k} 1 {2 * RADIUS} {DENSITY} {x:.9f} {y:.9f} {z:.9f}")
    with open(out, "w") as f:
        f.write(f"bench_penalty_bed for LAMMPS\n\n{len(atoms)} atoms\n1 atom types\n\n")
        f.write("-0.045 0.045 xlo xhi\n-0.045 0.045 ylo yhi\n0.0 0.12 zlo zhi\n\n")
        f.write("Atoms # sphere\n\n" + "\n".join(atoms) + "\n")


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else "bed.data")
