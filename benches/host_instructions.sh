#!/usr/bin/env bash
# Host instructions per emulated frame (callgrind), emurust and PyBoy 2.8.1 on the same gameplay
# states, no frame drawn: the deterministic measure of a speed change (wall-clock runs on a shared
# machine vary by up to 2x). Each count runs FRAMES frames and subtracts a 0-frame run of the same
# command, so start-up and the state load drop out.
#
#   bash benches/host_instructions.sh [FRAMES]     (default 600; needs valgrind, PyBoy 2.8.1 and
#                                                  .corpus/ from tools/device_campaign.sh)
# Modes: sound off (PyBoy sound_emulated=False), and sound sampled every frame (PyBoy's default).
# Environment: ENGINES (default "emurust pyboy"), PYTHON (default python3).
set -euo pipefail
cd "$(dirname "$0")/.."
FRAMES=${1:-600}
PY=${PYTHON:-python3}
ENGINES=${ENGINES:-emurust pyboy}
C=.corpus
command -v valgrind >/dev/null || { echo "valgrind is not installed (apt-get install valgrind)" >&2; exit 2; }
[ -d "$C/states" ] || { echo "$C/states is missing (tools/device_campaign.sh makes it)" >&2; exit 2; }
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
count() { # engine rom state frames sound(on|off)
    if [ "$1" = emurust ]; then
        local mode=sample
        [ "$5" = off ] && mode=sound-off
        refs "$RUN_FRAMES" "$2" "$4" "state=$3" "$mode"
    else
        refs "$PY" "$PYBOY_FRAMES" "$2" "$3" "$4" "$5"
    fi
}
for spec in games/snake.gb@snake games/runner.gb@runner games/dodge.gb@dodge \
    $C/games/shock-lobster.gb@shock-lobster $C/games/libbet.gb@libbet; do
    rom=${spec%@*}
    state=$C/states/${spec#*@}.state
    for sound in off on; do
        line="$(basename "$rom" .gb) sound $sound:"
        for engine in $ENGINES; do
            full=$(count "$engine" "$rom" "$state" "$FRAMES" "$sound")
            base=$(count "$engine" "$rom" "$state" 0 "$sound")
            line+=" $engine $(( (full - base) / FRAMES ))"
        done
        echo "$line host instructions per frame"
    done
done
