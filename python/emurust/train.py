"""``emurust train``: PPO (Stable-Baselines3, CnnPolicy) on one of emurust's games.

    python examples/train_ppo.py --game dodge --steps 200000 --envs 16
    tensorboard --logdir runs/

Progress bar (tqdm/rich), TensorBoard logs under ``--logdir``, and a learning curve (episode
reward per rollout) printed at the end and written to ``<logdir>/<run>/curve.json``.
The lead wires :func:`add_parser` into ``emurust.cli``.
"""

from __future__ import annotations

import argparse
import json
import os
import time
from typing import Any, Optional, Sequence


def add_parser(sub: Any) -> argparse.ArgumentParser:
    """Add the ``train`` subcommand to an ``argparse`` subparsers object."""
    p = sub.add_parser("train", help="train PPO (CnnPolicy) on an emurust game", description=__doc__,
                       formatter_class=argparse.RawDescriptionHelpFormatter)
    _add_arguments(p)
    p.set_defaults(func=run)
    return p


def _add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--game", default="dodge", choices=["dodge", "snake", "runner"])
    p.add_argument("--steps", type=int, default=150_000, help="environment steps in total")
    p.add_argument("--envs", type=int, default=16, help="emulators in the batch")
    p.add_argument("--threads", type=int, default=None, help="Rayon threads (default: all CPUs)")
    p.add_argument("--obs", default="grey_half", choices=["grey", "grey_half"])
    p.add_argument("--frame-stack", type=int, default=4)
    p.add_argument("--n-steps", type=int, default=128, help="PPO rollout length per environment")
    p.add_argument("--batch-size", type=int, default=256)
    p.add_argument("--epochs", type=int, default=4)
    p.add_argument("--lr", type=float, default=3e-4)
    p.add_argument("--ent-coef", type=float, default=0.01)
    p.add_argument("--life-penalty", type=float, default=10.0, help="reward lost per life lost")
    p.add_argument("--no-norm-reward", action="store_true", help="no VecNormalize reward scaling")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--logdir", default="runs", help="TensorBoard log directory")
    p.add_argument("--save", default=None, help="save the model here (.zip)")
    p.add_argument("--no-progress", action="store_true", help="no progress bar")
    p.add_argument("--torch-threads", type=int, default=1,
                   help="PyTorch threads (default 1: on small machines more threads fight the emulator's)")
    p.add_argument("--nature-cnn", action="store_true",
                   help="SB3's default NatureCNN (about 2.5x slower on CPU) instead of the small CNN")


def _small_cnn():
    import torch
    from torch import nn
    from stable_baselines3.common.torch_layers import BaseFeaturesExtractor

    class SmallCNN(BaseFeaturesExtractor):
        """Two conv layers and a 256-unit layer: NatureCNN's shape at a third of its CPU cost."""

        def __init__(self, observation_space, features_dim: int = 256):
            super().__init__(observation_space, features_dim)
            c = observation_space.shape[0]
            self.cnn = nn.Sequential(nn.Conv2d(c, 16, 8, stride=4), nn.ReLU(), nn.Conv2d(16, 32, 4, stride=2),
                                     nn.ReLU(), nn.Flatten())
            with torch.no_grad():
                n = self.cnn(torch.zeros(1, *observation_space.shape)).shape[1]
            self.linear = nn.Sequential(nn.Linear(n, features_dim), nn.ReLU())

        def forward(self, x):
            return self.linear(self.cnn(x))

    return SmallCNN


def run(args: argparse.Namespace) -> dict:
    import numpy as np
    import torch
    from stable_baselines3 import PPO
    from stable_baselines3.common.callbacks import BaseCallback
    from stable_baselines3.common.vec_env import VecFrameStack, VecMonitor, VecNormalize

    from .sb3 import EmurustVecEnv

    if args.torch_threads:
        torch.set_num_threads(args.torch_threads)
    venv = EmurustVecEnv(args.envs, game=args.game, obs=args.obs, num_threads=args.threads,
                         life_penalty=args.life_penalty)
    venv.seed(args.seed)
    env = VecMonitor(venv)  # episode rewards are logged before any scaling
    if not args.no_norm_reward:
        env = VecNormalize(env, norm_obs=False, norm_reward=True, gamma=0.99)
    if args.frame_stack > 1:
        env = VecFrameStack(env, args.frame_stack)

    curve: list[dict] = []

    class Curve(BaseCallback):
        """Mean reward and length of the episodes finished during each rollout."""

        def __init__(self) -> None:
            super().__init__()
            self.rewards: list[float] = []
            self.lengths: list[int] = []
            self.t0 = time.time()

        def _on_step(self) -> bool:
            for info in self.locals["infos"]:
                ep = info.get("episode")
                if ep is not None:
                    self.rewards.append(float(ep["r"]))
                    self.lengths.append(int(ep["l"]))
            return True

        def _on_rollout_end(self) -> None:
            if self.rewards:
                curve.append({"timesteps": int(self.num_timesteps), "seconds": round(time.time() - self.t0, 1),
                              "episodes": len(self.rewards), "mean_reward": float(np.mean(self.rewards)),
                              "mean_length": float(np.mean(self.lengths))})
                self.logger.record("emurust/rollout_mean_reward", float(np.mean(self.rewards)))
            self.rewards, self.lengths = [], []

    run_name = f"ppo_{args.game}_{int(time.time())}"
    model = PPO("CnnPolicy", env, n_steps=args.n_steps, batch_size=args.batch_size, n_epochs=args.epochs,
                learning_rate=args.lr, ent_coef=args.ent_coef, clip_range=0.1, gamma=0.99, gae_lambda=0.95,
                vf_coef=0.5, seed=args.seed,
                policy_kwargs=None if args.nature_cnn else {"features_extractor_class": _small_cnn()}, verbose=0, tensorboard_log=args.logdir, device="cpu")
    t0 = time.time()
    model.learn(total_timesteps=args.steps, callback=Curve(), progress_bar=not args.no_progress,
                tb_log_name=run_name)
    elapsed = time.time() - t0
    if args.save:
        model.save(args.save)
    logdir = os.path.join(args.logdir, run_name + "_1")
    os.makedirs(logdir, exist_ok=True)
    result = {"game": args.game, "steps": args.steps, "envs": args.envs, "seconds": round(elapsed, 1),
              "steps_per_second": round(args.steps / elapsed, 1), "curve": curve, "logdir": logdir}
    with open(os.path.join(logdir, "curve.json"), "w") as f:
        json.dump(result, f, indent=1)
    if curve:
        k = max(1, len(curve) // 5)
        first = float(np.mean([c["mean_reward"] for c in curve[:k]]))
        last = float(np.mean([c["mean_reward"] for c in curve[-k:]]))
        result["first_mean_reward"], result["last_mean_reward"] = first, last
        print(f"{args.steps} steps in {elapsed:.0f} s ({args.steps / elapsed:.0f} steps/s); "
              f"mean episode reward: first {k} rollouts {first:.1f} -> last {k} rollouts {last:.1f}")
        print("timesteps  seconds  episodes  mean_reward  mean_length")
        for c in curve:
            print(f"{c['timesteps']:9d}  {c['seconds']:7.1f}  {c['episodes']:8d}  {c['mean_reward']:11.1f}  "
                  f"{c['mean_length']:11.1f}")
    print(f"TensorBoard logs: {logdir}")
    env.close()
    return result


def main(argv: Optional[Sequence[str]] = None) -> dict:
    p = argparse.ArgumentParser(prog="train_ppo", description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    _add_arguments(p)
    return run(p.parse_args(argv))


if __name__ == "__main__":
    main()
