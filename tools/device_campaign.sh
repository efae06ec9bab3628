#!/usr/bin/env bash
# The equivalence campaign at full size, on a many-core machine (the lent 16-CPU device): every
# roms-dev ROM x {DMG, CGB} x {sound on, off} x 3 seeds x 10,000 frames, the games with 3 button
# policies and from mid-game PyBoy states, our own ROMs, and 100,000-frame soaks.
#
#   OUT=results-dir CORPUS=path/to/roms-dev BUDGET=seconds bash tools/device_campaign.sh [STAGE...]
#
# Needs emurust and pyboy==2.8.1 importable (on the device: wheels installed into PYTHONPATH).
# Every stage appends one JSON line per run to $OUT/STAGE.jsonl and skips runs already there, so
# a run cut by BUDGET resumes when called again with the same $OUT. Stages run in order and stop
# starting new ones when BUDGET seconds have passed.
set -uo pipefail
cd "$(dirname "$0")/.."
OUT=${OUT:-campaign-out}
CORPUS=${CORPUS:-../shared/data/roms-dev}
JOBS=${JOBS:-$(nproc)}
BUDGET=${BUDGET:-3600}
T0=$(date +%s)
mkdir -p "$OUT"

stage() {
    local name=$1
    shift
    local left=$((BUDGET - ($(date +%s) - T0)))
    if ((left < 30)); then
        echo "== $name: not started (budget spent)"
        return 0
    fi
    echo "== $name (t=$(($(date +%s) - T0)) s, $left s left, $JOBS jobs)"
    timeout --kill-after=5 "$left" python3 tools/equiv_campaign.py "$@" --out "$OUT/$name.jsonl" --jobs "$JOBS" \
        2>&1 | grep -v "SDL2" | grep -v ": ok (" | tail -n 40
    echo "== $name: $(wc -l < "$OUT/$name.jsonl" 2>/dev/null || echo 0) runs recorded"
}

STAGES=${*:-corpus games own ours soak}
for s in $STAGES; do
    case $s in
        # every community ROM, both hardware, both sound modes, 3 seeds, 10,000 frames
        corpus) stage corpus "$CORPUS" --skip games/ --frames 10000 --seeds 0,1,2 --policies random ;;
        # the homebrew games: 3 policies x 3 seeds from power-on and from PyBoy states at 3,000/6,000
        games) stage games "$CORPUS" --only games/ --frames 10000 --seeds 0,1,2 --policies random,holds,mash --states-at 3000,6000 --states-dir "$OUT/states" ;;
        # our three games, the same way
        own) stage own games --frames 10000 --seeds 0,1,2 --policies random,holds,mash --states-at 3000,6000 --states-dir "$OUT/states" ;;
        # our test ROMs (CGB ones included), one seed
        ours) stage ours roms --skip roms/build/ --frames 10000 --seeds 0 --policies random ;;
        # 100,000-frame soaks: every game, 3 policies, both hardware, sound on, from power-on and a state
        soak) stage soak "$CORPUS/games" games --frames 100000 --seeds 0 --policies random,holds,mash --sound on --compare-every 500 --states-at 3000 --states-dir "$OUT/states" ;;
        *) echo "unknown stage $s" >&2 ;;
    esac
done
echo "== done (t=$(($(date +%s) - T0)) s)"
