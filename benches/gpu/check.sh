#!/usr/bin/env bash
# benches/gpu/check.sh — the hardware check of repose's GPU solver, run on the
# GPU machine from the repository root with the folder benches/gpu/pack.sh
# made (.hw) beside it; it builds nothing.
#
#   bash benches/gpu/check.sh [OUTDIR]          # OUTDIR default: $OUT
#
# Parts, each under its own time limit (seconds; the whole check keeps to
# TOTAL=480): a part that fails or runs out of time is recorded and the next
# one starts.
#   info   20   repose info, nvidia-smi, the pack's manifest        info.txt
#   tests  90   gpu_equivalence and batch (all their tests) and the tests named
#               `gpu` of physics, shapes, cylinder, warm_start,
#               friction_law, with REPOSE_REQUIRE_GPU=1              tests.log
#   bench  90   repose bench --backend gpu --iterations 200, jacobi
#               and apgd, on lattice piles of about 10^4, 10^5 and
#               10^6 contacts (15³, 34³ = scenes/bench_pile_large.ron,
#               70³ spheres)                                         bench.log
#   pile  240   the Tasora & Anitescu 2013 pile at ρ = σ = 0.01 m, APGD
#               to 1e-4 (at most 3000 iterations a step)             pile.log, pile_summary.json
#   sweep rest  the Tasora & Anitescu 2013 sweep ρ = σ = 0 … 0.01 m,
#               6 points, same solver settings; --batch 6 where
#               `repose sweep` has it, else --jobs $SWEEP_JOBS (6)   sweep.log, sweep.csv
#               (ρ and σ move together: `--vary a+b=…` sets both; the
#               solver settings go as --set where `repose sweep` takes
#               it, else as one-valued --vary)
# and summary.txt (also printed): each part's status, time and key figures.
# Those are the 8 files the GPU machine's $OUT may return.
#
# A run or sweep stopped by its limit gets SIGTERM and stops cleanly after
# its current step, writing its outputs (summary.json "stopped":
# "interrupted"; a sweep's table lists the runs that ran).
#
# Environment:
#   PARTS   parts to run, comma-separated (default info,tests,bench,pile,sweep;
#           info always runs: it finds the driver)
#   TOTAL, T_INFO, T_TESTS, T_BENCH, T_PILE, T_SWEEP   limits in seconds
#           (T_SWEEP default: what remains of TOTAL)
#   SWEEP_JOBS   runs at once when `repose sweep` has no --batch (default 6)
#   HW_DIR  the packed folder (default .hw)
#   DRY=1   a rehearsal on a machine without the GPU (lavapipe): accepts a
#           CPU adapter, unpacks the loader into a scratch folder instead of
#           /, and shortens every part (small lattices, short scenes):
#           TOTAL_DRY, T_TESTS_DRY, T_BENCH_DRY, T_PILE_DRY, DRY_DURATION.
set -uo pipefail

OUTDIR=${1:-${OUT:-}}
[ -n "$OUTDIR" ] || { echo "usage: check.sh OUTDIR (or set OUT)" >&2; exit 2; }
mkdir -p "$OUTDIR" || exit 2
OUTDIR=$(cd "$OUTDIR" && pwd)
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
cd "$ROOT" || exit 2
HW_DIR=${HW_DIR:-.hw}
DRY=${DRY:-0}
PARTS=",${PARTS:-info,tests,bench,pile,sweep},"
TOTAL=${TOTAL:-480}
T_INFO=${T_INFO:-20}
T_TESTS=${T_TESTS:-90}
T_BENCH=${T_BENCH:-90}
T_PILE=${T_PILE:-240}
SWEEP_JOBS=${SWEEP_JOBS:-6}
# The solver settings of the Tasora & Anitescu 2013 pile (the run of
# 2026-11-27 on an H100).
SOLVER_SETS=(solver.tolerance=1e-4 solver.max_iterations=3000)
BENCH_ITERATIONS=200
LATTICES=(15 34 70) # 10,575 / 120,224 / 1,038,800 contacts
PILE_EXTRA=()       # more --set PATH=VALUE for the pile and the sweep
if [ "$DRY" = 1 ]; then
    TOTAL=${TOTAL_DRY:-300}
    T_TESTS=${T_TESTS_DRY:-60}
    T_BENCH=${T_BENCH_DRY:-60}
    T_PILE=${T_PILE_DRY:-40}
    BENCH_ITERATIONS=10
    LATTICES=(8 12 15)
    PILE_EXTRA=("duration=${DRY_DURATION:-0.3}") # 60 steps; the sweep's 6 runs as short
fi

INFO=$OUTDIR/info.txt TESTS_LOG=$OUTDIR/tests.log BENCH_LOG=$OUTDIR/bench.log
PILE_LOG=$OUTDIR/pile.log SWEEP_LOG=$OUTDIR/sweep.log SUMMARY=$OUTDIR/summary.txt
WORK=$(mktemp -d "${TMPDIR:-/tmp}/repose-hw.XXXXXX")
declare -A STATUS SECS
ORDER=()

log() { printf '== %4ds %s\n' "$SECONDS" "$*" | tee -a "$INFO"; }
wants() { [[ $PARTS == *",$1,"* ]]; }
left() { echo $((TOTAL - SECONDS)); }

# run_part NAME LIMIT FUNCTION: runs FUNCTION (which runs its commands with
# `lim`) until NAME's deadline; records ok / failed / timed out.
DEADLINE=0
lim() { # lim [--foreground] CMD...: CMD under what is left of the part's deadline
    local t=$((DEADLINE - SECONDS)) fg=()
    # --foreground: the signal goes to CMD alone, once. Without it timeout
    # signals CMD and then its own process group, and repose takes a second
    # SIGTERM for "exit at once" instead of a clean stop.
    if [ "$1" = --foreground ]; then fg=(--foreground); shift; fi
    if [ "$t" -le 0 ]; then
        echo "(not started: the part's time is spent) $*"
        return 124
    fi
    timeout "${fg[@]}" -k 20 "$t" "$@"
}
run_part() {
    local name=$1 limit=$2 fn=$3 t0=$SECONDS rc
    local cap=$(($(left) - 10))
    [ "$limit" -gt "$cap" ] && limit=$cap
    ORDER+=("$name")
    if [ "$limit" -le 0 ]; then
        STATUS[$name]="not run (no time left)"
        SECS[$name]=0
        log "$name: not run, no time left"
        return
    fi
    log "$name: start (limit ${limit}s)"
    DEADLINE=$((SECONDS + limit))
    "$fn"
    rc=$?
    SECS[$name]=$((SECONDS - t0))
    if [ "$rc" -eq 0 ]; then
        STATUS[$name]=ok
    elif [ "$rc" -eq 124 ] || [ "$rc" -eq 137 ] || [ "$SECONDS" -ge "$DEADLINE" ]; then
        STATUS[$name]="TIMED OUT (rc $rc)"
    else
        STATUS[$name]="FAILED (rc $rc)"
    fi
    log "$name: ${STATUS[$name]} after ${SECS[$name]}s"
}

# ---------------------------------------------------------------- set-up
: >"$INFO"
log "check.sh in $ROOT, output $OUTDIR, scratch $WORK, DRY=$DRY, TOTAL=${TOTAL}s"
[ -f "$HW_DIR/repose-hw.tar.xz" ] || { log "FATAL: $HW_DIR/repose-hw.tar.xz is missing: run benches/gpu/pack.sh and carry $HW_DIR"; exit 3; }

log "unpack $HW_DIR/repose-hw.tar.xz"
if command -v xz >/dev/null; then
    xz -dc "$HW_DIR/repose-hw.tar.xz" | tar -C "$WORK" -xf -
else
    python3 -c 'import lzma,sys,shutil; shutil.copyfileobj(lzma.open(sys.argv[1]), sys.stdout.buffer)' \
        "$HW_DIR/repose-hw.tar.xz" | tar -C "$WORK" -xf -
fi || { log "FATAL: cannot unpack the binaries"; exit 3; }
BIN=$WORK/bin
REPOSE=$BIN/repose
cat "$WORK/MANIFEST" >>"$INFO"

# The test binaries find scenes/ and the repose binary through paths fixed
# at compile time (CARGO_MANIFEST_DIR, CARGO_BIN_EXE_repose).
BUILT_ROOT=$(sed -n 's/^built_root=//p' "$WORK/MANIFEST")
if [ -n "$BUILT_ROOT" ] && [ "$BUILT_ROOT" != "$ROOT" ]; then
    if [ ! -e "$BUILT_ROOT" ]; then
        mkdir -p "$(dirname "$BUILT_ROOT")" && ln -s "$ROOT" "$BUILT_ROOT"
        log "linked $BUILT_ROOT -> $ROOT (the tests' compiled-in root)"
    else
        log "WARNING: the tests were built in $BUILT_ROOT, which exists here and is not $ROOT: they read its scenes/"
    fi
fi
if [ "$DRY" = 1 ] && [ -x "$BUILT_ROOT/target/release/repose" ]; then
    log "DRY: keeping the built $BUILT_ROOT/target/release/repose"
else
    mkdir -p "$BUILT_ROOT/target/release" && cp "$REPOSE" "$BUILT_ROOT/target/release/repose"
fi

if [ "$DRY" = 1 ]; then
    log "DRY: the loader debs unpacked into the scratch folder, not /"
    for f in "$HW_DIR"/*.deb; do dpkg -x "$f" "$WORK/root" || log "WARNING: cannot unpack $f"; done
    ls "$WORK"/root/usr/lib/*/libvulkan.so.1 >>"$INFO" 2>&1 || log "WARNING: no libvulkan.so.1 in the debs"
elif ldconfig -p | grep -q 'libvulkan\.so\.1'; then
    log "a Vulkan loader is installed: $(ldconfig -p | grep -m1 'libvulkan\.so\.1')"
else
    log "install the Vulkan loader from $HW_DIR/*.deb"
    for f in "$HW_DIR"/*.deb; do dpkg -x "$f" / || log "WARNING: cannot unpack $f"; done
    ldconfig
fi

export WGPU_BACKEND=vulkan REPOSE_REQUIRE_GPU=1
export XDG_RUNTIME_DIR=${XDG_RUNTIME_DIR:-/tmp/xdg-runtime-$(id -u)}
mkdir -p "$XDG_RUNTIME_DIR" && chmod 700 "$XDG_RUNTIME_DIR"

# ---------------------------------------------------------------- parts
ADAPTER=""
part_info() {
    local out
    out=$(lim "$REPOSE" info 2>&1)
    echo "$out" >>"$INFO"
    if ! grep -qE 'would use: .*(DiscreteGpu|IntegratedGpu|VirtualGpu)' <<<"$out" && [ "$DRY" != 1 ]; then
        local icd=/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json
        log "no hardware adapter; again with VK_DRIVER_FILES=$icd"
        export VK_DRIVER_FILES=$icd
        out=$(lim "$REPOSE" info 2>&1)
        echo "$out" >>"$INFO"
    fi
    ADAPTER=$(sed -n 's/^--backend auto would use: //p' <<<"$out" | tail -n 1)
    {
        echo "--- nvidia-smi"
        lim nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm,clocks.max.memory --format=csv 2>&1
        lim nvidia-smi 2>&1
        echo "--- cpu: $(nproc) threads; $(grep -m1 'model name' /proc/cpuinfo)"
    } >>"$INFO"
    [ -n "$ADAPTER" ] && [ "$ADAPTER" != cpu ]
}

part_tests() {
    local t rc=0
    # The short filtered targets first, so that a hang in gpu_equivalence
    # (the longest, about 10 s on an H100) costs only itself.
    for t in physics shapes cylinder warm_start friction_law batch gpu_equivalence; do
        local filter=gpu
        case $t in gpu_equivalence | batch) filter= ;; esac
        echo "--- $t $filter" >>"$TESTS_LOG"
        # shellcheck disable=SC2086 # an empty filter is no argument
        lim "$BIN/$t" $filter >>"$TESTS_LOG" 2>&1
        local r=$?
        echo "rc=$r" >>"$TESTS_LOG"
        [ "$r" -ne 0 ] && rc=$r
    done
    return "$rc"
}

# lattice N: writes the N³ pile (bench_pile_large.ron scaled: spheres of
# radius 5 mm touching in a box whose walls touch the outer spheres), about
# 3·N²·(N−1) + 5·N² contacts, and prints its path.
lattice() {
    local n=$1 f
    if [ "$n" = 34 ]; then echo scenes/bench_pile_large.ron; return; fi
    f=$WORK/bench_lattice_$n.ron
    awk -v n="$n" 'BEGIN {
        o = -(n - 1) * 0.005; h = n * 0.005; z = 0.3 * n / 34
        printf "Scene(\n    version: 1,\n    name: \"bench_lattice_%d\",\n", n
        printf "    time_step: 2e-3,\n    duration: 0.02,\n"
        printf "    solver: (max_iterations: 100, tolerance: 0.0),\n"
        printf "    output: (frame_interval: 0.02),\n"
        printf "    materials: [\n        (name: \"grain\", friction: 0.5, rolling: 0.0005, spinning: 0.0002, density: 2500.0),\n    ],\n"
        printf "    spheres: [\n        Lattice(origin: (%.6f, %.6f, 0.005), count: (%d, %d, %d), spacing: 0.01, radius: 0.005, material: 0),\n    ],\n", o, o, n, n, n
        printf "    boundaries: [\n        Box(name: \"bin\", center: (0.0, 0.0, %.6f), half_extents: (%.6f, %.6f, %.6f), open_top: true, material: 0),\n    ],\n)\n", z, h, h, z
    }' >"$f"
    echo "$f"
}

part_bench() {
    local n s scene rc=0 r
    for n in "${LATTICES[@]}"; do
        scene=$(lattice "$n")
        for s in jacobi apgd; do
            echo "--- $scene ($n³ spheres) $s" >>"$BENCH_LOG"
            lim "$REPOSE" bench --backend gpu --scene "$scene" --solver "$s" \
                --iterations "$BENCH_ITERATIONS" >>"$BENCH_LOG" 2>&1
            r=$?
            echo "rc=$r" >>"$BENCH_LOG"
            [ "$r" -ne 0 ] && rc=$r
            [ "$r" -eq 124 ] || [ "$r" -eq 137 ] && return "$r"
        done
    done
    return "$rc"
}

part_pile() {
    local sets=() p r
    for p in materials.0.rolling=0.01 materials.0.spinning=0.01 "${SOLVER_SETS[@]}" "${PILE_EXTRA[@]}"; do
        sets+=(--set "$p")
    done
    echo "--- repose run scenes/repose_tasora2013.ron --backend gpu --solver apgd ${sets[*]} --no-frames" >>"$PILE_LOG"
    lim --foreground "$REPOSE" run scenes/repose_tasora2013.ron --backend gpu --solver apgd "${sets[@]}" \
        --no-frames --out "$WORK/seed000" >>"$PILE_LOG" 2>&1
    r=$?
    echo "rc=$r" >>"$PILE_LOG"
    [ -f "$WORK/seed000/summary.json" ] && cp "$WORK/seed000/summary.json" "$OUTDIR/pile_summary.json"
    return "$r"
}

part_sweep() {
    local help args=() p r
    help=$("$REPOSE" sweep --help 2>&1)
    # ρ and σ together: `a+b` sets both paths to the same value.
    args=(--vary materials.0.rolling+materials.0.spinning=0:0.01:6)
    # The solver settings: --set where the sweep has it, else --vary with one value.
    for p in "${SOLVER_SETS[@]}" "${PILE_EXTRA[@]}"; do
        if grep -q -- '--set' <<<"$help"; then args+=(--set "$p"); else args+=(--vary "$p"); fi
    done
    if grep -q -- '--batch' <<<"$help"; then
        args+=(--batch 6)
    else
        args+=(--jobs "$SWEEP_JOBS")
    fi
    echo "--- repose sweep scenes/repose_tasora2013.ron ${args[*]} --backend gpu" >>"$SWEEP_LOG"
    lim --foreground "$REPOSE" sweep scenes/repose_tasora2013.ron "${args[@]}" --backend gpu \
        --out "$WORK/sweep" >>"$SWEEP_LOG" 2>&1
    r=$?
    echo "rc=$r" >>"$SWEEP_LOG"
    [ -f "$WORK/sweep/sweep.csv" ] && cp "$WORK/sweep/sweep.csv" "$OUTDIR/sweep.csv"
    return "$r"
}

run_part info "$T_INFO" part_info
if [[ ${STATUS[info]} != ok ]]; then
    log "FATAL: no GPU adapter (adapter: '${ADAPTER:-none}'); the other parts are not run"
    PARTS=",info,"
fi
wants tests && run_part tests "$T_TESTS" part_tests
wants bench && run_part bench "$T_BENCH" part_bench
wants pile && run_part pile "$T_PILE" part_pile
wants sweep && run_part sweep "${T_SWEEP:-$(($(left) - 15))}" part_sweep

# ---------------------------------------------------------------- summary
# Keep every returned file under 16 MiB: the head and tail of a long log.
for f in "$OUTDIR"/*; do
    if [ "$(stat -c %s "$f")" -gt $((15 * 1024 * 1024)) ]; then
        { head -c 7000000 "$f"; printf '\n[... cut by check.sh ...]\n'; tail -c 7000000 "$f"; } >"$WORK/cut" && mv "$WORK/cut" "$f"
    fi
done
{
    echo "repose hardware check: $(sed -n 's/^commit=//p' "$WORK/MANIFEST") ($(sed -n 's/^uncommitted=//p' "$WORK/MANIFEST")), DRY=$DRY"
    echo "adapter: ${ADAPTER:-none}${VK_DRIVER_FILES:+ (VK_DRIVER_FILES=$VK_DRIVER_FILES)}"
    for p in "${ORDER[@]}"; do printf '%-6s %-22s %4ss\n' "$p" "${STATUS[$p]}" "${SECS[$p]}"; done
    echo "total ${SECONDS}s"
    if [ -f "$TESTS_LOG" ]; then
        echo "tests: $(grep -cE '^test .* ok$' "$TESTS_LOG") passed, $(grep -cE '^test .* FAILED$' "$TESTS_LOG") failed"
        grep -E '^test .* FAILED$' "$TESTS_LOG" | sed 's/^/  /'
        grep -E '^--- |^rc=' "$TESTS_LOG" | paste -sd' ' | sed 's/ rc=/: rc=/g; s/^/  /'
    fi
    if [ -f "$BENCH_LOG" ]; then
        echo "bench:"
        grep -E 'contact-iterations/s' "$BENCH_LOG" | sed -E 's/^[^:]*\), //; s/^/  /'
    fi
    if [ -f "$PILE_LOG" ]; then
        echo "pile:"
        grep -E '^(repose_tasora2013:|solver:|angle of repose|settled)|interrupted|^rc=' "$PILE_LOG" | cut -c1-240 | sed 's/^/  /'
    fi
    if [ -f "$SWEEP_LOG" ]; then
        echo "sweep: $(head -n 1 "$SWEEP_LOG" | sed 's/^--- //')"
        [ -f "$OUTDIR/sweep.csv" ] && echo "  sweep.csv: $(($(wc -l <"$OUTDIR/sweep.csv") - 1)) rows" \
            && cut -d, -f1-12 "$OUTDIR/sweep.csv" | sed 's/^/  /'
        grep -E 'repose::sweep\]|interrupted|^rc=' "$SWEEP_LOG" | tail -n 4 | cut -c1-240 | sed 's/^/  /'
    fi
} >"$SUMMARY"
echo
cat "$SUMMARY"
rm -rf "$WORK"
echo "outputs:" "$OUTDIR"/*
