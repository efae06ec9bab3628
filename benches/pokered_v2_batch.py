"""PokemonRedExperiments v2's environment: PyBoy in SB3 SubprocVecEnv against emurust's batch.

    python benches/pokered_v2_batch.py --rom PokemonRed.gb --v2-dir PokemonRedExperiments-v2 \
        [--state init.state] [--procs 16] [--envs 16,64,256] [--seconds 20] [--ppo-steps 2] [--out r.json]

Measures, in one run on one machine (random actions, v2's config of baseline_fast_v2.py:
action_freq 24, reward_scale 0.5, explore_weight 0.25):
  1. v2's RedGymEnv on PyBoy 2.8.1 in SubprocVecEnv(--procs) (and, with --swap, on emurust.PyBoy);
  2. emurust.pokered_v2.RedV2Batch (synchronous, one join per step) at each --envs;
  3. RedV2AsyncPool (EnvPool-style send/recv, batch = each --pool-fractions of the envs, default
     3/4) at each --envs, both
     against --procs independent processes each stepping one environment on one thread;
  4. memory per environment (RSS growth over --envs max environments, and the batch's own count);
  5. SB3 PPO end to end with v2's settings (MultiInputPolicy, n_steps=ep_length//64, batch 512,
     1 epoch, gamma 0.997, ent_coef 0.01) for --ppo-steps rollouts: PyBoy SubprocVecEnv(--procs)
     against RedV2VecEnv(--procs envs) (and, with --swap, v2 on emurust.PyBoy in the same
     SubprocVecEnv), steps/s including the updates.
Steps/s count environment steps (24 frames each). Results: printed, and as JSON with --out.
"""

from __future__ import annotations

import argparse
import functools
import json
import os
import sys
import time
from pathlib import Path

import numpy as np


def v2_config(args, session: Path) -> dict:
    return {
        "headless": True, "save_final_state": False, "early_stop": False, "action_freq": 24,
        "init_state": str(args.state), "max_steps": 2048 * 80, "print_rewards": False, "save_video": False,
        "fast_video": True, "session_path": session, "gb_path": str(args.rom), "debug": False,
        "reward_scale": 0.5, "explore_weight": 0.25,
        "map_data_path": str(args.v2_dir / "map_data.json"), "events_path": str(args.v2_dir / "events.json"),
    }  # fmt: skip


def shim_downscale_local_mean(image: np.ndarray, factors, cval=0) -> np.ndarray:
    """Stand-in for skimage.transform.downscale_local_mean on shapes the factors divide (v2's
    (144, 160, 1) by (2, 2, 1)): the float64 mean of each block, one NumPy mean call."""
    shape = image.shape
    if any(n % f for n, f in zip(shape, factors)):
        raise ValueError("the stand-in needs shapes divisible by the factors")
    split = [d for n, f in zip(shape, factors) for d in (n // f, f)]
    return image.reshape(split).mean(axis=tuple(range(1, 2 * len(shape), 2)))


def install_v2_shims() -> None:
    """For machines without v2's image/video/plot packages (the device machine): stand-ins for
    what v2 imports. mediapy and matplotlib are never called in a step (videos and images are
    off); skimage's downscale_local_mean is, and its stand-in computes the same values
    (tests/test_pokered_v2.py checks) with one NumPy call. einops must be the real one."""
    import types

    def need(name: str) -> bool:
        try:
            __import__(name)
            return False
        except ImportError:
            return True

    if need("skimage"):
        sk = types.ModuleType("skimage")
        tr = types.ModuleType("skimage.transform")
        tr.downscale_local_mean = shim_downscale_local_mean  # type: ignore[attr-defined]
        sk.transform = tr  # type: ignore[attr-defined]
        sys.modules.update({"skimage": sk, "skimage.transform": tr})
    if need("mediapy"):
        sys.modules["mediapy"] = types.ModuleType("mediapy")
    if need("matplotlib"):
        mpl = types.ModuleType("matplotlib")
        plt = types.ModuleType("matplotlib.pyplot")
        mpl.pyplot = plt  # type: ignore[attr-defined]
        sys.modules.update({"matplotlib": mpl, "matplotlib.pyplot": plt})


def make_v2(cfg: dict, v2_dir: str, swap: bool, shims: bool = False):
    if shims:
        install_v2_shims()
    os.chdir(v2_dir)
    sys.path.insert(0, v2_dir)
    import red_gym_env_v2

    if swap:
        import emurust

        red_gym_env_v2.PyBoy = emurust.PyBoy
    env = red_gym_env_v2.RedGymEnv(cfg)
    env.reset()
    return env


def subproc(args, cfg: dict, swap: bool):
    from stable_baselines3.common.vec_env import SubprocVecEnv

    fns = [functools.partial(make_v2, dict(cfg, instance_id=f"b{i}"), str(args.v2_dir), swap, args.v2_shims)
           for i in range(args.procs)]
    return SubprocVecEnv(fns, start_method="spawn")


def rate(step, n: int, seconds: float, warmup: int = 5) -> float:
    for _ in range(warmup):
        step()
    t0, steps = time.perf_counter(), 0
    while time.perf_counter() - t0 < seconds:
        step()
        steps += n
    return steps / (time.perf_counter() - t0)


def _independent(cfg: dict, v2_dir: str, seconds: float, seed: int) -> float:
    """One process, one environment, one thread: no join, no sharing (the ideal's unit)."""
    sys.path.insert(0, v2_dir)
    from emurust import pokered_v2

    b = pokered_v2.RedV2Batch(cfg, 1, num_threads=1)
    b.reset()
    rng = np.random.default_rng(seed)
    return rate(lambda: b.step(rng.integers(0, 7, 1)), 1, seconds)


def independent_aggregate(cfg: dict, v2_dir: str, procs: int, seconds: float) -> float:
    import multiprocessing as mp

    with mp.get_context("spawn").Pool(procs) as pool:
        return sum(pool.starmap(_independent, [(cfg, v2_dir, seconds, i) for i in range(procs)]))


def sync_rate(cfg: dict, n: int, threads, seconds: float, rng, scheduler=None) -> tuple:
    from emurust import pokered_v2

    b = pokered_v2.RedV2Batch(cfg, n, num_threads=threads, scheduler=scheduler)
    b.reset()
    return rate(lambda: b.step(rng.integers(0, 7, n)), n, seconds), b.core.num_threads


def async_rate(cfg: dict, n: int, k: int, threads, seconds: float, rng) -> float:
    from emurust import pokered_v2

    pool = pokered_v2.RedV2AsyncPool(cfg, n, batch_size=k, num_threads=threads)
    pool.async_reset()

    def cycle():
        _, _, _, ids = pool.recv()
        pool.send(rng.integers(0, 7, len(ids)), ids)

    return rate(cycle, k, seconds, warmup=20)


def rss() -> int:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) * 1024
    return 0


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--rom", type=Path, required=True)
    p.add_argument("--v2-dir", type=Path, required=True, help="PokemonRedExperiments' v2 folder")
    p.add_argument("--state", type=Path, default=None, help="init state (default: <v2-dir>/init.state)")
    p.add_argument("--procs", type=int, default=16)
    p.add_argument("--envs", default="16,64,256")
    p.add_argument("--threads", type=int, default=None, help="batch threads (default: all CPUs)")
    p.add_argument("--seconds", type=float, default=20.0)
    p.add_argument("--pool-fractions", default="0.75",
                   help="RedV2AsyncPool batch sizes as fractions of --envs (comma-separated)")
    p.add_argument("--schedulers", default="",
                   help="also time RedV2Batch with these schedulers (comma-separated: rayon, longest_first, gang)")
    p.add_argument("--swap", action="store_true", help="also v2 on emurust.PyBoy in SubprocVecEnv")
    p.add_argument("--ppo-steps", type=int, default=2, help="PPO rollouts per side (0: skip PPO)")
    p.add_argument("--skip-pyboy", action="store_true")
    p.add_argument("--out", type=Path, default=None)
    p.add_argument("--v2-shims", action="store_true",
                   help="stand-ins for scikit-image/mediapy/matplotlib where missing (see install_v2_shims); einops is needed")
    args = p.parse_args()
    args.v2_dir = args.v2_dir.resolve()
    args.rom = args.rom.resolve()
    args.state = (args.state or args.v2_dir / "init.state").resolve()
    sys.path.insert(0, str(args.v2_dir))
    from emurust import pokered_v2

    session = Path("/tmp/pokered_v2_bench")
    session.mkdir(exist_ok=True)
    cfg = v2_config(args, session)
    envs = [int(x) for x in args.envs.split(",")]
    pool_fractions = [float(x) for x in args.pool_fractions.split(",")]
    if not all(0 < f <= 1 for f in pool_fractions):
        p.error("--pool-fractions: each must be in (0, 1]")
    res: dict = {"cpus": os.cpu_count(), "procs": args.procs, "envs": envs, "seconds": args.seconds}
    rng = np.random.default_rng(0)

    if not args.skip_pyboy:
        for swap in [False] + ([True] if args.swap else []):
            venv = subproc(args, cfg, swap)
            venv.reset()
            r = rate(lambda: venv.step(rng.integers(0, 7, args.procs)), args.procs, args.seconds)
            venv.close()
            key = "v2_emurust_pyboy_subproc" if swap else "v2_pyboy_subproc"
            res[key] = r
            print(f"{key} ({args.procs} procs): {r:,.0f} steps/s", flush=True)

    ideal = independent_aggregate(cfg, str(args.v2_dir), args.procs, args.seconds)
    res["independent_procs_aggregate"] = ideal
    print(f"{args.procs} independent processes, 1 env each: {ideal:,.0f} steps/s (the join-free ideal)", flush=True)

    for n in envs:
        res[f"batch_{n}"], threads = sync_rate(cfg, n, args.threads, args.seconds, rng)
        print(f"RedV2Batch {n} envs ({threads} threads): {res[f'batch_{n}']:,.0f} steps/s", flush=True)
        for sched in filter(None, args.schedulers.split(",")):
            r, _ = sync_rate(cfg, n, args.threads, args.seconds, rng, sched)
            res[f"batch_{n}_{sched}"] = r
            print(f"RedV2Batch {n} envs, scheduler {sched}: {r:,.0f} steps/s ({r / ideal:.0%} of the independent processes)",
                  flush=True)
        for fraction in pool_fractions:
            k = max(1, int(fraction * n))
            r = async_rate(cfg, n, k, args.threads, args.seconds, rng)
            res[f"async_{n}_batch{k}"] = r
            print(f"RedV2AsyncPool {n} envs, batch {k}: {r:,.0f} steps/s ({r / ideal:.0%} of the independent processes;"
                  f" sync {res[f'batch_{n}'] / ideal:.0%})", flush=True)

    n = max(envs)
    before = rss()
    b = pokered_v2.RedV2Batch(cfg, n, num_threads=args.threads)
    b.reset()
    for _ in range(20):
        b.step(rng.integers(0, 7, n))
    grown = rss() - before
    res["rss_per_env_bytes"] = grown / n
    res["counted_per_env_bytes"] = b.core.memory_bytes() / n
    print(f"memory per env ({n} envs): RSS {grown / n / 2**20:.2f} MiB, counted {b.core.memory_bytes() / n / 2**20:.2f} MiB", flush=True)
    del b

    if args.ppo_steps > 0:
        from stable_baselines3 import PPO

        ep_length = 2048 * 80
        n_steps = ep_length // 64
        sides = [("emurust", lambda: pokered_v2.RedV2VecEnv(cfg, num_envs=args.procs, num_threads=args.threads))]
        if args.swap:
            # Issue 24: v2's own env with only its import swapped, in SubprocVecEnv as v2 runs it.
            sides.insert(0, ("emurust_pyboy", lambda: subproc(args, cfg, True)))
        if not args.skip_pyboy:
            sides.insert(0, ("pyboy", lambda: subproc(args, cfg, False)))
        for name, make in sides:
            venv = make()
            model = PPO("MultiInputPolicy", venv, verbose=0, n_steps=n_steps, batch_size=512, n_epochs=1, gamma=0.997, ent_coef=0.01, seed=0)
            total = n_steps * args.procs * args.ppo_steps
            t0 = time.perf_counter()
            model.learn(total_timesteps=total)
            r = total / (time.perf_counter() - t0)
            venv.close()
            res[f"ppo_{name}"] = r
            print(f"SB3 PPO v2 settings, {name} ({args.procs} envs, device {model.device}): {r:,.0f} steps/s", flush=True)
        if "ppo_pyboy" in res:
            res["ppo_speedup"] = res["ppo_emurust"] / res["ppo_pyboy"]
            if "ppo_emurust_pyboy" in res:
                res["ppo_speedup_import_swapped"] = res["ppo_emurust_pyboy"] / res["ppo_pyboy"]

    if "v2_pyboy_subproc" in res:
        for n in envs:
            res[f"speedup_batch_{n}"] = res[f"batch_{n}"] / res["v2_pyboy_subproc"]
        print("speedups vs PyBoy SubprocVecEnv:", {k: round(v, 2) for k, v in res.items() if k.startswith(("speedup", "ppo_speedup"))})
    if args.out:
        args.out.write_text(json.dumps(res, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
