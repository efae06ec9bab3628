"""``emurust train --game pokered_v2``: PokemonRedExperiments v2's PPO run on the batched env.

    emurust train --game pokered_v2 --rom PokemonRed.gb --v2-dir PokemonRedExperiments/v2 \\
        --envs 64 --steps 10000000 --logdir runs

v2's own settings (baseline_fast_v2.py): its env config (action_freq 24, reward_scale 0.5,
explore_weight 0.25, episodes of 2048 * 80 steps unless ``--max-steps``), PPO with
MultiInputPolicy, ``n_steps = max_steps // 64``, batch 512, 1 epoch, gamma 0.997, ent_coef 0.01;
v2's TensorboardCallback (from ``--v2-dir``) when its imports are installed. Users bring the ROM
and v2's folder (init.state, map_data.json, events.json). Writes ``<logdir>/pokered_v2_<time>/``:
TensorBoard logs, checkpoints every half episode (``poke_<steps>_steps.zip``, as v2) and
``model.zip``.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path
from typing import Any


def env_config(args: argparse.Namespace, session: Path) -> dict:
    v2 = Path(args.v2_dir)
    return {
        "headless": True, "save_final_state": False, "early_stop": False, "action_freq": 24,
        "init_state": str(Path(args.init_state) if args.init_state else v2 / "init.state"),
        "max_steps": args.max_steps, "print_rewards": False, "save_video": False, "fast_video": True,
        "session_path": session, "gb_path": str(args.rom), "debug": False, "reward_scale": 0.5,
        "explore_weight": 0.25, "map_data_path": str(v2 / "map_data.json"), "events_path": str(v2 / "events.json"),
    }  # fmt: skip


def run(args: argparse.Namespace) -> int:
    from .command_line import UsageError, check_output_dir

    check_output_dir(args.logdir, "--logdir")
    if not args.rom or not Path(args.rom).is_file():
        raise UsageError("--game pokered_v2 needs --rom PATH (your Pokémon Red ROM)")
    if not args.v2_dir or not (Path(args.v2_dir) / "map_data.json").is_file():
        raise UsageError("--game pokered_v2 needs --v2-dir: PokemonRedExperiments' v2 folder (map_data.json, events.json, init.state)")
    if args.steps < 1 or args.envs < 1 or args.max_steps < 64:
        raise UsageError("--steps and --envs must be positive, --max-steps at least 64")
    import torch
    from stable_baselines3 import PPO
    from stable_baselines3.common.callbacks import CallbackList, CheckpointCallback

    from .pokered_v2 import RedV2VecEnv

    if args.torch_threads:
        torch.set_num_threads(args.torch_threads)
    run_dir = Path(args.logdir) / f"pokered_v2_{time.strftime('%Y%m%d-%H%M%S')}"
    run_dir.mkdir(parents=True, exist_ok=True)
    cfg = env_config(args, run_dir)
    env = RedV2VecEnv(cfg, num_envs=args.envs, num_threads=args.threads)
    callbacks: list[Any] = [CheckpointCallback(save_freq=max(1, args.max_steps // 2), save_path=str(run_dir), name_prefix="poke")]
    sys.path.insert(0, str(Path(args.v2_dir).resolve()))
    try:
        import importlib

        v2_callbacks = importlib.import_module("tensorboard_callback")  # v2's own, from --v2-dir
        callbacks.append(v2_callbacks.TensorboardCallback(run_dir))
    except ImportError as e:
        print(f"(v2's TensorboardCallback not used: {e})")
    model = PPO("MultiInputPolicy", env, verbose=0 if args.no_progress else 1, n_steps=args.max_steps // 64,
                batch_size=512, n_epochs=1, gamma=0.997, ent_coef=0.01, tensorboard_log=str(run_dir), seed=args.seed)
    t0 = time.perf_counter()
    model.learn(total_timesteps=args.steps, callback=CallbackList(callbacks), tb_log_name="poke_ppo")
    seconds = time.perf_counter() - t0
    model.save(run_dir / "model.zip")
    print(f"trained {model.num_timesteps} steps in {seconds:.0f} s ({model.num_timesteps / seconds:,.0f} steps/s); run: {run_dir}")
    return 0
