#!/usr/bin/env bash
# Host instructions per emulated frame and per SM83 instruction (callgrind), emurust and PyBoy
# 2.8.1 on the same gameplay states, no frame drawn: the deterministic measure of a speed change
# (wall-clock runs on a shared machine vary by up to 2x). Each count runs FRAMES frames and
# subtracts a 0-frame run of the same command, so start-up and the state load drop out. SM83
# instructions are emurust's count over the same frames (PyBoy runs the same ones: bit-exact).
#
#   bash benches/host_instructions.sh [FRAMES] [ROM@STATE ...]
#
# FRAMES: default 600. ROM@STATE: PyBoy 2.8.1 states to measure; default: our Snake, Runner, Dodge
# and the corpus's Shock Lobster and Libbet from .corpus/states (tools/device_campaign.sh makes
# it; STATES_DIR=DIR takes them from elsewhere, e.g. .ab-states of tools/ab_digests.py), plus
# Pokemon Red's busy states when POKERED=ROM is set (POKERED_STATES=DIR, default states/ beside
# the ROM: overworld_walk, battle, menu). Needs valgrind and, for PyBoy's column, PyBoy 2.8.1.
# Modes: sound off (PyBoy sound_emulated=False), and sound sampled every frame (PyBoy's default).
# Environment: ENGINES (default "emurust pyboy"), PYTHON (default python3), SOUNDS (default
# "off on").
set -euo pipefail
cd "$(dirname "$0")/.."
FRAMES=${1:-600}
shift || true
PY=${PYTHON:-python3}
# The interpreter itself, not a launcher script (pyenv's shims are shell scripts, and valgrind
# would count the shell).
PY=$("$PY" -c 'import sys; print(sys.executable)')
ENGINES=${ENGINES:-emurust pyboy}
SOUNDS=${SOUNDS:-off on}
C=.corpus
S=${STATES_DIR:-$C/states}
command -v valgrind >/dev/null || { echo "valgrind is not installed (apt-get install valgrind)" >&2; exit 2; }
SPECS=("$@")
if [ ${#SPECS[@]} -eq 0 ]; then
    if [ -d "$S" ]; then
        for g in snake runner dodge; do
            st=$(ls "$S/$g.state" "$S/$g"-f*.state 2>/dev/null | head -1 || true)
            [ -n "$st" ] && SPECS+=("games/$g.gb@$st")
        done
        for g in shock-lobster libbet; do
            rom=$(ls "$C/games/$g.gb" "${EMURUST_TEST_ROMS:-../shared/data/roms-dev}/games/$g.gb" 2>/dev/null | head -1 || true)
            st=$(ls "$S/$g.state" "$S/$g"-f*.state 2>/dev/null | head -1 || true)
            [ -n "$rom" ] && [ -n "$st" ] && SPECS+=("$rom@$st")
        done
    fi
    if [ -n "${POKERED:-}" ]; then
        PS=${POKERED_STATES:-$(dirname "$POKERED")/states}
        for st in overworld_walk battle menu; do
            [ -f "$PS/$st.state" ] && SPECS+=("$POKERED@$PS/$st.state")
        done
    fi
fi
[ ${#SPECS[@]} -gt 0 ] || { echo "no states: make .corpus/states, set STATES_DIR or POKERED, or pass ROM@STATE" >&2; exit 2; }
cargo build -q --release -p emurust-core --example run_frames
RUN_FRAMES=target/release/examples/run_frames
PYBOY_FRAMES=$(mktemp --suffix=.py)
trap 'rm -f "$PYBOY_FRAMES"' EXIT
cat > "$PYBOY_FRAMES" <<'EOF'
import sys
from pyboy import PyBoy
rom, state, frames, sound = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4] == "on"
pb = PyBoy(rom, window="null", sound_emulated=sound)
with open(state, "rb") as f:
    pb.load_state(f)
if frames:
    pb.tick(frames, False, sound)
EOF
refs() { valgrind --tool=callgrind --callgrind-out-file=/dev/null "$@" 2>&1 | awk '/refs:/ {gsub(",", "", $4); print $4}'; }
mode_of() { if [ "$1" = off ]; then echo sound-off; else echo sample; fi; }
count() { # engine rom state frames sound(on|off)
    if [ "$1" = emurust ]; then
        refs "$RUN_FRAMES" "$2" "$4" "state=$3" "$(mode_of "$5")"
    else
        refs "$PY" "$PYBOY_FRAMES" "$2" "$3" "$4" "$5"
    fi
}
for spec in "${SPECS[@]}"; do
    rom=${spec%@*}
    state=${spec#*@}
    name="$(basename "$rom" .gb)/$(basename "$state" .state)"
    for sound in $SOUNDS; do
        sm83=$("$RUN_FRAMES" "$rom" "$FRAMES" "state=$state" "$(mode_of "$sound")" | awk '/^sm83 instructions/ {print $3}')
        line="$name sound $sound: sm83 $((sm83 / FRAMES))/frame;"
        for engine in $ENGINES; do
            full=$(count "$engine" "$rom" "$state" "$FRAMES" "$sound")
            base=$(count "$engine" "$rom" "$state" 0 "$sound")
            host=$((full - base))
            line+=" $engine $((host / FRAMES))/frame $(awk -v h="$host" -v s="$sm83" 'BEGIN {printf "%.1f", (s ? h / s : 0)}')/sm83;"
        done
        echo "$line"
    done
done
