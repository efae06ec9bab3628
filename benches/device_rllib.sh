#!/usr/bin/env bash
# RLlib PPO throughput, emurust vs PyBoy (benches/rllib_throughput.py), on the lent 16-CPU device,
# which cannot download. RLlib needs Ray Core plus pyarrow, pandas, scipy and more: over what one
# device call carries (64 MiB with the tree), so the files come in two parts:
#   .whl-ray/     Ray Core (ray-min.tar.xz + its dependencies' wheels; see benches/device_ray.sh)
#   .whl-rllib/a/ pyarrow.tar.xz                  } made by benches/fetch_rllib_wheels.sh
#   .whl-rllib/b/ rllib-extra.tar.xz + the wheels } (its header lists what is in them and why)
# Two device calls, the second right after the first (the machine keeps /tmp only while warm,
# about 30 s after a call):
#   1. carry [".whl-ray", ".whl-rllib/a"]:  STAGE=a bash benches/device_rllib.sh
#      unpacks Ray Core and pyarrow into $SITE (/tmp/site) and installs Ray's wheels
#   2. carry [".whl-rllib/b"]:  OUT=$OUT bash benches/device_rllib.sh [rllib_throughput.py options]
#      unpacks the rest, installs emurust, gymnasium and PyBoy, prints the versions and runs the
#      benchmark under `timeout $LIMIT` (default 540 s), writing rllib_throughput.json and
#      rllib.log to $OUT
# A call that carries everything (where the limit allows) does both steps at once. Each archive
# is unpacked once per machine (marker files $SITE/.done-*).
set -uo pipefail
cd "$(dirname "$0")/.."
SITE=${SITE:-/tmp/site}
OUT=${OUT:-.}
mkdir -p "$SITE" "$OUT"
PIP="python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target $SITE"
unpack() {  # archive name
    if [ -f "$SITE/.done-$2" ]; then echo "$2: already unpacked"; return 0; fi
    if [ ! -f "$1" ]; then echo "$2: $1 not carried"; return 0; fi
    tar -xJf "$1" -C "$SITE" && touch "$SITE/.done-$2" && echo "$2: unpacked"
}
t0=$(date +%s)
unpack .whl-ray/ray-min.tar.xz ray-min
if [ ! -f "$SITE/.done-ray-wheels" ] && ls .whl-ray/*.whl >/dev/null 2>&1; then
    $PIP .whl-ray/*.whl 2>&1 | grep -v WARNING
    touch "$SITE/.done-ray-wheels" && echo "ray-wheels: installed"
fi
unpack .whl-rllib/a/pyarrow.tar.xz pyarrow
if [ "${STAGE:-}" = a ]; then ls -a "$SITE" | grep done; echo "stage a: $(( $(date +%s) - t0 )) s"; exit 0; fi
unpack .whl-rllib/b/rllib-extra.tar.xz rllib-extra
if [ ! -f "$SITE/.done-rllib-wheels" ] && ls .whl-rllib/b/*.whl >/dev/null 2>&1; then
    $PIP .whl-rllib/b/*.whl 2>&1 | grep -v WARNING
    touch "$SITE/.done-rllib-wheels" && echo "rllib-wheels: installed"
fi
for m in ray-min ray-wheels pyarrow rllib-extra rllib-wheels; do
    [ -f "$SITE/.done-$m" ] || { echo "missing: $m (was the machine given back between the two calls?)"; exit 3; }
done
echo "install: $(( $(date +%s) - t0 )) s"
export PYTHONPATH=$SITE PYTHONUNBUFFERED=1 PYTHONWARNINGS=ignore
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
{
    nproc; grep -m1 "model name" /proc/cpuinfo; nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
    python3 -c "import ray, torch, pyarrow, pandas, gymnasium, pyboy, emurust
from ray.rllib.algorithms.ppo import PPOConfig
print('ray', ray.__version__, 'torch', torch.__version__, 'cuda', torch.cuda.is_available(), 'pyarrow',
      pyarrow.__version__, 'pandas', pandas.__version__, 'gymnasium', gymnasium.__version__, 'emurust', emurust.__file__)"
} 2>&1 | tee "$OUT/versions.txt"
timeout "${LIMIT:-540}" python3 benches/rllib_throughput.py --out "$OUT/rllib_throughput.json" "$@" 2>&1 \
    | grep -v "DeprecationWarning: \`RLModule(config=" | tee "$OUT/rllib.log"
echo "total: $(( $(date +%s) - t0 )) s"
