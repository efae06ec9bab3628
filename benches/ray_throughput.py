"""Steps per second of emurust on Ray: one local batch vs batches on Ray actors.

Configurations (``--configs``, comma-separated):

    local:NxT   one EmurustVecEnv of N environments on T threads, in this process (no Ray)
    AxMxT       RayVecEnv: A actors x M environments x T threads (each actor declares T CPUs)

Default (the issue's comparison, for a 16-CPU machine): local:256x16,4x64x4,16x16x1.
Each configuration steps the SB3 VecEnv with random actions (Dodge, grey_half observations,
frame_skip 8) for ``--steps`` vector steps after ``--warmup``; reported: environment steps/s,
milliseconds per vector step, and for Ray the overhead per step: wall time per step minus the
slowest actor's time inside its batch step (serialisation, object store, scheduling, gather).

    python benches/ray_throughput.py                                  # on the benchmark machine
    python benches/ray_throughput.py --configs local:8x2,2x4x1 --steps 50 --num-cpus 2   # tiny
    python benches/ray_throughput.py --address auto                   # on a running cluster
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import time

import numpy as np


def parse(spec: str) -> tuple:
    if spec.startswith("local:"):
        n, t = (int(x) for x in spec[6:].split("x"))
        return ("local", 1, n, t)
    a, m, t = (int(x) for x in spec.split("x"))
    return ("ray", a, m, t)


def run(spec: str, args) -> dict:
    kind, a, m, t = parse(spec)
    env_kw = dict(game=args.game, obs=args.obs, frame_skip=args.frame_skip)
    t_make = time.perf_counter()
    if kind == "local":
        from emurust.sb3 import EmurustVecEnv

        venv = EmurustVecEnv(m, num_threads=t, **env_kw)
    else:
        from emurust.ray import RayVecEnv

        venv = RayVecEnv(a, m, t, checkpoint_every=args.checkpoint_every, **env_kw)
    make_s = time.perf_counter() - t_make
    n = venv.num_envs
    rng = np.random.default_rng(0)
    acts = rng.integers(0, venv.action_space.n, size=(64, n))
    venv.seed(0)
    venv.reset()
    for i in range(args.warmup):
        venv.step(acts[i % 64])
    if kind == "ray":
        venv.group.call("timing", lambda k: (True,), what="timing")
    t0 = time.perf_counter()
    for i in range(args.steps):
        venv.step(acts[i % 64])
    wall = time.perf_counter() - t0
    row = {
        "config": spec,
        "actors": a if kind == "ray" else 0,
        "envs": n,
        "threads_per_actor": t,
        "make_s": round(make_s, 3),
        "env_steps_per_s": round(n * args.steps / wall, 1),
        "ms_per_vector_step": round(1000 * wall / args.steps, 3),
    }
    if kind == "ray":
        timings, _ = venv.group.call("timing", lambda k: (False,), what="timing")
        slowest = max(busy / max(steps, 1) for busy, steps in timings)
        row["actor_ms_per_step_max"] = round(1000 * slowest, 3)
        row["overhead_ms_per_step"] = round(1000 * (wall / args.steps - slowest), 3)
        row["nodes"] = len(set(venv.actor_nodes))
    venv.close()
    return row


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--configs", default="local:256x16,4x64x4,16x16x1")
    p.add_argument("--steps", type=int, default=300)
    p.add_argument("--warmup", type=int, default=20)
    p.add_argument("--game", default="dodge")
    p.add_argument("--obs", default="grey_half")
    p.add_argument("--frame-skip", type=int, default=8)
    p.add_argument("--checkpoint-every", type=int, default=100, help="RayVecEnv checkpoints (0: none)")
    p.add_argument("--address", default=None, help="Ray address (default: RAY_ADDRESS or a local Ray)")
    p.add_argument("--num-cpus", type=int, default=None, help="CPUs of a local Ray (default: all)")
    p.add_argument("--out", default=None, help="write the results as JSON here")
    args = p.parse_args()
    specs = [s.strip() for s in args.configs.split(",") if s.strip()]
    for s in specs:
        try:
            parse(s)
        except ValueError:
            p.error(f"bad configuration {s!r}: expected local:NxT or AxMxT")
    if any(parse(s)[0] == "ray" for s in specs):
        import ray

        ray.init(address=args.address, num_cpus=None if args.address else args.num_cpus,
                 include_dashboard=False, logging_level="ERROR", log_to_driver=False)
    rows = []
    for s in specs:
        row = run(s, args)
        rows.append(row)
        print(json.dumps(row), flush=True)
    if args.out:
        meta = {"machine": platform.node(), "cpus": os.cpu_count(), "steps": args.steps, "game": args.game,
                "obs": args.obs, "frame_skip": args.frame_skip, "checkpoint_every": args.checkpoint_every}
        with open(args.out, "w") as f:
            json.dump({"meta": meta, "results": rows}, f, indent=1)


if __name__ == "__main__":
    main()
