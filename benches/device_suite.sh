#!/usr/bin/env bash
# The throughput suite of issue 5 on the 16-core GPU machine (Python 3.12 + torch, no network).
# From the repository root, with the wheels of benches/README-device.md in .whl/:
#
#     OUT=/some/dir bash benches/device_suite.sh        # $OUT defaults to ./device-results
#
# Runs, one after another, each under a time limit, the whole within $BUDGET_S (default 530 s):
#   1. compare   emurust bench: one core, emurust vs PyBoy 2.8.1 vs Gambatte, the real-games suite,
#                3 frame patterns, both sound modes
#   2. scaling   Batch of $SCALING_ENVS envs at threads $SCALING_THREADS: steps/s, efficiency
#   3. rl        environments alone (emurust Batch vs PyBoy SubprocVecEnv) and SB3 PPO end to
#                end on both, $NUM_ENVS envs on $THREADS threads/processes
#   4. share     PPO time spent in the environment at policy sizes $SIZES on $DEVICE
#   5. memory    RSS per emulator of a $MEMORY_ENVS-emulator batch, ROM sharing, one step
# Results (7 files, as the device tool returns at most 8): suite.log, compare.json,
# compare.png (if matplotlib is there), scaling.json, rl.json, share.json, memory.json.
# Every size is an environment variable (defaults below); SKIP_INSTALL=1 uses the current
# Python environment instead of installing .whl/.
set -uo pipefail
cd "$(dirname "$0")/.."
OUT=${OUT:-$PWD/device-results}
mkdir -p "$OUT"
PY=${PYTHON:-python3}
BUDGET_S=${BUDGET_S:-530}
CPUS=$(nproc)
NUM_ENVS=${NUM_ENVS:-16}
THREADS=${THREADS:-$CPUS}
SECONDS_PER=${SECONDS_PER:-5}
CMP_FRAMES=${CMP_FRAMES:-3000}
CMP_REPEAT=${CMP_REPEAT:-2}
CMP_ENGINES=${CMP_ENGINES:-emurust,pyboy,gambatte,mgba}
CMP_PATTERNS=${CMP_PATTERNS:-render,skip24,no_render}
CMP_SOUND=${CMP_SOUND:-on,off}
CMP_LIMIT=${CMP_LIMIT:-300}
CMP_ROMS=${CMP_ROMS:-}
SCALING_ENVS=${SCALING_ENVS:-256}
SCALING_THREADS=${SCALING_THREADS:-1,2,4,8,16}
PPO_STEPS=${PPO_STEPS:-8192}
SHARE_STEPS=${SHARE_STEPS:-6144}
SIZES=${SIZES:-2m,20m,200m}
SHARE_ENGINES=${SHARE_ENGINES:-emurust,pyboy}
DEVICE=${DEVICE:-cuda}
MEMORY_ENVS=${MEMORY_ENVS:-4096}
T0=$(date +%s)
LOG="$OUT/suite.log"
: >"$LOG"
say() { echo "$*" | tee -a "$LOG"; }
left() { echo $((BUDGET_S - ($(date +%s) - T0))); }
# step NAME LIMIT_S CMD...: run under min(LIMIT_S, time left), output appended to suite.log.
step() {
    local name=$1 limit=$2
    shift 2
    local l
    l=$(left)
    if ((l < 15)); then
        say "== $name: SKIPPED, budget spent ($(($(date +%s) - T0)) s)"
        return
    fi
    ((limit > l)) && limit=$l
    say "== $name (limit ${limit} s, t=$(($(date +%s) - T0)) s, load $(cut -d' ' -f1-3 /proc/loadavg))"
    timeout --kill-after=5 "$limit" "$@" 2>&1 | grep -v "UserWarning: Using SDL2" | tee -a "$LOG"
    local rc=${PIPESTATUS[0]}
    ((rc == 124 || rc == 137)) && say "== $name: TIMED OUT after ${limit} s (partial results kept)"
    ((rc != 0 && rc != 124 && rc != 137)) && say "== $name: exit $rc"
    return 0
}

if [[ "${SKIP_INSTALL:-0}" != 1 ]]; then
    SITE=${SITE:-/tmp/site}
    say "== install .whl/ into $SITE"
    ls .whl/*.whl | tee -a "$LOG"
    $PY -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target "$SITE" .whl/*.whl \
        2>&1 | grep -v "^WARNING" | tee -a "$LOG"
    export PYTHONPATH=$SITE${PYTHONPATH:+:$PYTHONPATH}
fi
export PYTHONUNBUFFERED=1 PYTHONWARNINGS=ignore
# Keep NVLink multicast off (the device notes ask it of every program).
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1

{
    echo "== machine"
    date -Is
    uname -a
    grep -m1 "model name" /proc/cpuinfo
    echo "nproc $CPUS; load $(cat /proc/loadavg)"
    grep MemTotal /proc/meminfo
    (ldd --version 2>&1 | head -1) || true
    (nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader 2>&1) || true
    $PY - <<'EOF'
import importlib, sys
print("python", sys.version.split()[0])
for m in ("numpy", "torch", "gymnasium", "stable_baselines3", "pyboy", "emurust", "gambaterm", "mgba", "matplotlib"):
    try:
        mod = importlib.import_module(m)
        print(f"{m} {getattr(mod, '__version__', '?')} {getattr(mod, '__file__', '')}")
    except Exception as e:
        print(f"{m}: not importable ({type(e).__name__}: {e})")
try:
    import torch
    print("cuda", torch.cuda.is_available(), torch.cuda.get_device_name(0) if torch.cuda.is_available() else "")
except Exception:
    pass
EOF
    echo "sizes: NUM_ENVS=$NUM_ENVS THREADS=$THREADS SCALING_ENVS=$SCALING_ENVS SCALING_THREADS=$SCALING_THREADS" \
        "PPO_STEPS=$PPO_STEPS SHARE_STEPS=$SHARE_STEPS SIZES=$SIZES SHARE_ENGINES=$SHARE_ENGINES DEVICE=$DEVICE" \
        "MEMORY_ENVS=$MEMORY_ENVS CMP_FRAMES=$CMP_FRAMES CMP_REPEAT=$CMP_REPEAT"
} 2>&1 | tee -a "$LOG"

RL=(benches/rl_throughput.py --num-envs "$NUM_ENVS" --threads "$THREADS" --seconds "$SECONDS_PER" --device "$DEVICE")

# The real-games suite (our games + the corpus games under $EMURUST_TEST_ROMS if carried), every
# pattern, both of PyBoy's sound modes; CMP_ROMS adds ROMs or ROM@STATE entries.
step compare "$CMP_LIMIT" $PY -m emurust.bench --engines "$CMP_ENGINES" --frames "$CMP_FRAMES" --repeat "$CMP_REPEAT" \
    --suite real ${CMP_ROMS:+--roms "$CMP_ROMS"} --patterns "$CMP_PATTERNS" --sound "$CMP_SOUND" \
    --timeout 60 --json "$OUT/compare.json" --png "$OUT/compare.png"
step scaling 80 $PY "${RL[@]}" --parts scaling --scaling-envs "$SCALING_ENVS" --scaling-threads "$SCALING_THREADS" \
    --out "$OUT/scaling.json"
step rl 130 $PY "${RL[@]}" --parts envs,ppo --ppo-steps "$PPO_STEPS" --out "$OUT/rl.json"
step memory 60 $PY "${RL[@]}" --parts memory --memory-envs "$MEMORY_ENVS" --out "$OUT/memory.json"
step share 200 $PY "${RL[@]}" --parts share --sizes "$SIZES" --share-engines "$SHARE_ENGINES" \
    --ppo-steps "$SHARE_STEPS" --out "$OUT/share.json"

say "== summary (t=$(($(date +%s) - T0)) s)"
$PY benches/summarize.py "$OUT" 2>&1 | tee -a "$LOG" || true
ls -la "$OUT" | tee -a "$LOG"
