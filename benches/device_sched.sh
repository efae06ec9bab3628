#!/usr/bin/env bash
# Parallel stepping on the 16-CPU device (issues 25 and 27; docs/scheduling.md): the gang
# (default scheduler) against Rayon's own scheduling (scheduler="rayon", the path before), in
# the same run, ~6 minutes:
#   1. Pong, one Python call per step: 64-4,096 games on 1, 2, 4, 8, 16 threads, time per call
#      against the work per thread (the per-call overhead); run_steps on 4,096 games (no
#      per-step join); 16 independent processes of 256 games (the machine's own ceiling);
#   2. Pong 4,096 games again with the pool threads pinned to CPUs (EMURUST_PIN_THREADS=1),
#      and with 300 us of busy time between calls (as a policy), spin bound 100 us and 1 ms;
#   3. the Game Boy Batch (Dodge, frame skip 24) at 16/64/256 envs, 1 and 16 threads;
#   4. RedV2Batch (Pokemon Red, v2's config) at 16/64/256 envs, both schedulers and
#      RedV2AsyncPool, and the join bound of 16 envs (needs .corpus/pokered and .corpus/v2);
#      again with RedV2Batch's slowest-first order off (EMURUST_SLOW_FIRST=0).
# Carry .whl (benches/README-device.md; the emurust wheel built from this branch) and .corpus
# as for benches/device_all.sh (pokered/pokered.gb, v2/ with init.state, map_data.json and
# events.json). Results in $OUT: sched.log and sched-results.tar.gz. Sizes: THREADS (1,2,4,8,16),
# TOP_THREADS (16), SECONDS_PER (4); CORPUS (.corpus); SKIP_INSTALL=1 uses the current Python
# environment (how it was tried on the 2-core machine).
set -uo pipefail
cd "$(dirname "$0")/.."
. benches/device_setup.sh
C=${CORPUS:-$PWD/.corpus}
LOG="$OUT/sched.log"
T=${THREADS:-1,2,4,8,16}
TOP=${TOP_THREADS:-16}
S=${SECONDS_PER:-4}
{
    date -Is
    grep -m1 "model name" /proc/cpuinfo
    echo "nproc $(nproc); load $(cat /proc/loadavg)"
    lscpu 2>/dev/null | grep -E "^(Thread|Core|Socket|CPU\(s\)|Model name|CPU max MHz|NUMA node\(s\))" || true
    git log -1 --format='commit %h %s' 2>/dev/null || true
} | tee "$LOG"
B=benches/step_overhead.py
echo "== 1. Pong: per-call overhead, run_steps, independent processes" | tee -a "$LOG"
timeout 200 $PY $B --parts pong,pong_procs --threads "$T" --pong-envs 64,256,1024,4096 --seconds "$S" \
    --out "$OUT/pong.json" 2>&1 | tee -a "$LOG"
echo "== 2. Pong 4,096 games, pool threads pinned (EMURUST_PIN_THREADS=1)" | tee -a "$LOG"
EMURUST_PIN_THREADS=1 timeout 60 $PY $B --parts pong --threads "1,$TOP" --pong-envs 4096 \
    --out "$OUT/pong_pinned.json" 2>&1 | tee -a "$LOG"
echo "== 2b. Pong 4,096 games with 300 us of busy time between calls (a policy's), spin bound 100 us / 1 ms" | tee -a "$LOG"
timeout 60 $PY $B --parts pong --threads "1,$TOP" --pong-envs 4096 --gap-us 300 --repeat 2 \
    --out "$OUT/pong_gap300.json" 2>&1 | grep -v run_steps | tee -a "$LOG"
EMURUST_SPIN_US=1000 timeout 60 $PY $B --parts pong --threads "1,$TOP" --pong-envs 4096 --gap-us 300 --repeat 2 \
    --out "$OUT/pong_gap300_spin1000.json" 2>&1 | grep -v run_steps | tee -a "$LOG"
echo "== 3. Game Boy Batch (Dodge)" | tee -a "$LOG"
timeout 120 $PY $B --parts gb --threads "1,$TOP" --gb-envs 16,64,256 --seconds "$S" --out "$OUT/gb.json" 2>&1 | tee -a "$LOG"
echo "== 4. RedV2Batch / RedV2AsyncPool (Pokemon Red)" | tee -a "$LOG"
if [ -f "$C/pokered/pokered.gb" ] && [ -f "$C/v2/events.json" ]; then
    timeout 180 $PY $B --parts redv2 --threads "1,$TOP" --redv2-envs 16,64,256 --seconds "$S" \
        --rom "$C/pokered/pokered.gb" --v2-dir "$C/v2" --out "$OUT/redv2.json" 2>&1 | tee -a "$LOG"
    echo "== 4b. the same, RedV2Batch's blocks in index order (EMURUST_SLOW_FIRST=0)" | tee -a "$LOG"
    EMURUST_SLOW_FIRST=0 timeout 180 $PY $B --parts redv2 --threads "1,$TOP" --redv2-envs 16,64,256 --seconds "$S" \
        --rom "$C/pokered/pokered.gb" --v2-dir "$C/v2" --out "$OUT/redv2_index_order.json" 2>&1 | tee -a "$LOG"
else
    echo "skipped: carry .corpus/pokered/pokered.gb and .corpus/v2 (see benches/device_all.sh)" | tee -a "$LOG"
fi
echo "== done $(date -Is)" | tee -a "$LOG"
tar czf "$OUT/sched-results.tar.gz" -C "$OUT" --exclude='*.tar.gz' --exclude="$(basename "$LOG")" . &&
    find "$OUT" -maxdepth 1 -type f ! -name '*.tar.gz' ! -name "$(basename "$LOG")" -delete
