"""Stable-Baselines3 ``VecEnv`` on top of :class:`emurust._core.Batch`.

    from emurust.sb3 import EmurustVecEnv
    venv = EmurustVecEnv(16, game="dodge")                # or rom="game.gb", obs=..., reward=...
    venv = VecFrameStack(VecMonitor(venv), 4)
    PPO("CnnPolicy", venv).learn(100_000)

Same-step reset, as SB3 expects: when an episode ends, ``step_wait`` returns the first
observation of the next episode, with the last one in ``infos[i]["terminal_observation"]`` and
``infos[i]["TimeLimit.truncated"]`` set when it ended by truncation only; the reset runs in the
step's own parallel pass (``Batch(same_step_reset=True)``). Every array returned
is a fresh copy: no later step changes it. Arguments are those of
:class:`emurust.envs.GameBoyVectorEnv`.
"""

from __future__ import annotations

from typing import Any, Optional, Sequence

import numpy as np

try:
    from stable_baselines3.common.vec_env.base_vec_env import VecEnv
except ImportError as e:  # pragma: no cover - depends on the environment
    raise ImportError("emurust.sb3 needs stable-baselines3: pip install 'emurust[rl]'") from e

from .envs import BatchDriver, _driver_kwargs

__all__ = ["EmurustVecEnv", "PongVecEnv"]


#: Keys of ``set_options`` (applied at the next ``reset`` only, per environment).
RESET_OPTIONS = ("start_state",)


class _SubEnv:
    """Environment ``i`` as SB3's ``get_attr``/``set_attr``/``env_method`` see it: attributes set
    with ``set_attr`` (its own), the shared ones (spaces, ``render_mode``, ``metadata``,
    ``spec``), and its per-environment methods ``save_state()``, ``load_state(state)``,
    ``set_start_state(state)`` (None: power-on), ``start_state()``."""

    def __init__(self, venv: "EmurustVecEnv", index: int):
        self._venv = venv
        self._index = index

    observation_space = property(lambda self: self._venv.observation_space)
    action_space = property(lambda self: self._venv.action_space)
    render_mode = property(lambda self: self._venv.render_mode)
    metadata = property(lambda self: self._venv.metadata)
    spec = property(lambda self: None)

    def save_state(self) -> bytes:
        return self._venv._live().save_state(self._index)

    def load_state(self, state: Any) -> None:
        self._venv._live().load_state(self._index, state)
        self._venv.driver._remember_ram()

    def set_start_state(self, state: Any) -> None:
        self._venv._live().set_start_state(state, env=self._index)

    def start_state(self) -> bytes:
        return self._venv._live().start_state(self._index)

    def get_wrapper_attr(self, name: str) -> Any:
        return getattr(self, name)


class EmurustVecEnv(VecEnv):
    def __init__(self, num_envs: int, *, game: Optional[str] = None, render_mode: Optional[str] = None, **kwargs: Any):
        # Ended environments reset in the step's own parallel pass (SB3 resets them at once).
        kwargs.setdefault("same_step_reset", True)
        self.driver = BatchDriver(num_envs, **_driver_kwargs(game, kwargs))
        if render_mode not in (None, "rgb_array"):
            raise ValueError(f"render_mode must be None or 'rgb_array', got {render_mode!r}")
        self.render_mode = render_mode
        self.batch = self.driver.batch
        self._actions: Optional[np.ndarray] = None
        self._seeded = False
        self._closed = False
        self._subenvs = [_SubEnv(self, i) for i in range(num_envs)]
        super().__init__(num_envs, self.driver.single_observation_space, self.driver.single_action_space)
        self.metadata["render_fps"] = 60 / self.batch.frame_skip  # type: ignore[assignment]

    def _live(self):
        if self._closed:
            raise RuntimeError("this EmurustVecEnv is closed")
        return self.batch

    # ------------------------------------------------------------------ VecEnv API

    def set_options(self, options: Any = None) -> None:
        """Options for the next ``reset`` only (SB3's contract): a dict for every environment or
        a list of one dict per environment. Key ``start_state``: save-state bytes or a path (None:
        power-on) that this reset starts from; later resets use the start state as before."""
        opts = [options or {}] * self.num_envs if isinstance(options, dict) or options is None else list(options)
        if len(opts) != self.num_envs:
            raise ValueError(f"set_options: expected {self.num_envs} dicts, got {len(opts)}")
        for o in opts:
            if not isinstance(o, dict):
                raise TypeError(f"set_options: options must be dicts, got {type(o).__name__}")
            unknown = sorted(set(o) - set(RESET_OPTIONS))
            if unknown:
                raise ValueError(f"unknown reset options {unknown}; supported: {list(RESET_OPTIONS)}")
        super().set_options(opts)

    def reset(self):
        batch = self._live()
        seeds = self._seeds
        if any(s is not None for s in seeds):
            self.driver.seed([None if s is None else int(s) for s in seeds])
            self._seeded = True
        elif not self._seeded:
            self.driver.seed(None)
            self._seeded = True
        options = self._options
        self._reset_seeds()
        self._reset_options()
        kept = {}
        try:
            for i, o in enumerate(options):
                if "start_state" in o:
                    kept[i] = batch.start_state(i)
                    batch.set_start_state(o["start_state"], env=i)
            self.driver.reset()
        finally:
            for i, state in kept.items():
                batch.set_start_state(state, env=i)
        return self.driver.obs()

    def step_async(self, actions: np.ndarray) -> None:
        self._live()
        self._actions = self.driver.check_actions(np.asarray(actions).reshape(-1))

    def step_wait(self):
        self._live()
        if self._actions is None:
            raise RuntimeError("step_async() must be called before step_wait()")
        actions, self._actions = self._actions, None
        rewards, terminated, truncated, finals = self.driver.step_and_reset_ended(actions)
        done = terminated | truncated
        infos: list[dict[str, Any]] = [{} for _ in range(self.num_envs)]
        for i, final in finals.items():
            infos[i]["terminal_observation"] = final
            infos[i]["TimeLimit.truncated"] = bool(truncated[i] and not terminated[i])
        return self.driver.obs(), rewards.astype(np.float32), done, infos

    def close(self) -> None:
        """Free the emulators (the batch and its buffers); any later call raises RuntimeError."""
        self._closed = True
        self.batch = None  # type: ignore[assignment]  # closed: every use checks _closed first
        self.driver = None  # type: ignore[assignment]
        self._actions = None

    def get_images(self) -> Sequence[Optional[np.ndarray]]:
        batch = self._live()
        return [batch.screen_rgb(i) for i in range(self.num_envs)]

    def _indices(self, indices: Any) -> list[int]:
        if indices is None:
            return list(range(self.num_envs))
        if isinstance(indices, (int, np.integer)) and not isinstance(indices, bool):
            indices = [indices]
        out = []
        for i in indices:
            if isinstance(i, bool) or not isinstance(i, (int, np.integer)):
                raise TypeError(f"environment indices must be ints, got {type(i).__name__}")
            if not 0 <= i < self.num_envs:
                raise IndexError(f"environment {i} out of range (0-{self.num_envs - 1})")
            out.append(int(i))
        return out

    def get_attr(self, attr_name: str, indices: Any = None) -> list[Any]:
        """Attribute ``attr_name`` of each environment in ``indices`` (see :class:`_SubEnv`)."""
        return [getattr(self._subenvs[i], attr_name) for i in self._indices(indices)]

    def set_attr(self, attr_name: str, value: Any, indices: Any = None) -> None:
        """Set ``attr_name`` on the environments in ``indices`` only."""
        if attr_name.startswith("_") or hasattr(_SubEnv, attr_name):
            raise AttributeError(f"cannot set {attr_name!r} on an emurust environment")
        for i in self._indices(indices):
            setattr(self._subenvs[i], attr_name, value)

    def env_method(self, method_name: str, *method_args: Any, indices: Any = None, **method_kwargs: Any) -> list[Any]:
        """Per-environment methods (``save_state``, ``load_state``, ``set_start_state``,
        ``start_state``, or callables stored with ``set_attr``) of the environments in ``indices``."""
        out = []
        for i in self._indices(indices):
            sub = self._subenvs[i]
            method = getattr(sub, method_name, None) if not method_name.startswith("_") else None
            if not callable(method):
                raise AttributeError(f"EmurustVecEnv has no per-environment method {method_name!r}")
            out.append(method(*method_args, **method_kwargs))
        return out

    def env_is_wrapped(self, wrapper_class: type, indices: Any = None) -> list[bool]:
        return [False for _ in self._indices(indices)]


class PongVecEnv(VecEnv):
    """N games of emurust's Pong (:mod:`emurust.pong`) as an SB3 ``VecEnv``: one Rust call per
    step, same-step reset with ``infos[i]["terminal_observation"]`` (and
    ``"TimeLimit.truncated"``). Arguments are those of :class:`emurust.pong.PongVectorEnv`."""

    def __init__(self, num_envs: int, **kwargs: Any):
        from .pong import PongDriver

        self.driver = PongDriver(num_envs, **kwargs)
        self._actions: Optional[np.ndarray] = None
        self._seeded = False
        self.render_mode = None
        super().__init__(num_envs, self.driver.single_observation_space, self.driver.single_action_space)

    def reset(self):
        seeds = self._seeds
        if any(s is not None for s in seeds):
            self.driver.seed([None if s is None else int(s) for s in seeds])
        elif not self._seeded:
            self.driver.seed(None)
        self._seeded = True
        self._reset_seeds()
        self._reset_options()
        return self.driver.reset()

    def step_async(self, actions: np.ndarray) -> None:
        self._actions = self.driver.check_actions(np.asarray(actions).reshape(-1))

    def step_wait(self):
        if self._actions is None:
            raise RuntimeError("step_async() must be called before step_wait()")
        actions, self._actions = self._actions, None
        obs, rewards, terminated, truncated, final = self.driver.step(actions)
        done = terminated | truncated
        infos: list[dict[str, Any]] = [{} for _ in range(self.num_envs)]
        for i in np.flatnonzero(done):
            infos[i]["terminal_observation"] = final[i].copy()
            infos[i]["TimeLimit.truncated"] = bool(truncated[i] and not terminated[i])
        return obs, rewards, done, infos

    def close(self) -> None:
        pass

    def get_images(self) -> Sequence[Optional[np.ndarray]]:
        return [None] * self.num_envs

    def get_attr(self, attr_name: str, indices: Any = None) -> list[Any]:
        n = len(self._idx(indices))
        return [getattr(self, attr_name)] * n

    def set_attr(self, attr_name: str, value: Any, indices: Any = None) -> None:
        raise AttributeError("PongVecEnv has no per-environment attributes to set")

    def env_method(self, method_name: str, *method_args: Any, indices: Any = None, **method_kwargs: Any) -> list[Any]:
        if method_name == "get_state":
            return [self.driver.batch.get_state(i) for i in self._idx(indices)]
        raise AttributeError(f"PongVecEnv has no per-environment method {method_name!r}")

    def env_is_wrapped(self, wrapper_class: type, indices: Any = None) -> list[bool]:
        return [False for _ in self._idx(indices)]

    def _idx(self, indices: Any) -> list[int]:
        if indices is None:
            return list(range(self.num_envs))
        if isinstance(indices, (int, np.integer)):
            return [int(indices)]
        return [int(i) for i in indices]
