"""A learning curve of PokemonRedExperiments v2's PPO run, on emurust's batch and on PyBoy.

    python benches/pokered_v2_curve.py --rom PokemonRed.gb --v2-dir PokemonRedExperiments-v2 \\
        --side emurust --envs 64 --seconds 540 --out curve-emurust.json
    python benches/pokered_v2_curve.py ... --side pyboy --envs 64 --seconds 300 --out curve-pyboy.json

v2's own settings (baseline_fast_v2.py): its env config (action_freq 24, reward_scale 0.5,
explore_weight 0.25, episodes of 2048 * 80 steps), PPO MultiInputPolicy with
n_steps = max_steps // 64, batch 512, 1 epoch, gamma 0.997, ent_coef 0.01, the same seed on both
sides. ``--side emurust``: ``emurust.pokered_v2.RedV2VecEnv`` (one process, all envs stepped in
Rust); ``--side pyboy``: v2's ``RedGymEnv`` on PyBoy 2.8.1 in SB3's SubprocVecEnv, one process per
env, as v2's script runs it. Training stops after the first rollout that ends past ``--seconds`` (it is trained on).

After every rollout it records: timesteps, wall seconds, the rollout's mean reward per step, and
over the envs the mean and max of v2's ``total_reward`` (the episode's reward so far, in v2's
scale), ``max_map_progress``, ``max_event_rew`` and the number of distinct coordinates seen
(``seen_coords``). Episodes are 163,840 steps, longer than such a run, so these are the curve.
Since both backends give identical observations and rewards for the same actions, the two curves
differ only where PPO's own arithmetic does (GPU kernels are not bit-deterministic).
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from pokered_v2_batch import subproc, v2_config  # noqa: E402


def stats(env) -> dict:
    """Means and maxima over the envs of v2's progress fields (one attribute fetch each)."""
    out: dict = {}
    for name in ("total_reward", "max_map_progress", "max_event_rew"):
        vals = np.asarray(env.get_attr(name), dtype=np.float64)
        out[name] = {"mean": float(vals.mean()), "max": float(vals.max())}
    seen = np.asarray([len(s) for s in env.get_attr("seen_coords")], dtype=np.float64)
    out["seen_coords"] = {"mean": float(seen.mean()), "max": float(seen.max())}
    return out


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--rom", type=Path, required=True)
    p.add_argument("--v2-dir", type=Path, required=True)
    p.add_argument("--state", type=Path, default=None, help="start state (default: <v2-dir>/init.state)")
    p.add_argument("--side", choices=["emurust", "pyboy"], required=True)
    p.add_argument("--envs", type=int, default=64, help="environments (v2's num_cpu: 64)")
    p.add_argument("--threads", type=int, default=None, help="emurust batch threads (default: all CPUs)")
    p.add_argument("--seconds", type=float, default=300.0, help="stop after the rollout that ends past this")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--device", default="auto", help="torch device for PPO (auto: CUDA when present)")
    p.add_argument("--v2-shims", action="store_true", help="stand-ins for skimage/mediapy/matplotlib where missing")
    p.add_argument("--out", type=Path, required=True)
    args = p.parse_args()
    args.v2_dir = args.v2_dir.resolve()
    args.rom = args.rom.resolve()
    args.state = (args.state or args.v2_dir / "init.state").resolve()
    args.procs = args.envs
    if args.envs < 1 or args.seconds <= 0:
        p.error("--envs and --seconds must be positive")

    from stable_baselines3 import PPO
    from stable_baselines3.common.callbacks import BaseCallback

    session = Path(f"/tmp/pokered_v2_curve_{args.side}")
    session.mkdir(parents=True, exist_ok=True)
    cfg = v2_config(args, session)
    t_setup = time.perf_counter()
    if args.side == "emurust":
        from emurust.pokered_v2 import RedV2VecEnv

        env = RedV2VecEnv(cfg, num_envs=args.envs, num_threads=args.threads)
    else:
        env = subproc(args, cfg, swap=False)
    setup_s = time.perf_counter() - t_setup
    points: list = []
    t0 = [0.0]

    max_steps = cfg["max_steps"]
    model = PPO("MultiInputPolicy", env, verbose=0, n_steps=max_steps // 64, batch_size=512, n_epochs=1,
                gamma=0.997, ent_coef=0.01, seed=args.seed, device=args.device)
    rollout = (max_steps // 64) * args.envs

    class Curve(BaseCallback):
        """Records a point after every rollout; past the deadline, stops at the next step (the
        rollout just recorded was trained on, the next one is not collected)."""

        over = False

        def _on_training_start(self) -> None:
            t0[0] = time.perf_counter()

        def _on_step(self) -> bool:
            return not self.over

        def _on_rollout_end(self) -> None:
            point = {
                "timesteps": int(self.model.num_timesteps),
                "seconds": round(time.perf_counter() - t0[0], 2),
                "rollout_mean_reward": float(np.mean(self.model.rollout_buffer.rewards)),
                **stats(self.training_env),
            }
            points.append(point)
            print(json.dumps(point), flush=True)
            self.over = point["seconds"] > args.seconds

    model.learn(total_timesteps=10**10, callback=Curve())
    total_s = time.perf_counter() - t0[0]
    env.close()
    res = {
        "side": args.side, "envs": args.envs, "seed": args.seed, "device": str(model.device),
        "setup_seconds": round(setup_s, 1), "train_seconds": round(total_s, 1),
        "timesteps": int(model.num_timesteps), "steps_per_second": model.num_timesteps / total_s,
        "rollout_steps": rollout, "points": points,
    }  # fmt: skip
    args.out.write_text(json.dumps(res, indent=1))
    print(f"{args.side}: {model.num_timesteps:,} steps in {total_s:.0f} s ({res['steps_per_second']:,.0f} steps/s), "
          f"{len(points)} rollouts -> {args.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
