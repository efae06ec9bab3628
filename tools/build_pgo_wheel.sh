#!/usr/bin/env bash
# Build an emurust wheel with profile-guided optimisation (PGO), as CPython's
# --enable-optimizations builds do: an instrumented wheel runs a training workload
# (tools/pgo_train.py: our own ROMs and games through the PyBoy facade and the batched
# environments), llvm-profdata merges its counts, and `maturin build --release` compiles again
# with them. The emulator is the same (tests/test_pgo_build.py compares the wheel with the plain
# build, screens, samples, RAM and save states; tools/ab_digests.py does so over 220 runs); only
# the code's layout and inlining follow the counts. Opt-in, for the machine it runs on: on the
# development machine (AMD EPYC) it ran Pokemon Red 5-16% faster than the plain wheel (gameplay
# states; v2's batched task +5%), on the benchmark device (Intel Xeon) no faster (median 1.01x
# over 56 side-by-side pairs; benches/results/device-h200-s20/). `pip install .` stays plain.
#
#   bash tools/build_pgo_wheel.sh [OUT_DIR]        (default target/wheels-pgo)
#
# Needs: a Python with numpy and gymnasium (PYTHON, default python3); maturin (MATURIN, else the
# one on PATH, else PYTHON's module); the Rust toolchain's llvm-profdata (rustup component add
# llvm-tools; this script adds it if missing).
# Takes 2-3 minutes on 2 cores (two release builds). Separate target directories keep the plain build's cache.
set -euo pipefail
cd "$(dirname "$0")/.."
OUT=${1:-target/wheels-pgo}
PY=${PYTHON:-python3}
# maturin: $MATURIN (a command, words split), else on PATH, else the Python's module.
if [ -n "${MATURIN:-}" ]; then
    read -r -a MAT <<< "$MATURIN"
elif command -v maturin >/dev/null 2>&1; then
    MAT=(maturin)
else
    MAT=("$PY" -m maturin)
fi

profdata() {
    local sysroot
    sysroot=$(rustc --print sysroot)
    ls "$sysroot"/lib/rustlib/*/bin/llvm-profdata 2>/dev/null | head -1
}
PROFDATA=$(profdata)
if [ -z "$PROFDATA" ]; then
    rustup component add llvm-tools >&2
    PROFDATA=$(profdata)
fi
[ -n "$PROFDATA" ] || { echo "llvm-profdata not found: rustup component add llvm-tools" >&2; exit 2; }

WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT

echo "1/4 instrumented wheel" >&2
RUSTFLAGS="-Cprofile-generate=$WORK/raw" CARGO_TARGET_DIR=target/pgo-generate \
    "${MAT[@]}" build --release -q -o "$WORK/gen" >&2

echo "2/4 training run (tools/pgo_train.py)" >&2
"$PY" -m pip install -q --no-deps --target "$WORK/site" "$WORK"/gen/emurust-*.whl >&2
# The instrumented extension ahead of any installed emurust; one profile file per process.
PYTHONPATH="$WORK/site" LLVM_PROFILE_FILE="$WORK/raw/emurust-%p-%m.profraw" "$PY" tools/pgo_train.py >&2
ls "$WORK"/raw/*.profraw >/dev/null 2>&1 || { echo "the training run wrote no profile" >&2; exit 1; }

echo "3/4 merge" >&2
"$PROFDATA" merge -o "$WORK/emurust.profdata" "$WORK/raw"

echo "4/4 optimised wheel" >&2
mkdir -p "$OUT"
RUSTFLAGS="-Cprofile-use=$WORK/emurust.profdata" CARGO_TARGET_DIR=target/pgo-use \
    "${MAT[@]}" build --release -q -o "$OUT" >&2
ls "$OUT"/emurust-*.whl
