"""emurust play: watch a trained agent (or a random policy) play, as numbers and as a GIF.

    emurust play runs/dodge_ppo_seed0_<time>/model.zip        # the agent emurust train saved
    emurust play runs/dodge_ppo_seed0_<time>                  # the same (its run directory)
    emurust play --random --game dodge                        # uniformly random actions
    emurust play MODEL --episodes 5 --gif dodge.gif --seed 7

Each episode's game score (the game's own, from RAM), shaped return and length are printed; the
GIF shows every step of every episode (one frame per step, at the task's 60/frame_skip frames per
second) and loops. The environments are those the model was trained on (task.json beside the
model); agents sample their actions, as in training and in emurust train's evaluation
(--deterministic takes the most likely action instead). PyTorch runs on 1 thread unless
--torch-threads says otherwise.
"""

from __future__ import annotations

import argparse
import json
import pathlib
import sys
from typing import Any, Optional, Sequence

import numpy as np

from .command_line import MAX_EPISODES, MAX_SEED, MAX_STEPS, MAX_THREADS, UsageError, check_output_file, int_range
from .policies import DEFAULT_TORCH_THREADS, set_torch_threads


def add_parser(sub: Any) -> argparse.ArgumentParser:
    p = sub.add_parser("play", help="run a saved agent (or --random) and write a GIF of it playing",
                       description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    _add_arguments(p)
    p.set_defaults(func=run)
    return p


def _add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("model", nargs="?", help="model.zip saved by emurust train, or its run directory")
    p.add_argument("--random", action="store_true", help="uniformly random actions instead of a model")
    p.add_argument("--game", default="dodge", choices=["dodge", "snake", "runner"], help="with --random: the game")
    p.add_argument("--episodes", type=int_range(1, MAX_EPISODES), default=3, help="episodes to play (default 3)")
    p.add_argument("--seed", type=int_range(0, MAX_SEED), default=0, help="environment and action-sampling seed (default 0)")
    p.add_argument("--deterministic", action="store_true", help="the policy's most likely action at every step")
    p.add_argument("--max-steps", type=int_range(1, MAX_STEPS), default=None,
                   help="steps per episode at most (default: the task's limit)")
    p.add_argument("--gif", default=None,
                   help="GIF path; its directory must exist (default: play.gif beside the model, ./play-random.gif with --random)")
    p.add_argument("--scale", type=int_range(1, 16), default=2, help="GIF pixel scale, 1 to 16 (default %(default)s)")
    p.add_argument("--torch-threads", type=int_range(0, MAX_THREADS), default=DEFAULT_TORCH_THREADS,
                   help="PyTorch threads (default 1; 0 keeps PyTorch's own default)")


def _find_model(path: str) -> tuple[pathlib.Path, pathlib.Path]:
    p = pathlib.Path(path)
    if p.is_dir():
        p = p / "model.zip"
    if not p.is_file() and p.with_suffix(".zip").is_file():
        p = p.with_suffix(".zip")
    if not p.is_file():
        raise UsageError(f"no model at {path}")
    for task in (p.parent / (p.stem + ".task.json"), p.parent / "task.json"):
        if task.is_file():
            return p, task
    raise UsageError(f"no task.json beside {p} (emurust train writes it)")


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

    if args.random == bool(args.model):
        raise UsageError("give a MODEL or --random (not both)")
    if args.random:
        from .train import task_config

        ns = argparse.Namespace(game=args.game, obs=None, frame_stack=None, frame_skip=None, life_penalty=None)
        cfg, model, who = task_config(ns), None, "random policy"
        gif = pathlib.Path(args.gif or "play-random.gif")
        check_output_file(str(gif), "--gif")
    else:
        path, task = _find_model(args.model)
        gif = pathlib.Path(args.gif) if args.gif else path.parent / "play.gif"
        check_output_file(str(gif), "--gif")
        try:
            cfg = json.loads(task.read_text())
        except (OSError, ValueError) as e:
            raise UsageError(f"cannot read {task}: {e}") from None
        threads = set_torch_threads(args.torch_threads)
        from stable_baselines3 import PPO

        model, who = PPO.load(str(path), device="cpu"), f"agent {path} ({threads} PyTorch thread{'s' if threads != 1 else ''})"
    results, frames = play(cfg, model, args.episodes, seed=args.seed, deterministic=args.deterministic,
                           max_steps=args.max_steps)
    print(f"{who} on {cfg['game']}, environment seed {args.seed}:")
    print("episode  game score  shaped return  steps  ended")
    for r in results:
        print(f"{r['episode']:7d}  {r['score']:10d}  {r['shaped_return']:13.1f}  {r['steps']:5d}  {r['ended']}")
    scores = [r["score"] for r in results]
    print(f"mean game score {np.mean(scores):.1f} over {len(scores)} episode(s)")
    fps = 60.0 / cfg["frame_skip"]
    s = args.scale
    writer = write_gif(str(gif), [f.repeat(s, 0).repeat(s, 1) for f in frames], fps=fps)
    print(f"GIF: {gif} ({len(frames)} frames at {fps:g} fps, {writer})")
    sys.stdout.flush()
    return 0


def main(argv: Optional[Sequence[str]] = None) -> int:
    """``emurust play ARGS``: the exit status (2 with one line of error for bad arguments)."""
    from .cli import main as cli_main

    return cli_main(["play", *(sys.argv[1:] if argv is None else argv)])


if __name__ == "__main__":
    sys.exit(main())
