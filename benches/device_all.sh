#!/usr/bin/env bash
# Every speed target of issues 23-27 on the 16-CPU device, in two calls of under 10 minutes:
#   PART=games  one core per run, emurust vs PyBoy 2.8.1 taking turns (emurust bench), on real
#               games from gameplay states (Dodge, Runner, Snake, Libbet, Shock Lobster and
#               Pokemon Red's overworld walk, battle and menu), 3 frame patterns x both sound
#               modes; emurust vs Gambatte drawing every frame with sound, from power-on; the
#               PyBoy API's per-call table; PokemonRedExperiments v2 on both, 1 and 16 processes
#   PART=envs   the batched v2 env (16/64/256 envs) against v2 on PyBoy in SubprocVecEnv, SB3
#               PPO; Pong against its C reference (one core, 4,096 games on 1-16 threads, PPO)
# The bench runs of one engine pair are independent, so the games run side by side, each pinned
# to a core of its own (taskset; emurust bench pins its workers to the last core it may use).
#
# Carry: .whl (benches/README-device.md; PyBoy's wheel through benches/slim_wheel.py) and
# .corpus: games/{libbet,shock-lobster}.gb, states/<game>.state (PyBoy states in gameplay,
# `emurust verify make-states`), pokered/pokered.gb + pokered/states/ (built locally from
# pret/pokered: never committed), v2/ (PokemonRedExperiments v2's files), refs/puffer-pong,
# stubs/mediapy (v2 imports it for videos it does not record here). Results in $OUT.
set -uo pipefail
cd "$(dirname "$0")/.."
. benches/device_setup.sh
C=$PWD/.corpus
export PYTHONPATH=${PYTHONPATH:+$PYTHONPATH:}$C/stubs EMURUST_REFERENCES=$C/refs
LOG="$OUT/${PART:-games}.log"
{
    date -Is
    grep -m1 "model name" /proc/cpuinfo
    echo "nproc $(nproc); load $(cat /proc/loadavg)"
    git log -1 --format='commit %h %s' 2>/dev/null || true
} | tee "$LOG"

bench_pinned() { # core name args...: one emurust bench on one core, JSON into $OUT
    local core=$1 name=$2
    shift 2
    taskset -c "$core" timeout "${BENCH_LIMIT:-420}" $PY -m emurust.bench "$@" --timeout 120 --png '' \
        --json "$OUT/$name.json" > "$OUT/$name.out" 2>&1
}

if [ "${PART:-games}" = games ]; then
    echo "== emurust vs PyBoy, gameplay states, side by side on 8 cores" | tee -a "$LOG"
    P=$C/pokered/pokered.gb
    RUNS=("dodge games/dodge.gb@$C/states/dodge.state" "runner games/runner.gb@$C/states/runner.state"
          "snake games/snake.gb@$C/states/snake.state" "libbet $C/games/libbet.gb@$C/states/libbet.state"
          "shock-lobster $C/games/shock-lobster.gb@$C/states/shock-lobster.state"
          "pokered-walk $P@$C/pokered/states/overworld_walk.state" "pokered-battle $P@$C/pokered/states/battle.state"
          "pokered-menu $P@$C/pokered/states/menu.state")
    core=1
    for r in "${RUNS[@]}"; do
        # GAMES="dodge pokered-battle ...": only these (a re-run of some).
        [ -n "${GAMES:-}" ] && [[ " $GAMES " != *" ${r%% *} "* ]] && continue
        bench_pinned $core "pyboy-${r%% *}" --engines emurust,pyboy --roms "${r#* }" --patterns render,skip24,no_render \
            --sound on,off --frames "${FRAMES:-6000}" --repeat "${REPEAT:-5}" &
        core=$((core + 2))
    done
    wait
    echo "== emurust vs Gambatte, every frame drawn with sound, from power-on" | tee -a "$LOG"
    core=1
    for rom in games/dodge.gb games/runner.gb games/snake.gb $C/games/libbet.gb $C/games/shock-lobster.gb $P; do
        [ -n "${SKIP_GAMBATTE:-}" ] && continue
        bench_pinned $core "gambatte-$(basename "$rom" .gb)" --engines emurust,gambatte --roms "$rom" --patterns render \
            --sound on --frames "${FRAMES:-6000}" --repeat "${REPEAT:-5}" &
        core=$((core + 2))
    done
    echo "== PyBoy API, per call (one core, beside the Gambatte runs)" | tee -a "$LOG"
    # One ROM, a third of the default loop sizes: with Pokemon Red added to the default three
    # ROMs it did not finish in 300 s (PyBoy's save_state is ~27 ms a call on a slow instance).
    taskset -c 13 timeout 300 $PY -u benches/pyboy_api_calls.py --roms games/dodge.gb --rounds 5 --scale 0.3 \
        --out "$OUT/pyboy_api_calls.json" > "$OUT/pyboy_api_calls.out" 2>&1
    wait
    if [ -z "${SKIP_V2_ENV:-}" ]; then # SKIP_V2_ENV=1: run it in a call of its own (V2_STEPS, V2_LIMIT)
        echo "== PokemonRedExperiments v2, import swapped: 1 and 16 processes" | tee -a "$LOG"
        timeout "${V2_LIMIT:-240}" $PY benches/pokered_v2_env.py --rom "$P" --state "$C/v2/init.state" --env-dir "$C/v2" \
            --steps "${V2_STEPS:-400}" --processes 1,16 --check-steps 300 --profile-steps 200 \
            --out "$OUT/pokered_v2_env.json" > "$OUT/pokered_v2_env.out" 2>&1
    fi
    tail -n 30 "$OUT"/*.out | tee -a "$LOG"
else
    echo "== batched v2 env vs v2 on PyBoy (SubprocVecEnv, 16 processes)" | tee -a "$LOG"
    timeout 300 $PY benches/pokered_v2_batch.py --rom "$C/pokered/pokered.gb" --v2-dir "$C/v2" --v2-shims --procs 16 \
        --envs 16,64,256 --seconds 12 --ppo-steps "${PPO_ROLLOUTS:-2}" --out "$OUT/pokered_v2_batch.json" 2>&1 | tee -a "$LOG"
    echo "== Pong vs its C reference" | tee -a "$LOG"
    command -v gcc >/dev/null || echo "no gcc: the C reference cannot be built" | tee -a "$LOG"
    timeout 240 $PY benches/pong_speed.py --parts core,scaling,ppo --threads 1,2,4,8,16 --ppo-envs 16 \
        --ppo-steps "${PONG_PPO_STEPS:-32768}" --out "$OUT/pong_speed.json" 2>&1 | tee -a "$LOG"
fi
echo "== done $(date -Is)" | tee -a "$LOG"
# The device tool brings back at most 8 files: everything in one archive, beside the log.
# (Written outside $OUT first: tar fails with "file changed as we read it" on its own output.)
ARCHIVE=$(mktemp --suffix=.tar.gz)
tar czf "$ARCHIVE" -C "$OUT" --exclude='*.tar.gz' --exclude="$(basename "$LOG")" . &&
    mv "$ARCHIVE" "$OUT/${PART:-games}-results.tar.gz" &&
    find "$OUT" -maxdepth 1 -type f ! -name '*.tar.gz' ! -name "$(basename "$LOG")" -delete
