#!/usr/bin/env python3
"""Rollouts of the LCD-related real ROMs in roms-dev against PyBoy 2.8.1 (random buttons).

emurust is DMG-only, so ROMs whose header has the CGB flag are compared with PyBoy run as a
DMG (``cgb=False``): this script wraps ``make_pyboy`` locally for that.

    python tools/lcd_real_roms.py --frames 3000 --seeds 1 2 [--state-every 1] [ROM ...]
"""
import argparse
import glob
import os
import sys
import time

import emurust.verify.compare as compare
import emurust.verify.rollout as rollout_mod

ROOT = os.environ.get("EMURUST_TEST_ROMS", "/work/shared/data/roms-dev")
DEFAULT = (
    ["acid2/dmg-acid2.gb", "games/libbet.gb", "games/shock-lobster.gb"]
    + sorted(os.path.relpath(p, ROOT) for p in glob.glob(f"{ROOT}/mealybug/*.gb"))
    + sorted(os.path.relpath(p, ROOT) for p in glob.glob(f"{ROOT}/age/*.gb") if any(t in p for t in ("dmg", "ncm", "nocgb")))
    + sorted(os.path.relpath(p, ROOT) for p in glob.glob(f"{ROOT}/mooneye/ppu_*.gb"))
)

def make_pyboy_dmg(rom_path: str):
    """PyBoy as a DMG for every ROM (same signature as compare.make_pyboy)."""
    import pyboy as _pyboy

    import logging

    if getattr(_pyboy, "__version__", compare.PYBOY_VERSION) != compare.PYBOY_VERSION:
        raise RuntimeError(f"the reference is PyBoy {compare.PYBOY_VERSION}, found {_pyboy.__version__}")

    logging.getLogger("pyboy").setLevel(logging.ERROR)
    return _pyboy.PyBoy(rom_path, window="null", cgb=False)


def first_divergence_without_apu(frame, ours, ref, skip=()):
    """compare.first_divergence with the APU's registers (FF10-FF3F) and the sound left out."""
    for snap in (ours, ref):
        io = bytearray(snap.regions["IO"])
        io[0x10:0x40] = bytes(0x30)
        snap.regions["IO"] = bytes(io)
        snap.sound = None
    return compare.first_divergence(frame, ours, ref, skip)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("roms", nargs="*")
    ap.add_argument("--frames", type=int, default=3000)
    ap.add_argument("--seeds", type=int, nargs="+", default=[1, 2])
    ap.add_argument("--state-every", type=int, default=1)
    ap.add_argument("--ignore-apu", action="store_true", help="leave FF10-FF3F and the sound out")
    args = ap.parse_args()
    if args.ignore_apu:
        rollout_mod.first_divergence = first_divergence_without_apu
    rollout_mod.make_pyboy = make_pyboy_dmg
    compare.make_pyboy = make_pyboy_dmg
    bad = 0
    for rom in args.roms or DEFAULT:
        path = rom if os.path.exists(rom) else os.path.join(ROOT, rom)
        for seed in args.seeds:
            t = time.time()
            r = rollout_mod.rollout(path, args.frames, seed=seed, state_every=args.state_every)
            status = "identical" if r.divergence is None else f"DIVERGED: {r.divergence}"
            bad += r.divergence is not None
            print(f"{rom} seed {seed}: {r.frames_identical} frames {status} ({time.time() - t:.0f}s)", flush=True)
    sys.exit(1 if bad else 0)


if __name__ == "__main__":
    main()
