"""Stable-Baselines3 ``VecEnv`` on top of :class:`emurust._core.Batch`.

    from emurust.sb3 import EmurustVecEnv
    venv = EmurustVecEnv(16, game="dodge")                # or rom="game.gb", obs=..., reward=...
    venv = VecFrameStack(VecMonitor(venv), 4)
    PPO("CnnPolicy", venv).learn(100_000)

Same-step reset, as SB3 expects: when an episode ends, ``step_wait`` returns the first
observation of the next episode, with the last one in ``infos[i]["terminal_observation"]`` and
``infos[i]["TimeLimit.truncated"]`` set when it ended by truncation only. Every array returned
is a fresh copy: no later step changes it. Arguments are those of
:class:`emurust.envs.GameBoyVectorEnv`.
"""

from __future__ import annotations

from typing import Any, Iterable, Optional, Sequence

import numpy as np

try:
    from stable_baselines3.common.vec_env.base_vec_env import VecEnv
except ImportError as e:  # pragma: no cover - depends on the environment
    raise ImportError("emurust.sb3 needs stable-baselines3: pip install 'emurust[rl]'") from e

from .envs import BatchDriver, _driver_kwargs

__all__ = ["EmurustVecEnv"]


class EmurustVecEnv(VecEnv):
    def __init__(self, num_envs: int, *, game: Optional[str] = None, render_mode: Optional[str] = None, **kwargs: Any):
        self.driver = BatchDriver(num_envs, **_driver_kwargs(game, kwargs))
        if render_mode not in (None, "rgb_array"):
            raise ValueError(f"render_mode must be None or 'rgb_array', got {render_mode!r}")
        self.render_mode = render_mode
        self.batch = self.driver.batch
        self._actions: Optional[np.ndarray] = None
        self._seeded = False
        super().__init__(num_envs, self.driver.single_observation_space, self.driver.single_action_space)
        self.metadata["render_fps"] = 60 / self.batch.frame_skip

    # ------------------------------------------------------------------ VecEnv API

    def reset(self):
        seeds = self._seeds
        if any(s is not None for s in seeds):
            self.driver.seed([None if s is None else int(s) for s in seeds])
            self._seeded = True
        elif not self._seeded:
            self.driver.seed(None)
            self._seeded = True
        self._reset_seeds()
        self._reset_options()
        self.driver.reset()
        return self.driver.obs()

    def step_async(self, actions: np.ndarray) -> None:
        self._actions = self.driver.check_actions(np.asarray(actions).reshape(-1))

    def step_wait(self):
        if self._actions is None:
            raise RuntimeError("step_async() must be called before step_wait()")
        actions, self._actions = self._actions, None
        rewards, terminated, truncated = self.driver.step(actions)
        done = terminated | truncated
        infos: list[dict[str, Any]] = [{} for _ in range(self.num_envs)]
        if done.any():
            for i in np.flatnonzero(done):
                infos[i]["terminal_observation"] = self.driver.obs_of(i)
                infos[i]["TimeLimit.truncated"] = bool(truncated[i] and not terminated[i])
            self.driver.reset(done)
        return self.driver.obs(), rewards.astype(np.float32), done, infos

    def close(self) -> None:
        pass

    def get_images(self) -> Sequence[Optional[np.ndarray]]:
        return [self.batch.screen_rgb(i) for i in range(self.num_envs)]

    def _indices(self, indices: Any) -> Iterable[int]:
        if indices is None:
            return range(self.num_envs)
        if isinstance(indices, (int, np.integer)):
            return [int(indices)]
        return [int(i) for i in indices]

    def get_attr(self, attr_name: str, indices: Any = None) -> list[Any]:
        value = getattr(self, attr_name)
        return [value for _ in self._indices(indices)]

    def set_attr(self, attr_name: str, value: Any, indices: Any = None) -> None:
        setattr(self, attr_name, value)

    def env_method(self, method_name: str, *method_args: Any, indices: Any = None, **method_kwargs: Any) -> list[Any]:
        """Per-environment methods: ``save_state``, ``load_state``, ``set_start_state`` (called
        with the environment index prepended)."""
        if method_name not in ("save_state", "load_state", "set_start_state"):
            raise AttributeError(f"EmurustVecEnv has no per-environment method {method_name!r}")
        out = []
        for i in self._indices(indices):
            if method_name == "save_state":
                out.append(self.batch.save_state(i))
            elif method_name == "load_state":
                out.append(self.batch.load_state(i, *method_args, **method_kwargs))
                self.driver._remember_ram()
            else:
                out.append(self.batch.set_start_state(*method_args, env=i, **method_kwargs))
        return out

    def env_is_wrapped(self, wrapper_class: type, indices: Any = None) -> list[bool]:
        return [False for _ in self._indices(indices)]
