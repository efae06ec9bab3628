#!/usr/bin/env bash
# Issue 11's measurements on the 16-CPU benchmark machine, in one device call (~8 min):
#   1. one core, emurust vs PyBoy 2.8.1 in the same run, real games from PyBoy states taken
#      in gameplay (our Dodge, Runner, Snake; the corpus's Libbet and Shock Lobster, carried
#      in .corpus/), 3 frame patterns, both of PyBoy's sound modes
#   2. scaling with counters (benches/scaling_counters.sh): 1 core vs one 256-env batch on 16
#      threads vs 16 independent processes
#   3. environments alone and SB3 PPO end to end, emurust vs PyBoy in SubprocVecEnv, 16 envs
# Carry .whl (see benches/README-device.md) and .corpus (games/ and states/ of tools/
# device_campaign.sh), and .pokered (pokered.gb and states/) to add Pokemon Red's states.
# Results in $OUT: speed.log, compare.json, scaling/*, rl.json.
set -uo pipefail
cd "$(dirname "$0")/.."
. benches/device_setup.sh
mkdir -p "$OUT/scaling"
LOG="$OUT/speed.log"
{
    date -Is
    grep -m1 "model name" /proc/cpuinfo
    echo "nproc $(nproc); load $(cat /proc/loadavg)"
    git log -1 --format='commit %h %s' 2>/dev/null || true
} | tee "$LOG"
C=.corpus
ROMS="games/dodge.gb@$C/states/dodge.state,games/runner.gb@$C/states/runner.state"
ROMS+=",games/snake.gb@$C/states/snake.state,$C/games/libbet.gb@$C/states/libbet.state"
ROMS+=",$C/games/shock-lobster.gb@$C/states/shock-lobster.state"
# Pokemon Red (built locally, never committed): POKERED=ROM (default .pokered/pokered.gb, carry
# .pokered) with its gameplay states in POKERED_STATES (default states/ beside the ROM).
POKERED=${POKERED:-.pokered/pokered.gb}
if [ -f "$POKERED" ]; then
    PS=${POKERED_STATES:-$(dirname "$POKERED")/states}
    for st in overworld_walk battle menu; do
        [ -f "$PS/$st.state" ] && ROMS+=",$POKERED@$PS/$st.state"
    done
fi
echo "== compare" | tee -a "$LOG"
timeout ${CMP_LIMIT:-330} $PY -m emurust.bench --engines emurust,pyboy --frames ${CMP_FRAMES:-6000} \
    --repeat ${CMP_REPEAT:-3} --roms "$ROMS" --patterns render,skip24,no_render --sound on,off \
    --timeout 60 --json "$OUT/compare.json" 2>&1 | grep -v SDL2 | tee -a "$LOG"
echo "== scaling with counters" | tee -a "$LOG"
OUT=$OUT/scaling SECONDS_EACH=${SECONDS_EACH:-6} timeout 120 bash benches/scaling_counters.sh 2>&1 | tee -a "$LOG"
echo "== environments and PPO" | tee -a "$LOG"
timeout ${RL_LIMIT:-120} $PY benches/rl_throughput.py --parts envs,ppo --num-envs 16 --threads 16 \
    --seconds 5 --ppo-steps 8192 --device cuda --out "$OUT/rl.json" 2>&1 | grep -v SDL2 | tee -a "$LOG"
