#!/usr/bin/env bash
# Ray throughput (benches/ray_throughput.py) on the lent 16-CPU device, which cannot download.
# The Ray wheel (79 MB) is over what one device call carries (64 MiB), so .whl-ray/ holds
# ray-min.tar.xz: ray==2.60.0 (cp312) unpacked without its Java jars, dashboard client, Serve,
# Data and RLlib (the benchmark uses Ray Core only), xz-compressed (24 MB), plus Ray's
# dependencies as wheels (pip download --no-deps ... for cp312). .whl-eq/ holds emurust,
# gymnasium, stable-baselines3 and their small dependencies.
#   Device: OUT=dir bash benches/device_ray.sh [ray_throughput.py options]
set -uo pipefail
cd "$(dirname "$0")/.."
SITE=${SITE:-/tmp/site}
mkdir -p "$SITE"
tar -xJf .whl-ray/ray-min.tar.xz -C "$SITE"
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target "$SITE" \
    .whl-ray/*.whl .whl-eq/*.whl 2>&1 | grep -v WARNING
export PYTHONPATH=$SITE PYTHONUNBUFFERED=1 PYTHONWARNINGS=ignore
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
python3 -c "import ray, emurust; print('ray', ray.__version__, 'emurust', emurust.__file__)"
timeout 500 python3 benches/ray_throughput.py --out "${OUT:-.}/ray_throughput.json" "$@"
