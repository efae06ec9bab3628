"""``emurust play``: watch a trained agent (or a random policy) play, as numbers and as a GIF.

    emurust play runs/dodge_ppo_seed0_<time>/model.zip        # the agent `emurust train` saved
    emurust play runs/dodge_ppo_seed0_<time>                  # the same (its run directory)
    emurust play --random --game dodge                        # uniformly random actions
    emurust play MODEL --episodes 5 --gif dodge.gif --seed 7

Each episode's game score (the game's own, from RAM), shaped return and length are printed; the
GIF shows every step of every episode (one frame per step, at the task's 60/frame_skip frames per
second) and loops. The environments are those the model was trained on (``task.json`` beside
the model); agents sample their actions, as in training and in ``emurust train``'s evaluation
(``--deterministic`` takes the most likely action instead).
"""

from __future__ import annotations

import argparse
import json
import pathlib
import sys
from typing import Any, Optional, Sequence

import numpy as np


def add_parser(sub: Any) -> argparse.ArgumentParser:
    p = sub.add_parser("play", help="run a saved agent (or --random) and write a GIF of it playing",
                       description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    _add_arguments(p)
    p.set_defaults(func=run)
    return p


def _add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("model", nargs="?", help="model.zip saved by `emurust train`, or its run directory")
    p.add_argument("--random", action="store_true", help="uniformly random actions instead of a model")
    p.add_argument("--game", default="dodge", choices=["dodge", "snake", "runner"], help="with --random: the game")
    p.add_argument("--episodes", type=int, default=3)
    p.add_argument("--seed", type=int, default=0, help="environment and action-sampling seed")
    p.add_argument("--deterministic", action="store_true", help="the policy's most likely action at every step")
    p.add_argument("--max-steps", type=int, default=None, help="steps per episode at most (default: the task's limit)")
    p.add_argument("--gif", default=None, help="GIF path (default: play.gif beside the model, ./play-random.gif with --random)")
    p.add_argument("--scale", type=int, default=2, help="GIF pixel scale (default %(default)s)")


def _find_model(path: str) -> tuple[pathlib.Path, pathlib.Path]:
    p = pathlib.Path(path)
    if p.is_dir():
        p = p / "model.zip"
    if not p.is_file() and p.with_suffix(".zip").is_file():
        p = p.with_suffix(".zip")
    if not p.is_file():
        raise SystemExit(f"emurust play: no model at {path}")
    for task in (p.parent / (p.stem + ".task.json"), p.parent / "task.json"):
        if task.is_file():
            return p, task
    raise SystemExit(f"emurust play: no task.json beside {p} (written by `emurust train`)")


def play(cfg: dict, model: Any, episodes: int, *, seed: int = 0, deterministic: bool = False,
         max_steps: Optional[int] = None) -> tuple[list[dict], list[np.ndarray]]:
    """Play `episodes` episodes one after the other in one environment; returns per-episode
    results and the (144, 160) grey frame after the reset and after every step."""
    import torch

    from .train import make_venv

    if max_steps:
        cfg = dict(cfg, max_episode_steps=int(max_steps))
    env = make_venv(cfg, 1, num_threads=1, frames=True)
    inner = env
    while not hasattr(inner, "frames"):
        inner = inner.venv
    env.seed(seed)
    obs = env.reset()
    rng = np.random.default_rng(seed)
    frames = [inner.frames[0, 0].copy()]
    results: list[dict] = []
    shaped, steps = 0.0, 0
    with torch.random.fork_rng():
        torch.manual_seed(seed)
        while len(results) < episodes:
            if model is None:
                action = rng.integers(0, len(cfg["actions"]), 1)
            else:
                action, _ = model.predict(obs, deterministic=deterministic)
            obs, rewards, dones, infos = env.step(action)
            shaped += float(rewards[0])
            steps += 1
            if dones[0]:
                frames.append(infos[0]["terminal_frame"][0].copy())
                results.append({"episode": len(results) + 1, "score": infos[0]["score"], "shaped_return": round(shaped, 3),
                                "steps": steps, "lives_left": infos[0]["lives"],
                                "ended": "game over" if infos[0]["lives"] == 0 else "step limit"})
                shaped, steps = 0.0, 0
                if len(results) < episodes:
                    frames.append(inner.frames[0, 0].copy())
            else:
                frames.append(inner.frames[0, 0].copy())
    env.close()
    return results, frames


def run(args: argparse.Namespace) -> int:
    from .gif import write_gif

    if args.episodes < 1:
        raise SystemExit("emurust play: --episodes must be at least 1")
    if args.random == bool(args.model):
        raise SystemExit("emurust play: give a MODEL or --random (not both)")
    if args.random:
        from .train import task_config

        ns = argparse.Namespace(game=args.game, obs=None, frame_stack=None, frame_skip=None, life_penalty=None)
        cfg, model, who = task_config(ns), None, "random policy"
        gif = pathlib.Path(args.gif or "play-random.gif")
    else:
        from stable_baselines3 import PPO

        path, task = _find_model(args.model)
        cfg = json.loads(task.read_text())
        model, who = PPO.load(str(path), device="cpu"), f"agent {path}"
        gif = pathlib.Path(args.gif) if args.gif else path.parent / "play.gif"
    results, frames = play(cfg, model, args.episodes, seed=args.seed, deterministic=args.deterministic,
                           max_steps=args.max_steps)
    print(f"{who} on {cfg['game']}, environment seed {args.seed}:")
    print("episode  game score  shaped return  steps  ended")
    for r in results:
        print(f"{r['episode']:7d}  {r['score']:10d}  {r['shaped_return']:13.1f}  {r['steps']:5d}  {r['ended']}")
    scores = [r["score"] for r in results]
    print(f"mean game score {np.mean(scores):.1f} over {len(scores)} episode(s)")
    fps = 60.0 / cfg["frame_skip"]
    s = max(1, int(args.scale))
    gif.parent.mkdir(parents=True, exist_ok=True)
    writer = write_gif(str(gif), [f.repeat(s, 0).repeat(s, 1) for f in frames], fps=fps)
    print(f"GIF: {gif} ({len(frames)} frames at {fps:g} fps, {writer})")
    sys.stdout.flush()
    return 0


def main(argv: Optional[Sequence[str]] = None) -> int:
    p = argparse.ArgumentParser(prog="emurust play", description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    _add_arguments(p)
    return run(p.parse_args(argv))


if __name__ == "__main__":
    sys.exit(main())
