"""The idle-loop fast-forward's speed: emurust with it on and off, taking turns in the same run.

For each ROM (or ROM@STATE, a PyBoy 2.8.1 state), two emulators run the same frames with seeded
buttons, ``tick(1, render, sound)`` per frame, in alternating chunks; the best time per frame of
each over the chunks is compared, and the instruction counts must agree. Also prints how often the
wait-loop fast paths fired (``GameBoy.wait_loop_stats``).

    python benches/idle_loops.py [--frames 600] [--chunk 100] [--render] [--sound] [SPEC ...]

Default SPECs: our four busy-wait ROMs (roms/idle_*.gb) and our games.
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

import emurust

ROOT = Path(__file__).resolve().parent.parent
DEFAULT = [f"roms/idle_{c}.gb" for c in ("vblank", "ly", "joypad", "div")] + [f"games/{g}.gb" for g in ("snake", "runner", "dodge")]


def make(spec: str, idle: bool) -> emurust.GameBoy:
    rom, _, state = spec.partition("@")
    gb = emurust.GameBoy(str(ROOT / rom) if not Path(rom).is_absolute() else rom)
    if state:
        gb.load_pyboy_state(state)
    gb.idle_loop_fast_forward = idle
    return gb


def buttons(frame: int) -> int:
    x = (frame // 8) ^ 0x9E3779B97F4A7C15
    x ^= (x << 13) & 0xFFFFFFFFFFFFFFFF
    x ^= x >> 7
    x ^= (x << 17) & 0xFFFFFFFFFFFFFFFF
    return x & 0xFF


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--frames", type=int, default=600)
    ap.add_argument("--chunk", type=int, default=100)
    ap.add_argument("--render", action="store_true")
    ap.add_argument("--sound", action="store_true")
    ap.add_argument("specs", nargs="*")
    a = ap.parse_args()
    print(f"{'run':<44} {'on us/frame':>12} {'off us/frame':>13} {'speedup':>8}  skipped  stats")
    for spec in a.specs or DEFAULT:
        gbs = {True: make(spec, True), False: make(spec, False)}
        best = {True: float("inf"), False: float("inf")}
        done = 0
        while done < a.frames:
            n = min(a.chunk, a.frames - done)
            for idle in (True, False):
                gb = gbs[idle]
                t = time.perf_counter()
                for f in range(done, done + n):
                    gb.buttons = buttons(f)
                    gb.tick(1, a.render, a.sound)
                best[idle] = min(best[idle], (time.perf_counter() - t) / n)
            done += n
        on, off = gbs[True], gbs[False]
        assert on.instructions == off.instructions and on.cycles == off.cycles, spec
        s = on.wait_loop_stats()
        skipped = s["idle_skipped_instructions"] / max(on.instructions, 1)
        brief = " ".join(f"{k}={v}" for k, v in s.items() if k not in ("idle_skipped_instructions", "idle_looks"))
        name = spec if len(spec) <= 44 else "..." + spec[-41:]
        print(f"{name:<44} {best[True] * 1e6:>12.1f} {best[False] * 1e6:>13.1f} {best[False] / best[True]:>7.2f}x {skipped:>7.1%}  {brief}", flush=True)


if __name__ == "__main__":
    main()
