#!/usr/bin/env bash
# Issue 23's busy-game ratio on one core, in one device call (~4 min): emurust against PyBoy
# 2.8.1 in the same run, no frame drawn, on Pokemon Red's gameplay states (battle, menu,
# overworld_walk) and our Dodge, sound off and on. The figure to watch is emurust's frames/s
# over PyBoy's per state (the target: no game below 2x, with a margin).
# Carry .whl (see benches/README-device.md), .corpus (for Dodge's state) and .pokered
# (pokered.gb and states/; never committed). POKERED=ROM, POKERED_STATES=DIR override those.
# Results in $OUT: pokered_ratio.log, pokered_ratio.json, pokered_ratio.png.
set -uo pipefail
cd "$(dirname "$0")/.."
. benches/device_setup.sh
LOG="$OUT/pokered_ratio.log"
{
    date -Is
    grep -m1 "model name" /proc/cpuinfo
    echo "nproc $(nproc); load $(cat /proc/loadavg)"
    git log -1 --format='commit %h %s' 2>/dev/null || true
} | tee "$LOG"
ROMS="games/dodge.gb@.corpus/states/dodge.state"
POKERED=${POKERED:-.pokered/pokered.gb}
PS=${POKERED_STATES:-$(dirname "$POKERED")/states}
[ -f "$POKERED" ] || { echo "no Pokemon Red ROM at $POKERED (carry .pokered)" | tee -a "$LOG"; exit 2; }
for st in battle menu overworld_walk; do
    ROMS+=",$POKERED@$PS/$st.state"
done
timeout ${CMP_LIMIT:-540} $PY -m emurust.bench --engines emurust,pyboy --frames ${CMP_FRAMES:-3000} \
    --repeat ${CMP_REPEAT:-3} --roms "$ROMS" --patterns no_render --sound ${SOUNDS:-off,on} \
    --timeout 60 --json "$OUT/pokered_ratio.json" --png "$OUT/pokered_ratio.png" 2>&1 | grep -v SDL2 | tee -a "$LOG"
