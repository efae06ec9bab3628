"""Train PPO (Stable-Baselines3) on emurust's Pong until it beats the reference's scripted
opponent, and report how many steps that took.

"Beats" = over --eval-games seeded games (capped at --eval-steps steps each), the agent wins
more than half of the points played. Evaluated every --eval-every steps, on emurust and on the
C reference (the same games and sampling seed: the results match when the two are identical).

    python examples/train_pong.py [--max-steps 2000000] [--envs 32] [--device cpu] [--out pong-ppo.json]
"""

from __future__ import annotations

import argparse
import json
import time

import numpy as np


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--max-steps", type=int, default=2_000_000)
    ap.add_argument("--envs", type=int, default=32)
    ap.add_argument("--eval-every", type=int, default=65_536)
    ap.add_argument("--eval-games", type=int, default=16)
    ap.add_argument("--eval-steps", type=int, default=3000)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--frameskip", type=int, default=1, help="the reference's frameskip parameter (pong.py's default 1)")
    ap.add_argument("--deterministic", action="store_true", help="evaluate the policy's most likely action (default: sample)")
    ap.add_argument("--learning-rate", type=float, default=1e-3)
    ap.add_argument("--keep-training", action="store_true",
                    help="train on to --max-steps after the agent first beats the opponent")
    ap.add_argument("--n-steps", type=int, default=128, help="PPO's rollout length per environment")
    ap.add_argument("--device", default="cpu")
    ap.add_argument("--torch-threads", type=int, default=1)
    ap.add_argument("--reference", action="store_true", help="also evaluate on the C reference (needs EMURUST_REFERENCES)")
    ap.add_argument("--out", default=None)
    args = ap.parse_args()

    import torch
    from stable_baselines3 import PPO
    from stable_baselines3.common.vec_env import VecMonitor

    from emurust.sb3 import PongVecEnv
    from emurust.verify import pong as vp

    torch.set_num_threads(args.torch_threads)
    torch.manual_seed(args.seed)
    venv = VecMonitor(PongVecEnv(args.envs, max_episode_steps=3000, frameskip=args.frameskip))
    venv.seed(args.seed)
    model = PPO("MlpPolicy", venv, n_steps=args.n_steps, batch_size=1024, n_epochs=4, learning_rate=args.learning_rate, gamma=0.99,
                gae_lambda=0.95, ent_coef=0.01, clip_range=0.2, seed=args.seed, verbose=0, device=args.device)
    t0 = time.perf_counter()
    history = []
    steps = 0
    beaten_at = None
    while steps < args.max_steps:
        model.learn(total_timesteps=args.eval_every, reset_num_timesteps=False)
        steps = model.num_timesteps
        row = {"steps": steps, "seconds": round(time.perf_counter() - t0, 1)}
        for backend in ("emurust", "reference") if args.reference else ("emurust",):
            e = vp.evaluate(model, backend, args.eval_games, seed=10_000, max_steps=args.eval_steps,
                            deterministic=args.deterministic, frameskip=args.frameskip)
            row[backend] = {"mean_return": float(np.mean(e.returns)), "points_won": sum(e.points_won),
                            "points_lost": sum(e.points_lost), "point_share": e.point_share,
                            "games_won": e.games_won, "games_lost": e.games_lost}
        history.append(row)
        ev = row["emurust"]
        print(f"{steps:>9,} steps ({row['seconds']:.0f} s): mean return {ev['mean_return']:.1f}, points won "
              f"{ev['points_won']} / lost {ev['points_lost']} ({ev['point_share']:.0%}), games won {ev['games_won']}"
              + (f"; reference: {row['reference']['point_share']:.0%}" if args.reference else ""), flush=True)
        if ev["point_share"] > 0.5 and beaten_at is None:
            beaten_at = steps
            print(f"beats the scripted opponent after {steps:,} steps", flush=True)
            if not args.keep_training:
                break
    if args.out:
        with open(args.out, "w") as f:
            json.dump({"beaten_at": beaten_at, "history": history, "envs": args.envs, "seed": args.seed,
                       "frameskip": args.frameskip, "deterministic_eval": args.deterministic}, f, indent=1)


if __name__ == "__main__":
    main()
