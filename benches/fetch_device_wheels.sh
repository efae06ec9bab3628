#!/usr/bin/env bash
# Fill .whl/ with every wheel benches/device_suite.sh installs on the device machine
# (Python 3.12, x86-64 Linux, torch + numpy preinstalled, no network). Run here, from the
# repository root, with network access:   bash benches/fetch_device_wheels.sh
# See benches/README-device.md for the list and why each wheel is there.
set -euo pipefail
cd "$(dirname "$0")/.."
mkdir -p .whl
PLAT=(--platform manylinux_2_28_x86_64 --platform manylinux_2_27_x86_64 --platform manylinux_2_24_x86_64
      --platform manylinux_2_17_x86_64 --platform manylinux2014_x86_64 --platform manylinux1_x86_64)
dl() { python3 -m pip download -q --no-deps --only-binary=:all: --python-version 3.12 --implementation cp \
       "${PLAT[@]}" -d .whl "$@"; }
# RL stack (pure Python wheels)
dl gymnasium==1.4.0 farama-notifications==0.0.4 cloudpickle==3.1.2 typing-extensions==4.15.0 \
   stable-baselines3==2.9.2
# The reference emulator (with window="null" it needs neither pysdl2 nor pysdl2-dll)
dl pyboy==2.8.1
# Gambatte (only its libgambatte extension is used; its terminal-UI deps are not needed)
dl gambaterm==1.3.2
# emurust itself: the abi3 wheel (any CPython >= 3.10)
CARGO_TARGET_DIR=${CARGO_TARGET_DIR:-target} maturin build --release -q -o .whl
ls -la .whl
du -sh .whl
