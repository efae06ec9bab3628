"""Steps per second of one PyBoy-style environment on PyBoy 2.8.1, on ``emurust.PyBoy`` (the same
code, its import changed) and as emurust's batched task doing the same work.

    python benches/pyboy_api_throughput.py [--steps 3000] [--repeat 3] [--num-envs 16]
        [--threads 1,16] [--roms games/dodge.gb,...] [--out pyboy_api_throughput.json]

The env is tests/pyboy_style_envs.py's PixelEnv (the common community shape: ``send_input``
presses, 3 frames undrawn, release, 1 frame drawn, ``screen.ndarray`` halved to (72, 80, 3),
a reward summed from ``memory``, an episode start restored with ``load_state`` every 500 steps),
loaded twice: as written (``from pyboy import PyBoy``) and with that one line changed to
``from emurust import PyBoy``. steps/s = steps / CPU seconds of this process, best of --repeat.

The batched task: ``emurust.envs.GameBoyVectorEnv`` with --num-envs games started from the same
PyBoy state, frame_skip 4 (the action's buttons held for 3 frames, the 4th drawn), RGB
observations (144, 160, 3), reward from RAM in Rust, 500-step episodes; random actions; steps/s
counts environment steps (N per call) per wall second, at each --threads count.
"""

from __future__ import annotations

import argparse
import io
import json
import os
import pathlib
import platform
import random
import sys
import time

ROOT = pathlib.Path(__file__).resolve().parents[1]


def load_env_module(use_emurust: bool):
    src = (ROOT / "tests" / "pyboy_style_envs.py").read_text()
    if use_emurust:
        if src.count("from pyboy import PyBoy\n") != 1:
            raise SystemExit("tests/pyboy_style_envs.py must import PyBoy exactly once")
        src = src.replace("from pyboy import PyBoy\n", "from emurust import PyBoy\n")
    mod = type(sys)(f"pyboy_style_envs_{'emurust' if use_emurust else 'pyboy'}")
    exec(compile(src, mod.__name__, "exec"), mod.__dict__)
    return mod


def time_single(rom: str, use_emurust: bool, steps: int, repeat: int) -> dict:
    env = load_env_module(use_emurust).PixelEnv(rom)
    rnd = random.Random(0)
    actions = [rnd.randrange(env.action_space.n) for _ in range(steps)]
    best = None
    for _ in range(repeat):
        env.reset(seed=0)
        c0 = time.process_time()
        for a in actions:
            _, _, term, trunc, _ = env.step(a)
            if term or trunc:
                env.reset()
        dt = time.process_time() - c0
        best = dt if best is None else min(best, dt)
    env.close()
    return {"steps": steps, "cpu_s": best, "steps_per_s": steps / best}


def start_state(rom: str, frames: int = 240) -> bytes:
    """The PixelEnv's episode start: PyBoy's state after `frames` frames from power-on."""
    import emurust

    pb = emurust.PyBoy(rom, window="null")
    pb.tick(frames, False)
    buf = io.BytesIO()
    pb.save_state(buf)
    pb.stop(save=False)
    return buf.getvalue()


def time_batched(rom: str, num_envs: int, threads: int, steps: int, repeat: int) -> dict:
    import numpy as np

    from emurust.envs import GameBoyVectorEnv
    from emurust.rewards import Term

    env = GameBoyVectorEnv(
        num_envs, rom=rom, obs="rgb", frame_skip=4, press_frames=3, start_state=start_state(rom),
        reward=[Term(0xC000, "u8", 1.0 / 256, True)], max_episode_steps=500, num_threads=threads,
    )
    rng = np.random.default_rng(0)
    calls = max(1, steps // num_envs)
    acts = rng.integers(0, env.single_action_space.n, size=(calls, num_envs))
    best = None
    for _ in range(repeat):
        env.reset(seed=0)
        t0 = time.perf_counter()
        for a in acts:
            env.step(a)
        dt = time.perf_counter() - t0
        best = dt if best is None else min(best, dt)
    env.close()
    return {"num_envs": num_envs, "threads": threads, "steps": calls * num_envs, "wall_s": best,
            "steps_per_s": calls * num_envs / best}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--roms", default="games/dodge.gb")
    ap.add_argument("--steps", type=int, default=3000)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--num-envs", type=int, default=16)
    ap.add_argument("--threads", default="1,16")
    ap.add_argument("--out", default="pyboy_api_throughput.json")
    args = ap.parse_args(argv)
    out = {"machine": {"cpu": platform.processor() or platform.machine(), "cpus": os.cpu_count(),
                       "python": platform.python_version()}, "results": []}
    for rom in args.roms.split(","):
        path = str((ROOT / rom) if (ROOT / rom).is_file() else pathlib.Path(rom))
        name = pathlib.Path(path).name
        row = {"rom": name}
        row["pyboy"] = time_single(path, False, args.steps, args.repeat)
        row["emurust_pyboy"] = time_single(path, True, args.steps, args.repeat)
        row["batched"] = [time_batched(path, args.num_envs, int(t), args.steps * 4, args.repeat)
                          for t in args.threads.split(",")]
        out["results"].append(row)
        p = row["pyboy"]["steps_per_s"]
        e = row["emurust_pyboy"]["steps_per_s"]
        print(f"{name}: PyBoy {p:,.0f} steps/s | emurust.PyBoy {e:,.0f} ({e / p:.1f}x)", flush=True)
        for b in row["batched"]:
            print(f"  batched task, {b['num_envs']} envs, {b['threads']} threads: {b['steps_per_s']:,.0f} steps/s "
                  f"({b['steps_per_s'] / p:.1f}x PyBoy)", flush=True)
    with open(args.out, "w") as f:
        json.dump(out, f, indent=1)
    print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
