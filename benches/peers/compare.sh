#!/usr/bin/env bash
# Times repose and LAMMPS on the penalty bench bed in one sitting, runs
# interleaved (this machine's speed drifts between sittings; the ratio
# holds): repose on 1 and 2 threads, LAMMPS on 1 and 2 MPI ranks, ROUNDS
# rounds (default 5), then each one's median in particle-steps per second.
#   usage: benches/peers/compare.sh [ROUNDS]   (from the repository root)
#   env:   REPOSE (default target/release/repose), LMP (default lmp),
#          MPIEXEC (default mpiexec)
# README.md here says how to install LAMMPS.
set -euo pipefail
rounds=${1:-5}
repose=${REPOSE:-target/release/repose}
lmp=${LMP:-lmp}
mpiexec=${MPIEXEC:-mpiexec}
here=$(cd "$(dirname "$0")" && pwd)
for tool in "$repose" "$lmp" "$mpiexec"; do
  if ! command -v "$tool" > /dev/null; then
    echo "compare.sh: $tool not found (cargo build --release for repose; $here/README.md for LAMMPS and mpiexec)" >&2
    exit 1
  fi
done
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
python3 "$here/lammps_bed.py" "$work/bed.data"
cp "$here/lammps_bed.in" "$work/"
results="$work/results"
for _ in $(seq "$rounds"); do
  for t in 1 2; do
    rate=$(RAYON_NUM_THREADS=$t "$repose" bench --formulation penalty --json 2>/dev/null |
      python3 -c 'import json, sys; print(json.load(sys.stdin)["particle_steps_per_second"])')
    echo "repose-${t}-threads $rate" >> "$results"
  done
  for n in 1 2; do
    secs=$(cd "$work" && "$mpiexec" -n "$n" "$lmp" -in lammps_bed.in -var warm 9300 -log none |
      awk '/^Loop time/ { s = $4 } END { print s }')
    if [ -z "$secs" ]; then
      echo "compare.sh: LAMMPS on $n rank(s) printed no loop time; run it by hand in $here to see why" >&2
      exit 1
    fi
    echo "lammps-${n}-ranks $(python3 -c "print(1860 * 6000 / $secs)")" >> "$results"
  done
done
python3 - "$results" <<'PY'
import collections, statistics, sys
runs = collections.defaultdict(list)
for line in open(sys.argv[1]):
    name, rate = line.split()
    runs[name].append(float(rate) / 1e6)
for name, rates in runs.items():
    listed = " ".join(f"{r:.2f}" for r in rates)
    print(f"{name:18s} median {statistics.median(rates):6.2f}e6 particle-steps/s  ({listed})")
PY
