"""Where SB3 PPO's time goes with v2's settings on the batched Pokémon Red env (issue 25).

    python benches/ppo_phases.py --rom pokered.gb --v2-dir PokemonRedExperiments-v2 \
        [--envs 64] [--rollouts 2] [--device auto] [--out phases.json]

Runs SB3 PPO with PokemonRedExperiments v2's settings (``MultiInputPolicy``, ``n_steps`` =
2048 * 80 // 64, batch 512, 1 epoch, gamma 0.997, ent_coef 0.01) for ``--rollouts`` rollouts
twice:

- on ``RedV2VecEnv`` (the batch), timing the environment's own calls (``step_async`` +
  ``step_wait``, ``reset``), the rest of ``collect_rollouts`` (the policy's forward pass, the
  rollout buffer, callbacks: SB3's part) and ``train`` (the update);
- with ``--pyboy``, on v2's own env over PyBoy 2.8.1 in ``SubprocVecEnv`` (``--envs``
  processes, as v2's training script runs it): the baseline of the issue's "PPO end to end" target;
- on a replay env: a VecEnv with the same spaces that returns observations recorded from the
  batch at no cost, so the run is SB3 alone: the ceiling of PPO end to end that no environment
  can pass on this machine.

It prints and writes seconds per phase and steps/s, and the ceiling a faster environment could
reach (SB3's part of the batch run with the environment's time taken out).
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path
from typing import Any, Dict, List

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from pokered_v2_batch import subproc, v2_config  # noqa: E402


def time_calls(obj: Any, methods: Dict[str, str], seconds: Dict[str, float]) -> None:
    """Wrap ``obj``'s methods (name -> key) so that each call's seconds add to ``seconds[key]``."""
    for name, key in methods.items():
        inner = getattr(obj, name)
        seconds.setdefault(key, 0.0)

        def timed(*a: Any, _inner: Any = inner, _key: str = key, **k: Any) -> Any:
            t = time.perf_counter()
            try:
                return _inner(*a, **k)
            finally:
                seconds[_key] += time.perf_counter() - t

        setattr(obj, name, timed)


def replay_env(source: Any, frames: int, burn: Any = None) -> Any:
    """A VecEnv with ``source``'s spaces that replays ``frames`` recorded steps; ``burn`` (if
    given) is called in each ``step_wait`` (a stand-in for the environment's load on the
    machine's cores)."""
    from stable_baselines3.common.vec_env import VecEnv

    obs0 = source.reset()
    recorded: List[Dict[str, np.ndarray]] = []
    rewards: List[np.ndarray] = []
    rng = np.random.default_rng(0)
    for _ in range(frames):
        source.step_async(rng.integers(0, source.action_space.n, source.num_envs))
        obs, rew, _dones, _infos = source.step_wait()
        recorded.append(obs)
        rewards.append(rew)

    class Replay(VecEnv):
        def __init__(self) -> None:
            super().__init__(source.num_envs, source.observation_space, source.action_space)
            self.i = 0
            self.no_dones = np.zeros(source.num_envs, dtype=bool)
            self.no_infos: List[Dict[str, Any]] = [{} for _ in range(source.num_envs)]

        def reset(self) -> Any:
            return obs0

        def step_async(self, actions: np.ndarray) -> None:
            pass

        def step_wait(self) -> Any:
            if burn is not None:
                burn()
            k = self.i % len(recorded)
            self.i += 1
            return recorded[k], rewards[k], self.no_dones, self.no_infos

        def close(self) -> None:
            pass

        def get_attr(self, attr_name: str, indices: Any = None) -> List[Any]:
            return [None] * self.num_envs

        def set_attr(self, attr_name: str, value: Any, indices: Any = None) -> None:
            pass

        def env_method(self, method_name: str, *a: Any, indices: Any = None, **k: Any) -> List[Any]:
            return [None] * self.num_envs

        def env_is_wrapped(self, wrapper_class: Any, indices: Any = None) -> List[bool]:
            return [False] * self.num_envs

    return Replay()


def core_burner(seconds: float) -> Any:
    """A callable that keeps every core busy for about ``seconds`` (4,096 Pong games stepped on
    all threads, GIL released): the environment's load without its data."""
    import os

    from emurust import _core

    n = 4096
    games = _core.PongBatch(n, num_threads=os.cpu_count() or 1)
    acts = np.random.default_rng(0).integers(0, 3, (16, n)).astype(np.int32)
    games.run_steps(acts, 100)
    t = time.perf_counter()
    games.run_steps(acts, 2000)
    steps = max(1, int(2000 * seconds / (time.perf_counter() - t)))
    return lambda: games.run_steps(acts, steps)


def warm_up(venv: Any, args: argparse.Namespace) -> None:
    """A short PPO run first, so that no timed side pays the process's first forward and
    backward passes (CUDA context, cuDNN and kernel initialisation)."""
    from stable_baselines3 import PPO

    model = PPO("MultiInputPolicy", venv, verbose=0, n_steps=32, batch_size=32, n_epochs=1, seed=0, device=args.device)
    model.learn(total_timesteps=32 * venv.num_envs)


def run_ppo(venv: Any, args: argparse.Namespace, n_steps: int) -> Dict[str, float]:
    from stable_baselines3 import PPO

    seconds: Dict[str, float] = {}
    time_calls(venv, {"step_async": "env", "step_wait": "env", "reset": "env"}, seconds)
    model = PPO("MultiInputPolicy", venv, verbose=0, n_steps=n_steps, batch_size=512, n_epochs=1,
                gamma=0.997, ent_coef=0.01, seed=0, device=args.device)  # fmt: skip
    time_calls(model, {"collect_rollouts": "collect", "train": "train"}, seconds)
    total = n_steps * venv.num_envs * args.rollouts
    seconds["env"] = 0.0
    t0 = time.perf_counter()
    model.learn(total_timesteps=total)
    wall = time.perf_counter() - t0
    env_s = seconds["env"]
    return {
        "device": str(model.device),
        "steps": total,
        "seconds": wall,
        "steps_per_second": total / wall,
        "env_seconds": env_s,
        "sb3_collect_seconds": seconds["collect"] - env_s,
        "train_seconds": seconds["train"],
        "other_seconds": wall - seconds["collect"] - seconds["train"],
    }


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--rom", type=Path, required=True)
    p.add_argument("--v2-dir", type=Path, required=True)
    p.add_argument("--state", type=Path, default=None)
    p.add_argument("--envs", type=int, default=64)
    p.add_argument("--threads", type=int, default=None)
    p.add_argument("--rollouts", type=int, default=2)
    p.add_argument("--n-steps", type=int, default=2048 * 80 // 64, help="steps per env per rollout (v2: 2560)")
    p.add_argument("--device", default="auto")
    p.add_argument("--scheduler", default=None, help="RedV2VecEnv's scheduler (rayon, longest_first, gang)")
    p.add_argument("--pyboy", action="store_true", help="also v2 on PyBoy in SubprocVecEnv (the baseline)")
    p.add_argument("--pyboy-rollouts", type=int, default=1)
    p.add_argument("--v2-shims", action="store_true", help="stand-ins for v2's image/video imports")
    p.add_argument("--replay-busy", action="store_true",
                   help="also the replay with every core busy in each step for the batch's mean step time")
    p.add_argument("--out", type=Path, default=None)
    args = p.parse_args()
    if args.envs < 1 or args.rollouts < 1 or args.n_steps < 1:
        p.error("--envs, --rollouts and --n-steps must be positive")
    args.v2_dir = args.v2_dir.resolve()
    args.rom = args.rom.resolve()
    args.state = (args.state or args.v2_dir / "init.state").resolve()
    args.procs = args.envs
    from emurust.pokered_v2 import RedV2VecEnv

    session = Path("/tmp/ppo_phases_session")
    session.mkdir(parents=True, exist_ok=True)
    cfg = v2_config(args, session)
    res: Dict[str, Any] = {"envs": args.envs, "n_steps": args.n_steps, "rollouts": args.rollouts}
    batch = RedV2VecEnv(cfg, num_envs=args.envs, num_threads=args.threads, scheduler=args.scheduler)
    warm_up(batch, args)
    res["batch"] = run_ppo(batch, args, args.n_steps)
    print("batch:", json.dumps(res["batch"]), flush=True)
    replay = replay_env(RedV2VecEnv(cfg, num_envs=args.envs, num_threads=args.threads), 64)
    res["replay"] = run_ppo(replay, args, args.n_steps)
    print("replay (SB3 alone):", json.dumps(res["replay"]), flush=True)
    if args.replay_busy:
        # The same replay with every core busy for as long as the batch's mean step took: if
        # SB3's own time grows as beside the real environment, the machine (frequency, power)
        # slows it, not the environment's data.
        calls = res["batch"]["steps"] // args.envs + 1
        burn = core_burner(res["batch"]["env_seconds"] / calls)
        busy = replay_env(RedV2VecEnv(cfg, num_envs=args.envs, num_threads=args.threads), 64, burn)
        res["replay_busy"] = run_ppo(busy, args, args.n_steps)
        print("replay, cores busy between SB3's calls:", json.dumps(res["replay_busy"]), flush=True)
    if args.pyboy:
        venv = subproc(args, cfg, swap=False)
        rollouts = args.rollouts
        args.rollouts = args.pyboy_rollouts
        res["pyboy"] = run_ppo(venv, args, args.n_steps)
        args.rollouts = rollouts
        venv.close()
        print("v2 on PyBoy, SubprocVecEnv:", json.dumps(res["pyboy"]), flush=True)
        res["speedup"] = res["batch"]["steps_per_second"] / res["pyboy"]["steps_per_second"]
        print(f"PPO end to end, batch vs v2 on PyBoy: {res['speedup']:.2f}x", flush=True)
    b = res["batch"]
    sb3 = b["seconds"] - b["env_seconds"]
    res["sb3_share_of_batch_run"] = sb3 / b["seconds"]
    res["ceiling_steps_per_second"] = b["steps"] / sb3
    print(f"batch run: {b['steps_per_second']:,.0f} steps/s; environment {b['env_seconds']:.1f} s of {b['seconds']:.1f} s; "
          f"SB3 alone {res['replay']['steps_per_second']:,.0f} steps/s; the batch run without its environment time "
          f"{res['ceiling_steps_per_second']:,.0f} steps/s")  # fmt: skip
    if args.out:
        args.out.write_text(json.dumps(res, indent=1))
    batch.close()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
