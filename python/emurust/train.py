"""emurust train: PPO (Stable-Baselines3) on one of emurust's games, then an honest evaluation.

    emurust train --steps 60000                   # Dodge, seed 0: a few minutes on 2 cores
    emurust train --seed 3 --logdir runs          # another seed: another run
    tensorboard --logdir runs
    emurust play runs/<run>/model.zip             # watch it (writes a GIF)

Everything goes into one run directory, <logdir>/<game>_ppo_seed<S>_<time>/: the TensorBoard
events, model.zip (the agent) with task.json (the task it was trained on, read by
emurust play), curve.json and curve.png (the learning curve) and eval.json.

The task (see the module emurust.games): Dodge observes the game's state as 45 numbers read from
RAM (ship, shot, and a radar of the rocks relative to the ship; the environments' obs="features")
with an MLP policy; --obs grey_half trains a CNN on the (72, 80) screen instead (much slower per
step, and needs many more steps). Rewards are the game's own score differences plus, as shaping
only, --life-penalty per life lost.

At the end the agent (sampling its actions, as it was trained) and a uniformly random policy play
the same --eval-episodes episodes (environments seeded with held-out seeds that training never
used), and both mean game scores are printed with 95% confidence intervals (Student t), next to
the shaped returns.

PyTorch runs on 1 thread unless --torch-threads says otherwise: with more, its threads and the
emulators' fight for the cores, and training can run many times slower.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import pathlib
import sys
import time
from typing import Any, Optional, Sequence

import numpy as np

from ._atomic import atomic_write
from ._stats import mean_ci
from .command_line import (MAX_ENVS, MAX_EPISODES, MAX_STEPS, MAX_THREADS, UsageError, check_output_dir,
                           check_output_file, float_range, int_range, probability)
from .policies import DEFAULT_TORCH_THREADS, set_torch_threads, small_cnn

__all__ = ["train", "evaluate", "make_venv", "task_config", "mean_ci", "report", "main"]

DEFAULT_STEPS = 60_000
EVAL_SEED = 1_000_000_000  # environment seeds EVAL_SEED.. are used by evaluations only
ENV_SEED_STRIDE = 10_000  # training's environment seeds: seed * ENV_SEED_STRIDE + i
# Training's environment seeds stay below the evaluation's.
MAX_TRAIN_SEED = EVAL_SEED // ENV_SEED_STRIDE - 1


def add_parser(sub: Any) -> argparse.ArgumentParser:
    """Add the ``train`` subcommand to an ``argparse`` subparsers object."""
    p = sub.add_parser("train", help="train PPO on an emurust game, evaluate it against a random policy",
                       description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    _add_arguments(p)
    p.set_defaults(func=run)
    return p


def _add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--game", default="dodge", choices=["dodge", "snake", "runner", "pokered_v2"],
                   help="the game (default dodge); pokered_v2: PokemonRedExperiments v2's env and PPO settings (needs --rom, --v2-dir)")
    p.add_argument("--rom", default=None, help="pokered_v2: your Pokémon Red ROM")
    p.add_argument("--v2-dir", default=None, help="pokered_v2: PokemonRedExperiments' v2 folder (map_data.json, events.json, init.state)")
    p.add_argument("--init-state", default=None, help="pokered_v2: start state (default: <v2-dir>/init.state)")
    p.add_argument("--max-steps", type=int_range(1, MAX_STEPS), default=2048 * 80, help="pokered_v2: episode length (v2's 163840)")
    p.add_argument("--steps", type=int_range(1, MAX_STEPS), default=DEFAULT_STEPS,
                   help="environment steps in total (default %(default)s)")
    p.add_argument("--envs", type=int_range(1, MAX_ENVS), default=16, help="emulators in the batch (default 16)")
    p.add_argument("--threads", type=int_range(1, MAX_THREADS), default=None,
                   help="threads stepping the emulators (default: one per CPU)")
    p.add_argument("--torch-threads", type=int_range(0, MAX_THREADS), default=DEFAULT_TORCH_THREADS,
                   help="PyTorch threads (default 1: on small machines more threads fight the emulators'; "
                        "0 keeps PyTorch's own default, one per core)")
    p.add_argument("--obs", default=None, choices=["features", "grey_half", "grey"],
                   help="policy input: the game's RAM features (MLP; Dodge's default) or the screen (CNN)")
    p.add_argument("--frame-stack", type=int_range(1, 64), default=None,
                   help="observations stacked (default: 1 for features, 4 for pixels)")
    p.add_argument("--frame-skip", type=int_range(1, 600), default=None, help="frames per step (default: the task's)")
    p.add_argument("--life-penalty", type=float_range(0, 1e6), default=None,
                   help="shaping: reward lost per life lost (default: the task's)")
    p.add_argument("--n-steps", type=int_range(1, 1_000_000), default=64,
                   help="PPO rollout length per environment (default %(default)s)")
    p.add_argument("--batch-size", type=int_range(1, 10_000_000), default=256,
                   help="PPO minibatch size (default %(default)s; at most one rollout)")
    p.add_argument("--epochs", type=int_range(1, 1000), default=10,
                   help="PPO passes over each rollout (default %(default)s)")
    p.add_argument("--lr", type=float_range(0, 1, low_open=True), default=1e-3,
                   help="learning rate of the Adam optimiser (default %(default)s)")
    p.add_argument("--ent-coef", type=float_range(0, 10), default=0.01,
                   help="entropy bonus weight (default %(default)s)")
    p.add_argument("--clip", type=float_range(0, 10, low_open=True), default=0.2,
                   help="PPO clip range of the probability ratio (default %(default)s)")
    p.add_argument("--gamma", type=probability, default=0.99, help="discount factor, 0 to 1 (default %(default)s)")
    p.add_argument("--no-norm-reward", action="store_true", help="no reward scaling (VecNormalize)")
    p.add_argument("--nature-cnn", action="store_true", help="pixels: SB3's NatureCNN instead of the small CNN")
    p.add_argument("--seed", type=int_range(0, MAX_TRAIN_SEED), default=0,
                   help=f"seeds PyTorch, the action sampling and the environments (0 to {MAX_TRAIN_SEED:,}; default 0)")
    p.add_argument("--logdir", default="runs", help="parent of the run directory (TensorBoard logs and all outputs)")
    p.add_argument("--save", default=None,
                   help="model path (default: <run dir>/model.zip); missing directories are created")
    p.add_argument("--eval-episodes", type=int_range(2, MAX_EPISODES), default=32,
                   help="evaluation episodes for the agent and the random policy (default %(default)s)")
    p.add_argument("--no-progress", action="store_true", help="no progress lines while training")


# ---------------------------------------------------------------- the task


def task_config(args: argparse.Namespace) -> dict:
    """The task the agent is trained on, as saved in ``task.json`` (everything ``emurust play``
    needs to rebuild its environment)."""
    from .games import GAMES

    task = GAMES[args.game]
    obs = args.obs or ("features" if task.features is not None else "grey_half")
    if obs == "features" and task.features is None:
        raise UsageError(f"{args.game} has no RAM features; use --obs grey_half")
    frame_skip = args.frame_skip or task.frame_skip
    return {
        "game": args.game,
        "obs": obs,
        "frame_stack": args.frame_stack or (1 if obs == "features" else 4),
        "frame_skip": frame_skip,
        "press_frames": max(1, round(task.press_frames * frame_skip / task.frame_skip)) if args.frame_skip else task.press_frames,
        "life_penalty": task.life_penalty if args.life_penalty is None else args.life_penalty,
        "max_episode_steps": task.max_episode_steps,
        "noop_max": task.noop_max,
        "actions": list(task.actions),
    }


def make_venv(cfg: dict, num_envs: int, *, num_threads: Optional[int] = None, frames: bool = False):
    """The environments of task `cfg`, as the policy sees them: ``EmurustVecEnv`` (observation
    ``cfg["obs"]``: the game's RAM features, ``obs="features"``, or pixels) -> the policy's
    observation, with ``info["score"]`` = the game's score at the end of each episode ->
    ``VecFrameStack``. With ``frames``, the wrapper also keeps the (144, 160) grey screen of every
    step (``.frames``, and ``info["terminal_frame"]``) for GIFs."""
    from stable_baselines3.common.vec_env import VecEnvWrapper, VecFrameStack

    from .games import RAM_BLOCK, score_of
    from .sb3 import EmurustVecEnv

    obs = cfg["obs"]
    # The game's RAM block rides along for the score and lives of finished episodes.
    names = [obs, "ram"] + (["grey"] if frames and obs != "grey" else [])
    venv = EmurustVecEnv(num_envs, game=cfg["game"], obs=names, ram=[RAM_BLOCK], actions=cfg["actions"],
                         frame_skip=cfg["frame_skip"], press_frames=cfg["press_frames"],
                         life_penalty=cfg["life_penalty"], max_episode_steps=cfg["max_episode_steps"],
                         noop_max=cfg["noop_max"], num_threads=num_threads)

    class _TaskObs(VecEnvWrapper):
        def __init__(self, v):
            super().__init__(v, observation_space=v.observation_space[obs])
            self.frames: Optional[np.ndarray] = None

        def _convert(self, raw: Any) -> np.ndarray:
            if frames:
                self.frames = raw["grey"]
            return raw[obs]

        def reset(self):
            return self._convert(self.venv.reset())

        def step_wait(self):
            raw, rewards, dones, infos = self.venv.step_wait()
            for i in np.flatnonzero(dones):
                last = infos[i]["terminal_observation"]
                infos[i]["score"] = int(score_of(last["ram"]))
                infos[i]["lives"] = int(last["ram"][2])
                if frames:
                    infos[i]["terminal_frame"] = last["grey"]
                infos[i]["terminal_observation"] = last[obs]
            return self._convert(raw), rewards, dones, infos

    env: Any = _TaskObs(venv)
    if cfg["frame_stack"] > 1:
        env = VecFrameStack(env, cfg["frame_stack"])
    return env


# ---------------------------------------------------------------- evaluation


def evaluate(cfg: dict, policy: Any, episodes: int, *, seed: int = EVAL_SEED, deterministic: bool = False,
             num_threads: Optional[int] = None) -> dict:
    """Play one episode in each of `episodes` environments seeded ``seed, seed+1, ...`` with
    `policy` (an SB3 model, or None for uniformly random actions drawn from a generator seeded with
    `seed`). Returns per-episode game scores, shaped returns and lengths."""
    import torch

    env = make_venv(cfg, episodes, num_threads=num_threads)
    env.seed(seed)
    obs = env.reset()
    rng = np.random.default_rng(seed)
    n_actions = len(cfg["actions"])
    done = np.zeros(episodes, bool)
    score = np.zeros(episodes, np.int64)
    shaped = np.zeros(episodes)
    length = np.zeros(episodes, np.int64)
    with torch.random.fork_rng():
        torch.manual_seed(seed)
        while not done.all():
            if policy is None:
                actions = rng.integers(0, n_actions, episodes)
            else:
                actions, _ = policy.predict(obs, deterministic=deterministic)
            obs, rewards, dones, infos = env.step(actions)
            live = ~done
            shaped[live] += rewards[live]
            length[live] += 1
            for i in np.flatnonzero(dones & live):
                score[i] = infos[i]["score"]
            done |= dones
    env.close()
    return {"score": score.tolist(), "shaped_return": shaped.round(3).tolist(), "length": length.tolist()}


def _summary(ev: dict) -> dict:
    m, h = mean_ci(ev["score"])
    ms, hs = mean_ci(ev["shaped_return"])
    return {"score_mean": round(m, 2), "score_ci95": round(h, 2), "shaped_mean": round(ms, 2), "shaped_ci95": round(hs, 2),
            "length_mean": round(float(np.mean(ev["length"])), 1), **ev}


# ---------------------------------------------------------------- the learning curve picture


def write_curve_png(path: str, curve: list, agent: dict, random: dict, title: str) -> str:
    """Mean game score of the training episodes per rollout, the evaluated agent and random policy
    (95% CIs). Matplotlib when installed, else a plain raster through :mod:`emurust.verify.png`.
    Returns the writer used."""
    xs = [c["timesteps"] for c in curve]
    ys = [c["mean_score"] for c in curve]
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        from .verify.png import write_png

        write_png(path, _raster_curve(xs, ys, agent, random))
        return "emurust"
    fig, ax = plt.subplots(figsize=(7, 4), dpi=100)
    ax.plot(xs, ys, color="C0", label="training episodes (mean game score per rollout)")
    if any(c.get("mean_shaped", c["mean_score"]) != c["mean_score"] for c in curve):  # only when shaping
        ax.plot(xs, [c.get("mean_shaped", np.nan) for c in curve], color="C0", alpha=0.35, ls=":", label="same, shaped return")
    end = xs[-1] if xs else 1
    for name, ev, color in (("agent (evaluation)", agent, "C2"), ("random policy", random, "C3")):
        m, h = ev["score_mean"], ev["score_ci95"]
        ax.axhspan(m - h, m + h, color=color, alpha=0.15)
        ax.axhline(m, color=color, ls="--", label=f"{name}: {m:.1f} \u00b1 {h:.1f}")
    ax.set_xlim(0, end)
    ax.set_xlabel("environment steps")
    ax.set_ylabel("game score per episode")
    ax.set_title(title, fontsize=10)
    ax.legend(fontsize=8, loc="upper left")
    ax.grid(alpha=0.3)
    fig.tight_layout()
    fig.savefig(path)
    plt.close(fig)
    return "matplotlib"


_DIGITS = {  # 3x5 pixel font
    "0": "111101101101111", "1": "010110010010111", "2": "111001111100111", "3": "111001111001111",
    "4": "101101111001001", "5": "111100111001111", "6": "111100111101111", "7": "111001001001001",
    "8": "111101111101111", "9": "111101111001111", "k": "100101110101101",
}


def _text(img: np.ndarray, x: int, y: int, s: str, scale: int = 2) -> None:
    for ch in s:
        glyph = _DIGITS.get(ch)
        if glyph is not None:
            g = np.array([int(b) for b in glyph], bool).reshape(5, 3).repeat(scale, 0).repeat(scale, 1)
            img[y : y + g.shape[0], x : x + g.shape[1]][g] = 0
        x += 4 * scale


def _raster_curve(xs: list, ys: list, agent: dict, random: dict, w: int = 640, h: int = 360) -> np.ndarray:
    """The same chart without matplotlib: training curve (blue), agent (green) and random (red)
    evaluation means with their CI bands; y axis labelled at 0 and at its top."""
    img = np.full((h, w, 3), 255, np.uint8)
    left, right, top, bottom = 60, w - 20, 20, h - 40
    hi = max([1.0] + list(ys) + [agent["score_mean"] + agent["score_ci95"], random["score_mean"] + random["score_ci95"]])
    hi = float(10 ** math.floor(math.log10(hi)) * math.ceil(hi / 10 ** math.floor(math.log10(hi))))
    x_end = max(xs) if xs else 1

    def py(v: float) -> int:
        return int(round(bottom - (bottom - top) * min(max(v, 0.0), hi) / hi))

    def px(t: float) -> int:
        return int(round(left + (right - left) * t / x_end))

    for frac in (0.25, 0.5, 0.75, 1.0):
        img[py(hi * frac), left:right] = 225
    for ev, color in ((random, (220, 60, 60)), (agent, (40, 160, 60))):
        a, b = py(ev["score_mean"] + ev["score_ci95"]), py(ev["score_mean"] - ev["score_ci95"])
        band = img[a : b + 1, left:right].astype(int)
        img[a : b + 1, left:right] = (band * 3 + np.array(color)) // 4
        img[py(ev["score_mean"]), left:right:6] = color
    pts = [(px(t), py(v)) for t, v in zip(xs, ys)]
    for (x0, y0), (x1, y1) in zip(pts, pts[1:] or pts):
        n = max(abs(x1 - x0), abs(y1 - y0), 1)
        for k in range(n + 1):
            x, y = x0 + (x1 - x0) * k // n, y0 + (y1 - y0) * k // n
            img[max(y - 1, 0) : y + 2, max(x - 1, 0) : x + 2] = (30, 90, 200)
    img[top:bottom + 1, left] = 0
    img[bottom, left:right + 1] = 0
    _text(img, 8, py(0) - 5, "0")
    _text(img, 8, py(hi) - 5, str(int(hi)))
    _text(img, right - 40, bottom + 10, f"{x_end // 1000}k" if x_end >= 1000 else str(x_end))
    return img


# ---------------------------------------------------------------- training


def _write_text(path: pathlib.Path, text: str) -> None:
    atomic_write(path, lambda tmp: pathlib.Path(tmp).write_text(text))


def _run_dir(logdir: str, game: str, seed: int) -> pathlib.Path:
    stamp = time.strftime("%Y%m%d-%H%M%S")
    base = pathlib.Path(logdir) / f"{game}_ppo_seed{seed}_{stamp}"
    d, k = base, 1
    while d.exists():
        k += 1
        d = base.with_name(f"{base.name}_{k}")
    d.mkdir(parents=True)
    return d


def check_args(args: argparse.Namespace) -> None:
    """Refuse what the argument types cannot see, before anything heavy is imported or trained:
    the outputs must be writable (a model lost after an hour of training is the worst way to
    learn that a path was wrong)."""
    if getattr(args, "obs", None) == "features":
        from .games import GAMES

        if GAMES[args.game].features is None:
            raise UsageError(f"{args.game} has no RAM features; use --obs grey_half")
    check_output_dir(args.logdir, "--logdir")
    if args.save:
        check_output_file(_model_path(args.save), "--save", parents_created=True)


def _model_path(save: str) -> str:
    """Where SB3's save puts a model given `save` (it adds .zip to a name without a suffix)."""
    return save if pathlib.Path(save).suffix else f"{save}.zip"


def train(args: argparse.Namespace) -> dict:
    """Train, save, evaluate, plot; returns what was measured and where it was written."""
    check_args(args)
    from stable_baselines3 import PPO
    from stable_baselines3.common.callbacks import BaseCallback
    from stable_baselines3.common.logger import configure
    from stable_baselines3.common.vec_env import VecMonitor, VecNormalize

    torch_threads = set_torch_threads(args.torch_threads)
    cfg = task_config(args)
    run_dir = _run_dir(args.logdir, args.game, args.seed)
    env: Any = VecMonitor(make_venv(cfg, args.envs, num_threads=args.threads))  # episode returns before any scaling
    if not args.no_norm_reward:
        env = VecNormalize(env, norm_obs=False, norm_reward=True, gamma=args.gamma)

    curve: list[dict] = []

    class Curve(BaseCallback):
        """Mean game score, shaped return and length of the episodes finished in each rollout."""

        def __init__(self) -> None:
            super().__init__()
            self.scores: list[int] = []
            self.shaped: list[float] = []
            self.lengths: list[int] = []
            self.t0 = time.time()
            self.next_report = args.steps / 10
            self.recent: list[int] = []

        def _on_step(self) -> bool:
            for info in self.locals["infos"]:
                ep = info.get("episode")
                if ep is not None:
                    self.scores.append(info["score"])
                    self.shaped.append(float(ep["r"]))
                    self.lengths.append(int(ep["l"]))
            return True

        def _on_rollout_end(self) -> None:
            if self.scores:
                c = {"timesteps": int(self.num_timesteps), "seconds": round(time.time() - self.t0, 1),
                     "episodes": len(self.scores), "mean_score": float(np.mean(self.scores)),
                     "mean_shaped": float(np.mean(self.shaped)), "mean_length": float(np.mean(self.lengths))}
                curve.append(c)
                self.logger.record("emurust/episode_score", c["mean_score"])
                self.logger.record("emurust/episode_shaped_return", c["mean_shaped"])
                self.recent += self.scores
            self.scores, self.shaped, self.lengths = [], [], []
            if not args.no_progress and (self.num_timesteps >= self.next_report or self.num_timesteps >= args.steps):
                t = time.time() - self.t0
                mean = f"{np.mean(self.recent):7.1f} over {len(self.recent)} episodes" if self.recent else "      - (no episode ended yet)"
                print(f"  {self.num_timesteps:>9,} / {args.steps:,} steps  {t:6.0f} s  training episodes' mean game score {mean}",
                      flush=True)
                self.recent = []
                while self.next_report <= self.num_timesteps:
                    self.next_report += args.steps / 10

    if cfg["obs"] == "features":
        policy, policy_kwargs = "MlpPolicy", None
    else:
        policy, policy_kwargs = "CnnPolicy", None if args.nature_cnn else {"features_extractor_class": small_cnn()}
    model = PPO(policy, env, n_steps=args.n_steps, batch_size=min(args.batch_size, args.n_steps * args.envs), n_epochs=args.epochs,
                learning_rate=args.lr, ent_coef=args.ent_coef, clip_range=args.clip, gamma=args.gamma,
                gae_lambda=0.95, vf_coef=0.5, seed=args.seed, policy_kwargs=policy_kwargs, verbose=0, device="cpu")
    # Environment seeds from the run's seed: disjoint between seeds and from the evaluation's.
    env.seed(args.seed * ENV_SEED_STRIDE)
    model.set_logger(configure(str(run_dir), ["tensorboard"]))
    if not args.no_progress:
        print(f"training PPO ({policy}) on {args.game}: {args.steps:,} steps, {args.envs} emulators, seed {args.seed}, "
              f"{torch_threads} PyTorch thread{'s' if torch_threads != 1 else ''}; run directory {run_dir}", flush=True)
    t0 = time.time()
    model.learn(total_timesteps=args.steps, callback=Curve())
    seconds = time.time() - t0
    env.close()

    model_path = pathlib.Path(_model_path(args.save)) if args.save else run_dir / "model.zip"
    # --save's missing folders are made (check_args found their nearest parent writable);
    # SB3 writes the zip in place; through a temporary name, Ctrl-C never leaves half a model.
    model_path.parent.mkdir(parents=True, exist_ok=True)
    atomic_write(model_path, lambda tmp: model.save(tmp), suffix=".zip")
    task_path = model_path.parent / (model_path.stem + ".task.json") if args.save else run_dir / "task.json"
    _write_text(task_path, json.dumps(cfg, indent=1) + "\n")

    t1 = time.time()
    agent = _summary(evaluate(cfg, model, args.eval_episodes, num_threads=args.threads))
    random = _summary(evaluate(cfg, None, args.eval_episodes, num_threads=args.threads))
    eval_seconds = time.time() - t1
    model.logger.record("eval/agent_score", agent["score_mean"])
    model.logger.record("eval/random_score", random["score_mean"])
    model.logger.dump(model.num_timesteps)

    result = {
        "game": args.game, "seed": args.seed, "steps": args.steps, "envs": args.envs, "task": cfg,
        "torch_threads": torch_threads, "seconds": round(seconds, 1), "eval_seconds": round(eval_seconds, 1),
        "steps_per_second": round(args.steps / seconds, 1),
        "run_dir": str(run_dir), "model": str(model_path), "task_json": str(task_path),
        "eval": {"episodes": args.eval_episodes, "env_seeds": [EVAL_SEED, EVAL_SEED + args.eval_episodes - 1],
                 "agent_actions": "sampled from the policy", "agent": agent, "random": random,
                 "ratio": round(agent["score_mean"] / random["score_mean"], 3) if random["score_mean"] else None},
        "curve": curve,
    }
    _write_text(run_dir / "curve.json", json.dumps({k: result[k] for k in ("game", "seed", "steps", "envs", "seconds", "curve")}, indent=1) + "\n")
    _write_text(run_dir / "eval.json", json.dumps({k: v for k, v in result.items() if k != "curve"}, indent=1) + "\n")
    title = f"PPO on {args.game}, seed {args.seed}, {args.steps:,} steps ({seconds:.0f} s)"
    result["curve_png"] = str(run_dir / "curve.png")
    writer: list[str] = []
    atomic_write(pathlib.Path(result["curve_png"]),
                  lambda tmp: writer.append(write_curve_png(tmp, curve, agent, random, title)), suffix=".png")
    result["curve_writer"] = writer[0]
    return result


def report(result: dict) -> str:
    ev = result["eval"]
    a, r = ev["agent"], ev["random"]
    cfg = result["task"]
    threads = result.get("torch_threads")
    lines = [f"trained {result['steps']:,} steps in {result['seconds']:.0f} s ({result['steps_per_second']:.0f} steps/s"
             + (f", {threads} PyTorch thread{'s' if threads != 1 else ''})" if threads else ")")]
    if result["curve"]:
        c0, c1 = result["curve"][0], result["curve"][-1]
        lines.append(f"training episodes, mean game score: {c0['mean_score']:.1f} (first rollout) -> {c1['mean_score']:.1f} (last)")
    shaping = cfg["life_penalty"] != 0

    def row(name: str, e: dict) -> str:
        text = f"  {name:<14} {e['score_mean']:8.1f} \u00b1 {e['score_ci95']:5.1f}"
        if shaping:
            text += f"   shaped return {e['shaped_mean']:7.1f} \u00b1 {e['shaped_ci95']:5.1f}"
        return text + f"   {e['length_mean']:6.1f} steps/episode"

    lines += [
        f"evaluation: {ev['episodes']} episodes each, environments seeded {ev['env_seeds'][0]}-{ev['env_seeds'][1]} "
        f"(never used in training); game score, mean \u00b1 95% CI",
        row("PPO agent", a),
        row("random policy", r),
    ]
    if ev["ratio"] is not None:
        lines.append(f"  agent / random: {ev['ratio']:.2f}x" +
                     (f"  (trained on the score minus {cfg['life_penalty']:g} per life lost)" if shaping else ""))
    run_dir = result["run_dir"]
    lines += [
        f"run directory: {run_dir}",
        f"  model:          {result['model']}   (watch it: emurust play {result['model']})",
        f"  task:           {result['task_json']}",
        f"  learning curve: {result['curve_png']}, {os.path.join(run_dir, 'curve.json')}",
        f"  evaluation:     {os.path.join(run_dir, 'eval.json')}",
        f"  TensorBoard:    tensorboard --logdir {os.path.dirname(run_dir) or '.'}",
    ]
    return "\n".join(lines)


def run(args: argparse.Namespace) -> int:
    if getattr(args, "game", None) == "pokered_v2":
        from . import train_pokered_v2

        return train_pokered_v2.run(args)
    result = train(args)
    print(report(result))
    sys.stdout.flush()
    return 0


def main(argv: Optional[Sequence[str]] = None) -> int:
    """``emurust train ARGS``: the exit status (2 with one line of error for bad arguments)."""
    from .cli import main as cli_main

    return cli_main(["train", *(sys.argv[1:] if argv is None else argv)])


if __name__ == "__main__":
    sys.exit(main())
