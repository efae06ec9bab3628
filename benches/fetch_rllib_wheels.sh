#!/usr/bin/env bash
# Fill .whl-rllib/ with what benches/device_rllib.sh needs on top of .whl-ray/ (Ray Core: ray-min.tar.xz
# and Ray's dependencies, see benches/device_ray.sh) to run RLlib on the device machine (Python 3.12,
# x86-64, torch + numpy preinstalled, no network). RLlib needs pyarrow, pandas and scipy (ray.tune
# imports them at the top), which do not fit in one call next to Ray Core (64 MiB carried per call:
# the tree ~11 MiB + .whl-ray 28.5 MiB leaves ~24 MiB), so the files come in two parts, carried by
# two calls made one right after the other (the machine keeps /tmp while it stays warm):
#   .whl-rllib/a/pyarrow.tar.xz     pyarrow 26.0.1 without Flight and S3 (libarrow_flight, libarrow_s3,
#                                   _flight, _s3fs removed), shared libraries stripped (strip
#                                   --strip-unneeded), one copy of libarrow_python (21 MB)
#   .whl-rllib/b/rllib-extra.tar.xz ray/rllib and ray/data of ray==2.60.0 (cp312; ray-min.tar.xz
#                                   leaves them out) without tests/examples, and RLlib's other
#                                   dependencies installed with pip --target, stripped: pandas 3.1.1
#                                   (no tests), scipy 1.17.1 (the PPO path imports only the top
#                                   package: scipy/__init__ + _lib kept, subpackages and scipy.libs
#                                   removed), dm-tree, absl-py, wrapt, lz4, ormsgpack, tensorboardX,
#                                   fsspec, pydantic (+core, annotated-types, typing-inspection),
#                                   python-dateutil, six
#   .whl-rllib/b/*.whl              emurust (abi3, built from a clean worktree of HEAD), gymnasium
#                                   1.4.0, farama-notifications, cloudpickle, typing-extensions, and
#                                   the stripped PyBoy 2.8.1 wheel of .whl/ (benches/README-device.md)
# What RLlib imports was listed from a PPO run (driver and env runners, both engines of
# benches/rllib_throughput.py) on a full install; blocking pyarrow, pandas or scipy breaks
# `from ray.rllib.algorithms.ppo import PPOConfig` (ray/tune/__init__.py imports them).
# Run here, from the repository root, with network access:   bash benches/fetch_rllib_wheels.sh
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
W=${WORK:-/tmp/rllib-pack}   # scratch (downloads, staging)
PY=${PY312:-/root/.pyenv/versions/3.12.1/bin/python3.12}   # any CPython 3.12 (pip --target only)
rm -rf "$W/site" "$W/ray" .whl-rllib && mkdir -p "$W/dl" "$W/site" "$W/ray" .whl-rllib/a .whl-rllib/b
PLAT=(--platform manylinux_2_28_x86_64 --platform manylinux_2_27_x86_64 --platform manylinux_2_24_x86_64
      --platform manylinux_2_17_x86_64 --platform manylinux2014_x86_64 --platform manylinux1_x86_64
      --platform manylinux_2_5_x86_64)
dl() { python3 -m pip download -q --no-deps --only-binary=:all: --python-version 3.12 --implementation cp \
       "${PLAT[@]}" -d "$@"; }
dl "$W" ray==2.60.0
dl "$W/dl" pyarrow==26.0.1 pandas==3.1.1 scipy==1.17.1 dm-tree==0.1.10 absl-py==2.5.1 wrapt==2.1.2 \
   lz4==4.4.5 ormsgpack==1.13.1 tensorboardX==2.6.5 fsspec==2026.9.0 pydantic==2.13.4 pydantic_core==2.46.4 \
   annotated-types==0.7.0 typing-inspection==0.4.2 python-dateutil==2.9.0.post0 six==1.17.0

# ray/rllib and ray/data (the rest of Ray is in .whl-ray/ray-min.tar.xz)
(cd "$W/ray" && unzip -q "$W"/ray-2.60.0-cp312-*.whl 'ray/rllib/*' 'ray/data/*')
find "$W/ray/ray" -depth -type d \( -name tests -o -name __pycache__ \) -exec rm -rf {} +
rm -rf "$W/ray/ray/rllib/examples" "$W/ray/ray/rllib/benchmarks"
mv "$W/ray/ray" "$W/site/ray"

# the third-party dependencies, stripped
"$PY" -m pip install -q --no-index --no-deps --no-compile --target "$W/site" "$W"/dl/*.whl
cd "$W/site"
find . -depth -type d \( -name tests -o -name __pycache__ \) -exec rm -rf {} +
find . \( -name '*.pyi' -o -name '*.pyx' -o -name '*.pxd' -o -name '*.pxi' -o -name '*.h' -o -name '*.hpp' \
       -o -name '*.cc' -o -name '*.cpp' -o -name '*.c' \) -delete
rm -rf pyarrow/include pyarrow/src pyarrow/libarrow_flight.so* pyarrow/libarrow_s3.so* \
       pyarrow/_flight.cpython* pyarrow/_s3fs.cpython* pyarrow/flight.py pyarrow/cmake_modules
# the wheel holds three copies of libarrow_python (.so, .so.2600, .so.2600.1.0): keep one
(cd pyarrow && ln -sf libarrow_python.so.2600 libarrow_python.so && ln -sf libarrow_python.so.2600 libarrow_python.so.2600.1.0)
(cd scipy && find . -mindepth 1 -maxdepth 1 -type d ! -name _lib -exec rm -rf {} +)
rm -rf scipy.libs
find pyarrow lz4 -name '*.so*' -type f -exec strip --strip-unneeded {} +
cd "$ROOT"
(cd "$W/site" && tar -cf - pyarrow pyarrow-*.dist-info) | xz -9 -T0 > .whl-rllib/a/pyarrow.tar.xz
(cd "$W/site" && tar --exclude='./pyarrow' --exclude='./pyarrow-*.dist-info' -cf - .) | xz -9 -T0 > .whl-rllib/b/rllib-extra.tar.xz

# the small wheels and emurust (from a clean worktree of HEAD: uncommitted edits stay out)
dl .whl-rllib/b gymnasium==1.4.0 farama-notifications==0.0.4 cloudpickle==3.1.2 typing-extensions==4.15.0 \
   packaging==26.4   # ray.widgets imports it; the device has none
cp .whl/pyboy-2.8.1-*.whl .whl-rllib/b/
git worktree add -f /tmp/rllib-wt HEAD >/dev/null
(cd /tmp/rllib-wt && CARGO_TARGET_DIR=${CARGO_TARGET_DIR:-/tmp/rllib-target} maturin build --release -q -o "$ROOT/.whl-rllib/b")
git worktree remove --force /tmp/rllib-wt
ls -la .whl-rllib/a .whl-rllib/b
du -sh .whl-rllib/a .whl-rllib/b
