"""Frames per second of emurust and PyBoy 2.8.1 on the same ROM, measured in the same run.

    python benches/compare.py [ROM] [--frames N] [--json OUT]

Two frame patterns: every frame drawn (``tick(1, True)`` per frame) and none drawn
(``tick(N, False)``). Both emulators start from their boot ROM, as PyBoy always does.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
DEFAULT_ROM = os.path.join(HERE, "..", "roms", "bench.gb")


def _time(fn, frames: int) -> float:
    t0 = time.perf_counter()
    fn(frames)
    return frames / (time.perf_counter() - t0)


def bench_emurust(rom: str, frames: int) -> dict:
    import emurust

    gb = emurust.GameBoy(rom, boot_rom=emurust.pyboy_boot_rom())
    gb.tick(120, False)

    def drawn(n):
        for _ in range(n):
            gb.tick(1, True)

    return {"render": _time(drawn, frames), "no_render": _time(lambda n: gb.tick(n, False), frames)}


def bench_pyboy(rom: str, frames: int) -> dict:
    import logging

    from pyboy import PyBoy

    logging.getLogger("pyboy").setLevel(logging.ERROR)
    pb = PyBoy(rom, window="null")
    pb.set_emulation_speed(0)
    pb.tick(120, False)

    def drawn(n):
        for _ in range(n):
            pb.tick(1, True)

    result = {"render": _time(drawn, frames), "no_render": _time(lambda n: pb.tick(n, False), frames)}
    pb.stop(save=False)
    return result


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("rom", nargs="?", default=DEFAULT_ROM)
    ap.add_argument("--frames", type=int, default=1200)
    ap.add_argument("--json", help="write the results here")
    args = ap.parse_args(argv)
    results = {"rom": os.path.basename(args.rom), "frames": args.frames, "machine": platform.processor() or platform.machine()}
    results["emurust"] = bench_emurust(args.rom, args.frames)
    results["pyboy"] = bench_pyboy(args.rom, args.frames)
    print(f"ROM {results['rom']}, {args.frames} frames, one core")
    print(f"{'pattern':<12} {'emurust fps':>12} {'PyBoy fps':>12} {'ratio':>8}")
    for k in ("render", "no_render"):
        e, p = results["emurust"][k], results["pyboy"][k]
        print(f"{k:<12} {e:>12,.0f} {p:>12,.0f} {e / p:>7.1f}x")
    if args.json:
        with open(args.json, "w") as f:
            json.dump(results, f, indent=2)
    return 0


if __name__ == "__main__":
    sys.exit(main())
