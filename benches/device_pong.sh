#!/usr/bin/env bash
# Issue 27's Pong measurements on the 16-CPU device (~6 min): one core against the C reference,
# 4,096 games on 1..16 threads, the machine's ceiling (16 independent processes), SB3 PPO end
# to end against the reference in SubprocVecEnv, and the 10,000-game L3 rollout. Carry .whl
# (benches/README-device.md) and .refs (the reference: mkdir -p .refs && cp -r
# ../shared/data/references/puffer-pong .refs/). Results in $OUT.
set -uo pipefail
cd "$(dirname "$0")/.."
. benches/device_setup.sh
export EMURUST_REFERENCES=$PWD/.refs
LOG="$OUT/pong.log"
command -v gcc >/dev/null || { echo "no gcc on this machine: the C reference cannot be built" | tee "$LOG"; exit 1; }
test -f .refs/puffer-pong/pong.h || { echo "carry .refs (.refs/puffer-pong/pong.h)" | tee "$LOG"; exit 1; }
{ date -Is; grep -m1 "model name" /proc/cpuinfo; echo "nproc $(nproc); gcc $(gcc -dumpfullversion)"; } | tee "$LOG"
timeout ${SPEED_LIMIT:-420} $PY benches/pong_speed.py --parts core,scaling,ceiling,ppo --threads 1,2,4,8,16 --min-seconds 1.5 \
    --ppo-envs 16 --ppo-steps ${PPO_STEPS:-65536} --out "$OUT/pong_speed.json" 2>&1 | tee -a "$LOG"
timeout ${L3_LIMIT:-200} $PY -m emurust verify pong-rollout --episodes 10000 --quiet --json "$OUT/pong_l3.json" 2>&1 | tee -a "$LOG"
