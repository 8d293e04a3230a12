#!/usr/bin/env bash
# benches/gpu/pack.sh — prepare the hardware check (benches/gpu/check.sh) on a
# machine with cargo and network to the package registries, so that the GPU
# machine builds nothing.
#
#   bash benches/gpu/pack.sh            # writes .hw/ in the repository root
#
# .hw/ (git-ignored through .git/info/exclude, never tracked) then holds:
#   repose-hw.tar.xz  the stripped release binary `repose` and the test
#                     binaries gpu_equivalence, batch, physics, shapes,
#                     cylinder, warm_start and friction_law (bin/), and MANIFEST;
#   MANIFEST          the same manifest in plain text: the build's root
#                     directory (the tests find scenes/ and the binary through
#                     CARGO_MANIFEST_DIR, fixed at compile time), commit,
#                     uncommitted changes, toolchain, checksums;
#   libvulkan1_*.deb  the Vulkan loader for amd64 (the GPU machine has the
#                     NVIDIA driver but no loader).
# scenes/, shaders/ and tests/ are not packed: they are tracked files and
# travel with the working tree. Nothing the six test targets open at run time
# lies outside the repository (scenes/*.ron through CARGO_MANIFEST_DIR, the
# repose binary through CARGO_BIN_EXE_repose; shaders are compiled in).
#
# Environment: HW_DIR (default .hw), SKIP_DEBS=1 keeps the .deb files already
# in HW_DIR. x86-64 only: the binaries must run on the x86-64 GPU machine.
set -euo pipefail

step() { printf '\n== pack: %s\n' "$*"; }
die() { printf 'pack.sh: FAILED: %s\n' "$*" >&2; exit 1; }

ROOT=$(git -C "$(dirname "${BASH_SOURCE[0]}")" rev-parse --show-toplevel) || die "not inside the repository"
cd "$ROOT"
HW_DIR=${HW_DIR:-.hw}
TESTS=(gpu_equivalence batch physics shapes cylinder warm_start friction_law)
# The GPU machine's whole working tree travels within 64 MiB; this folder
# shares that limit with the tracked files.
MAX_BYTES=$((30 * 1024 * 1024))

[ "$(uname -m)" = x86_64 ] || die "this machine is $(uname -m): the GPU machine is x86-64, build there or on an x86-64 machine"
for t in cargo jq xz strip sha256sum apt-get tar; do
    command -v "$t" >/dev/null || die "$t is not installed"
done

step "ignore $HW_DIR/ through .git/info/exclude (not .gitignore: nothing of it is tracked)"
GIT_DIR=$(git rev-parse --git-common-dir)
mkdir -p "$GIT_DIR/info"
grep -qxF "/$HW_DIR/" "$GIT_DIR/info/exclude" 2>/dev/null || echo "/$HW_DIR/" >>"$GIT_DIR/info/exclude"
git check-ignore -q "$HW_DIR/x" || die "$HW_DIR/ is not ignored by git"

step "cargo build --release (the repose binary; waits for another build's lock)"
cargo build --release

step "cargo test --release --no-run --test ${TESTS[*]} (their paths from cargo's JSON messages)"
JSON=$(mktemp)
STAGE=$(mktemp -d)
trap 'rm -rf "$JSON" "$STAGE"' EXIT
targets=()
for t in "${TESTS[@]}"; do targets+=(--test "$t"); done
cargo test --release --no-run --message-format=json "${targets[@]}" >"$JSON"
mkdir -p "$STAGE/bin"
for t in "${TESTS[@]}"; do
    exe=$(jq -r --arg t "$t" 'select(.reason == "compiler-artifact" and .profile.test == true
            and .target.name == $t and (.target.kind | index("test"))) | .executable // empty' "$JSON" | tail -n 1)
    if [ -z "$exe" ] || [ ! -x "$exe" ]; then die "no test executable for the test target $t"; fi
    echo "$t <- $exe"
    cp "$exe" "$STAGE/bin/$t"
done
bin=$(jq -r 'select(.reason == "compiler-artifact" and .profile.test == false
        and .target.name == "repose" and (.target.kind | index("bin"))) | .executable // empty' "$JSON" | tail -n 1)
[ -n "$bin" ] || bin=target/release/repose
[ -x "$bin" ] || die "no release binary $bin"
echo "repose <- $bin"
cp "$bin" "$STAGE/bin/repose"

step "strip the binaries"
strip --strip-unneeded "$STAGE"/bin/*
"$STAGE/bin/repose" --version >/dev/null || die "the stripped repose does not start"
ls -l "$STAGE/bin"

step "write the manifest"
{
    echo "built_root=$ROOT"
    echo "commit=$(git rev-parse HEAD)"
    echo "uncommitted=$(git status --porcelain --untracked-files=no | wc -l) tracked files differ from the commit"
    echo "built_at=$(date -u +%Y-%m-%dT%H:%M:%SZ)"
    echo "rustc=$(rustc --version)"
    echo "rustflags=${RUSTFLAGS:-(.cargo/config.toml: target-cpu=x86-64-v3)}"
    echo "tests=${TESTS[*]}"
    (cd "$STAGE/bin" && sha256sum -- *)
} >"$STAGE/MANIFEST"
cat "$STAGE/MANIFEST"

step "pack $HW_DIR/repose-hw.tar.xz (xz -9 -T0)"
mkdir -p "$HW_DIR"
rm -f "$HW_DIR/repose-hw.tar.xz" "$HW_DIR/MANIFEST"
tar -C "$STAGE" -cf - MANIFEST bin | xz -9 -T0 >"$HW_DIR/repose-hw.tar.xz.part"
mv "$HW_DIR/repose-hw.tar.xz.part" "$HW_DIR/repose-hw.tar.xz"
cp "$STAGE/MANIFEST" "$HW_DIR/MANIFEST"
xz -t "$HW_DIR/repose-hw.tar.xz" || die "the tarball does not read back"

if [ "${SKIP_DEBS:-0}" = 1 ] && ls "$HW_DIR"/libvulkan1_*.deb >/dev/null 2>&1; then
    step "keep the Vulkan loader already in $HW_DIR (SKIP_DEBS=1)"
else
    step "download the Vulkan loader for amd64 (apt-get download libvulkan1)"
    LISTS=$(mktemp -d)
    mkdir -p "$LISTS/partial"
    o=(-oAPT::Architecture=amd64 -oAPT::Architectures=amd64 "-oDir::State::Lists=$LISTS")
    apt-get "${o[@]}" update >/dev/null || die "apt-get update (amd64 lists) failed"
    rm -f "$HW_DIR"/*.deb
    (cd "$HW_DIR" && apt-get "${o[@]}" download libvulkan1) || die "apt-get download libvulkan1 failed"
    rm -rf "$LISTS"
fi
for f in "$HW_DIR"/*.deb; do
    dpkg-deb -c "$f" | grep -q 'libvulkan\.so\.1' || die "$f holds no libvulkan.so.1"
    echo "$(basename "$f"): $(dpkg-deb -f "$f" Package Version Architecture | tr '\n' ' ')"
done

step "sizes"
du -b "$HW_DIR"/* | sort -n
total=$(du -cb "$HW_DIR"/* | tail -n 1 | cut -f1)
tree=$(git ls-files -z --cached --others --exclude-standard | xargs -0 du -cb 2>/dev/null | tail -n 1 | cut -f1)
awk -v d="$HW_DIR" -v a="$total" -v b="$tree" 'BEGIN { printf "total %s: %.1f MiB (the working tree beside it: %.1f MiB; 64 MiB may travel in all)\n", d, a / 1048576, b / 1048576 }'
[ "$total" -le "$MAX_BYTES" ] || die "$HW_DIR is over $((MAX_BYTES / 1048576)) MiB"
[ $((total + tree)) -lt $((60 * 1024 * 1024)) ] || die "$HW_DIR and the tracked files come near the 64 MiB that may travel"
echo "pack: done. On the GPU machine: bash benches/gpu/check.sh \$OUT (carry [\"$HW_DIR\"])"
