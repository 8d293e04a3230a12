#!/usr/bin/env bash
# Counts the instructions a particle-step of the penalty bench takes
# (valgrind's callgrind, one thread): the same count on every run, where
# timings on a shared virtual machine scatter by ±30 % (docs/penalty.md, "Speed").
# Two runs at once, 100 warm-up steps then 1 and then 5 timed steps; their
# difference is 4 timed steps without the warm-up. Prints the count per
# particle-step and the functions that took the most of the difference.
#   usage: benches/count.sh [REPOSE...]   (from the repository root;
#          default target/release/repose; several binaries are counted in
#          turn, for a before/after)
#   env:   WARM (default 100), SCENE (default the bench bed)
set -euo pipefail
warm=${WARM:-100}
scene=${SCENE:-scenes/bench_penalty_bed.ron}
for tool in valgrind callgrind_annotate python3; do
  if ! command -v "$tool" > /dev/null; then
    echo "count.sh: $tool not found (Debian: apt install valgrind python3)" >&2
    exit 1
  fi
done
[ $# -eq 0 ] && set -- target/release/repose
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
for bin in "$@"; do
  if [ ! -x "$bin" ]; then
    echo "count.sh: $bin is not an executable (cargo build --release?)" >&2
    exit 1
  fi
  for steps in 1 5; do
    RAYON_NUM_THREADS=1 valgrind --tool=callgrind --callgrind-out-file="$work/cg.$steps" \
      "$bin" bench --formulation penalty --scene "$scene" --warm-up "$warm" --steps "$steps" \
      --json > "$work/bench.$steps" 2> "$work/log.$steps" &
  done
  wait
  for steps in 1 5; do
    callgrind_annotate --auto=no --threshold=100 "$work/cg.$steps" > "$work/ann.$steps" 2> /dev/null
  done
  python3 - "$bin" "$work" <<'PY'
import json, re, sys
binary, work = sys.argv[1], sys.argv[2]
def total(steps):
    for line in open(f"{work}/log.{steps}"):
        m = re.search(r"Collected : (\d+)", line)
        if m:
            return int(m.group(1))
    sys.exit(f"count.sh: no instruction count in {work}/log.{steps}")
def functions(steps):
    # The table of self counts by file:function (inlined code is counted
    # under the file it came from: summed here by function).
    out, body = {}, False
    for line in open(f"{work}/ann.{steps}"):
        if "file:function" in line:
            body = True
            continue
        m = re.match(r"\s*([\d,]+)\s+\(\s*[\d.]+%\)\s+(.*)", line)
        if body and m:
            name = re.sub(r" \[[^]]*\]$", "", m.group(2).split(":", 1)[-1])
            out[name] = out.get(name, 0) + int(m.group(1).replace(",", ""))
    return out
bench = {s: json.load(open(f"{work}/bench.{s}")) for s in (1, 5)}
particle_steps = bench[5]["particles"] * (bench[5]["substeps"] - bench[1]["substeps"])
count = total(5) - total(1)
print(f"{binary}: {count / particle_steps:.1f} instructions a particle-step "
      f"({count / 1e6:.1f}e6 over {particle_steps} particle-steps, "
      f"{bench[5]['particles']} particles)")
f1, f5 = functions(1), functions(5)
rows = sorted(((f5.get(k, 0) - f1.get(k, 0), k) for k in f5), reverse=True)
for n, name in rows[:8]:
    print(f"  {100 * n / count:5.1f} %  {name[:110]}")
PY
done
