"""Steps per second of emurust's Batch for N = 1, 8, 64, 256 emulators, and of PyBoy 2.8.1
doing the same work in a plain single-process loop, in the same run.

One step = 24 frames (actions held for 8 frames, then released), only the last frame drawn,
observation = the grey screen (1x144x160 uint8). Both play Dodge with random actions from the
same 13-action set. Usage:

    python benches/batch_throughput.py [--seconds 3] [--sizes 1,8,64,256] [--threads N] [--out results.json]
"""

from __future__ import annotations

import argparse
import json
import os
import pathlib
import platform
import time

import numpy as np

ROOT = pathlib.Path(__file__).resolve().parent.parent
ROM = str(ROOT / "games" / "dodge.gb")
FRAME_SKIP, PRESS = 24, 8


def bench_batch(n: int, seconds: float, threads: int | None) -> dict:
    from emurust import _core

    b = _core.Batch(ROM, n, frame_skip=FRAME_SKIP, press_frames=PRESS, obs="grey", num_threads=threads,
                    reset_script=[(0, 10), ("start", 2), (0, 12)], noop_max=30,
                    reward=[(0xC000, "u16le", 1.0, True)], terminate=[(0xC003, "u8", "==", 1.0)])
    b.seed(0)
    b.reset()
    rng = np.random.default_rng(0)
    actions = rng.integers(0, b.num_actions, (64, n))
    buf = b.buffers
    # Warm up, then time whole calls until `seconds` have passed.
    b.step(actions[0])
    calls, t0 = 0, time.perf_counter()
    while True:
        done = buf["terminated"] | buf["truncated"]
        b.step(actions[calls % 64], done if done.any() else None)
        obs = buf["grey"]  # the observation is ready in place
        calls += 1
        el = time.perf_counter() - t0
        if el >= seconds and calls >= 3:
            break
    assert obs.shape == (n, 1, 144, 160)
    return {"engine": "emurust", "num_envs": n, "threads": b.num_threads, "calls": calls, "seconds": el,
            "steps_per_s": n * calls / el, "frames_per_s": n * calls * FRAME_SKIP / el}


def bench_pyboy(seconds: float) -> dict | None:
    try:
        from pyboy import PyBoy
    except ImportError:
        return None
    from emurust import _core

    actions = _core.default_actions()
    pb = PyBoy(ROM, window="null")
    pb.tick(30, False)
    pb.button_press("start")
    pb.tick(2, False)
    pb.button_release("start")
    pb.tick(12, False)
    rng = np.random.default_rng(0)
    seq = rng.integers(0, len(actions), 64)
    steps, t0 = 0, time.perf_counter()
    while True:
        names = actions[seq[steps % 64]]
        for name in names:
            pb.button_press(name)
        pb.tick(PRESS, False)
        for name in names:
            pb.button_release(name)
        pb.tick(FRAME_SKIP - PRESS - 1, False)
        pb.tick(1, True)
        obs = pb.screen.ndarray[:, :, 0].copy()  # grey level = the R channel
        if pb.memory[0xC003] == 1:  # game over: start again (as a reset would)
            pb.button_press("start")
            pb.tick(2, False)
            pb.button_release("start")
            pb.tick(12, False)
        steps += 1
        el = time.perf_counter() - t0
        if el >= seconds and steps >= 3:
            break
    pb.stop(save=False)
    assert obs.shape == (144, 160)
    return {"engine": "pyboy", "num_envs": 1, "threads": 1, "calls": steps, "seconds": el,
            "steps_per_s": steps / el, "frames_per_s": steps * FRAME_SKIP / el}


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--seconds", type=float, default=3.0, help="time per configuration")
    p.add_argument("--sizes", default="1,8,64,256")
    p.add_argument("--threads", type=int, default=None, help="Rayon threads (default: all CPUs)")
    p.add_argument("--out", default="batch_throughput.json")
    p.add_argument("--no-pyboy", action="store_true")
    args = p.parse_args()
    rows = [bench_batch(int(n), args.seconds, args.threads) for n in args.sizes.split(",")]
    if not args.no_pyboy:
        r = bench_pyboy(args.seconds)
        if r is not None:
            rows.append(r)
    ref = next((r["steps_per_s"] for r in rows if r["engine"] == "pyboy"), None)
    print(f"frame_skip={FRAME_SKIP}, grey 1x144x160 observation, Dodge, {os.cpu_count()} CPUs ({platform.processor() or platform.machine()})")
    print(f"{'engine':8} {'N':>5} {'threads':>7} {'steps/s':>10} {'frames/s':>10} {'vs PyBoy':>9}")
    for r in rows:
        x = f"{r['steps_per_s'] / ref:8.1f}x" if ref else "      n/a"
        print(f"{r['engine']:8} {r['num_envs']:5d} {r['threads']:7d} {r['steps_per_s']:10.1f} {r['frames_per_s']:10.0f} {x}")
    with open(args.out, "w") as f:
        json.dump({"frame_skip": FRAME_SKIP, "press_frames": PRESS, "obs": "grey", "cpus": os.cpu_count(),
                   "results": rows}, f, indent=1)
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
