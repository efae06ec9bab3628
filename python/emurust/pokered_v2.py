"""PokemonRedExperiments v2's ``RedGymEnv``, batched: N emulators stepped in one call in Rust.

Same observations (``screens``, ``health``, ``level``, ``badges``, ``events``, ``map``,
``recent_actions``, with v2's dtypes), rewards, ``truncated`` and reset behaviour as v2's env
for the same config, init state and actions (tests/test_pokered_v2.py compares them step by
step). Users bring the ROM, the init state and v2's ``map_data.json`` / ``events.json`` (read
at run time from the config's paths; by default from the working directory, as v2 does)::

    from emurust.pokered_v2 import RedV2VecEnv          # SB3 VecEnv
    env = RedV2VecEnv(env_config, num_envs=64)           # env_config: v2's own dict

    gymnasium.make_vec("emurust/PokemonRedV2-v0", num_envs=64, config=env_config)

v2's training script (baseline_fast_v2.py) runs with its env constructor line replaced by
``from emurust.pokered_v2 import RedV2VecEnv; env = RedV2VecEnv(env_config, num_envs=num_cpu)``.
docs/pokered_v2.md lists v2's behaviours that are kept (and the few that are not).
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any, Dict, List, Optional, Sequence, Tuple

import numpy as np

from . import _core

__all__ = ["RedV2AsyncPool", "RedV2Batch", "RedV2VecEnv", "RedV2VectorEnv", "observation_space", "level_table", "V2_DEFAULTS"]

EVENT_START, EVENT_END = 0xD747, 0xD87E
EVENT_BITS = (EVENT_END - EVENT_START) * 8
LEVEL_ADDRS = (0xD18C, 0xD1B8, 0xD1E4, 0xD210, 0xD23C, 0xD268)
PARTY_ADDRS = (0xD164, 0xD165, 0xD166, 0xD167, 0xD168, 0xD169)
MAP_SHAPE = (484, 476)
NUM_ACTIONS = 7
#: v2's config entries this env uses, with v2's defaults where it has one.
V2_DEFAULTS: Dict[str, Any] = {"action_freq": 24, "max_steps": 2048 * 80, "reward_scale": 1, "explore_weight": 1}


def observation_space() -> Any:
    """v2's observation space (a ``gymnasium.spaces.Dict``)."""
    from gymnasium import spaces

    return spaces.Dict(
        {
            "screens": spaces.Box(low=0, high=255, shape=(72, 80, 3), dtype=np.uint8),
            "health": spaces.Box(low=0, high=1),
            "level": spaces.Box(low=-1, high=1, shape=(8,)),
            "badges": spaces.MultiBinary(8),
            "events": spaces.MultiBinary(EVENT_BITS),
            "map": spaces.Box(low=0, high=255, shape=(48, 48, 1), dtype=np.uint8),
            "recent_actions": spaces.MultiDiscrete([NUM_ACTIONS] * 3),
        }
    )


def level_table() -> np.ndarray:
    """v2's ``fourier_encode(0.02 * k)`` for every party level sum k (0..1530), each row computed
    by the same NumPy call v2 makes (``np.sin`` of an 8-element array), so the values are NumPy's."""
    return np.concatenate([np.sin((0.02 * k) * 2 ** np.arange(8)) for k in range(6 * 255 + 1)])


def _find(config: Dict[str, Any], key: str, name: str) -> Path:
    p = Path(config[key]) if key in config else Path(os.getcwd()) / name
    if not p.is_file():
        raise FileNotFoundError(
            f"{name} not found at {p}: pass config['{key}'] (v2 reads it from its own folder; "
            "run from there or give the path)"
        )
    return p


def map_offsets(path: os.PathLike) -> List[Tuple[int, int, int]]:
    """(map id, x, y) of every region of v2's map_data.json."""
    with open(path) as f:
        regions = json.load(f)["regions"]
    return [(int(r["id"]), int(r["coordinates"][0]), int(r["coordinates"][1])) for r in regions]


def _obs_buffers(n: int) -> Dict[str, np.ndarray]:
    return {
        "screens": np.zeros((n, 72, 80, 3), np.uint8),
        "health": np.zeros((n, 1), np.float64),
        "level": np.zeros((n, 8), np.float64),
        "badges": np.zeros((n, 8), np.int8),
        "events": np.zeros((n, EVENT_BITS), np.int8),
        "map": np.zeros((n, 48, 48, 1), np.uint8),
        "recent_actions": np.zeros((n, 3), np.uint8),
    }


def _core_args(cfg: Dict[str, Any], num_envs: int) -> tuple:
    for key in ("gb_path", "init_state"):
        if key not in cfg:
            raise KeyError(f"config needs {key!r} (as v2's RedGymEnv)")
    offsets = map_offsets(_find(cfg, "map_data_path", "map_data.json"))
    return (str(cfg["gb_path"]), int(num_envs), str(cfg["init_state"]), offsets, level_table())


def _core_kwargs(cfg: Dict[str, Any], num_threads: Optional[int]) -> Dict[str, Any]:
    return {
        "action_freq": int(cfg["action_freq"]),
        "max_steps": int(cfg["max_steps"]),
        "reward_scale": float(cfg["reward_scale"]),
        "explore_weight": float(cfg["explore_weight"]),
        "num_threads": num_threads,
    }


class RedV2Batch:
    """The batch itself: ``reset(mask)`` and ``step(actions)`` return fresh arrays (N rows)."""

    def __init__(self, config: Dict[str, Any], num_envs: int, *, num_threads: Optional[int] = None,
                 scheduler: Optional[str] = None):
        cfg = {**V2_DEFAULTS, **config}
        self.config = cfg
        self.event_names: Dict[str, str] = json.loads(_find(cfg, "events_path", "events.json").read_text())
        # scheduler: "longest_first" (default; EMURUST_SCHEDULER), "rayon" or "gang", see
        # docs/scheduling.md.
        self.core = _core.RedV2Batch(*_core_args(cfg, num_envs), **_core_kwargs(cfg, num_threads), scheduler=scheduler)
        self.num_envs = int(num_envs)
        self.max_steps = int(cfg["max_steps"])

    def _out(self) -> Tuple[Dict[str, np.ndarray], np.ndarray, np.ndarray]:
        obs = _obs_buffers(self.num_envs)
        return obs, np.zeros(self.num_envs, np.float64), np.zeros(self.num_envs, np.bool_)

    @staticmethod
    def _args(obs: Dict[str, np.ndarray], rew: np.ndarray, trunc: np.ndarray) -> tuple:
        return (
            obs["screens"], obs["health"], obs["level"], obs["badges"], obs["events"], obs["map"],
            obs["recent_actions"], rew, trunc,
        )  # fmt: skip

    def reset(self, mask: Optional[Sequence[bool]] = None, into: Optional[Dict[str, np.ndarray]] = None) -> Dict[str, np.ndarray]:
        """v2's ``reset`` for every environment (or where ``mask``): reload the init state,
        clear the episode. Rows not reset keep ``into``'s values (zeros without ``into``)."""
        obs, rew, trunc = self._out()
        if into is not None:
            for k in obs:
                obs[k][...] = into[k]
        self.core.reset(self._args(obs, rew, trunc), None if mask is None else [bool(m) for m in mask])
        return obs

    def step(self, actions: Any) -> Tuple[Dict[str, np.ndarray], np.ndarray, np.ndarray]:
        """v2's ``step`` for every environment: (obs, rewards float64, truncated bool).
        v2 never terminates (its ``terminated`` is always False)."""
        a = np.asarray(actions)
        if a.shape != (self.num_envs,) or not np.issubdtype(a.dtype, np.integer):
            raise ValueError(f"actions must be an integer array of shape ({self.num_envs},), got {a.dtype} {a.shape}")
        if a.size and (a.min() < 0 or a.max() >= NUM_ACTIONS):
            raise ValueError(f"actions must be 0-{NUM_ACTIONS - 1} (v2's 7 buttons), got {a.min()}..{a.max()}")
        obs, rew, trunc = self._out()
        self.core.step(np.ascontiguousarray(a, dtype=np.uint8), self._args(obs, rew, trunc))
        return obs, rew, trunc

    # v2's attributes, per environment (SB3's get_attr / env_method, TensorboardCallback).
    def info(self, i: int) -> Dict[str, Any]:
        return dict(self.core.episode_info(i))

    def check_if_done(self, i: int) -> bool:
        return bool(self.info(i)["step_count"] >= self.max_steps - 1)

    def explore_map(self, i: int) -> np.ndarray:
        return np.frombuffer(self.core.explore_map(i), np.uint8).reshape(MAP_SHAPE).copy()

    def ram(self, i: int, addr: int, length: int = 1) -> bytes:
        return bytes(self.core.read(i, addr, length))

    def read_hp_fraction(self, i: int) -> float:
        hp = self.ram(i, 0xD16C, 0xD269 + 2 - 0xD16C)

        def word(a: int) -> int:
            return 256 * hp[a - 0xD16C] + hp[a + 1 - 0xD16C]

        cur = sum(word(a) for a in (0xD16C, 0xD198, 0xD1C4, 0xD1F0, 0xD21C, 0xD248))
        top = max(sum(word(a) for a in (0xD18D, 0xD1B9, 0xD1E5, 0xD211, 0xD23D, 0xD269)), 1)
        return cur / top

    def agent_stats(self, i: int) -> List[Dict[str, Any]]:
        """v2's ``agent_stats`` holding its last entry only (v2 keeps every step's, which grows
        without bound; its TensorboardCallback reads the last)."""
        info = self.info(i)
        if info["step_count"] == 0:
            return []
        m = {a: self.ram(i, a)[0] for a in (0xD362, 0xD361, 0xD35E, 0xD163, 0xD356, *LEVEL_ADDRS, *PARTY_ADDRS)}
        levels = [m[a] for a in LEVEL_ADDRS]
        return [
            {
                "step": info["step_count"] - 1,
                "x": m[0xD362],
                "y": m[0xD361],
                "map": m[0xD35E],
                "max_map_progress": info["stats_max_map_progress"],
                "last_action": info["stats_last_action"],
                "pcount": m[0xD163],
                "levels": levels,
                "levels_sum": sum(levels),
                "ptypes": [m[a] for a in PARTY_ADDRS],
                "hp": self.read_hp_fraction(i),
                "coord_count": info["stats_coord_count"],
                "deaths": info["stats_deaths"],
                "badge": bin(m[0xD356]).count("1"),
                "event": info["stats_event"],
                "healr": info["stats_healr"],
            }
        ]

    def current_event_flags_set(self, i: int) -> Dict[str, str]:
        """v2's dict of event flags seen set at steps 0, 100, 200, ... (keys as v2 writes them:
        bit index counted from the most significant bit; unknown keys left out, v2 prints them)."""
        logged = self.core.flags_logged(i)
        out: Dict[str, str] = {}
        for j, v in enumerate(logged):
            for idx in range(8):
                if (v >> (7 - idx)) & 1:
                    key = f"0x{EVENT_START + j:X}-{idx}"
                    if key in self.event_names:
                        out[key] = self.event_names[key]
        return out

    def seen_coords(self, i: int) -> Dict[str, int]:
        return {f"x:{x} y:{y} m:{m}": c for (x, y, m), c in self.core.seen_coords(i).items()}

    def attr(self, name: str, i: int) -> Any:
        """v2's attribute ``name`` of environment ``i`` (those its scripts and callbacks read)."""
        info = self.info(i)
        direct = {
            "step_count": info["step_count"],
            "total_reward": info["total_reward"],
            "max_event_rew": info["max_event_rew"],
            "total_healing_rew": info["total_healing_rew"],
            "died_count": info["died_count"],
            "party_size": info["party_size"],
            "last_health": info["last_health"],
            "base_event_flags": info["base_event_flags"],
            "max_map_progress": info["max_map_progress"],
            "max_steps": self.max_steps,
            "reward_scale": self.config["reward_scale"],
            "explore_weight": self.config["explore_weight"],
            "act_freq": self.config["action_freq"],
            "render_mode": None,
        }
        if name in direct:
            return direct[name]
        getters = {
            "agent_stats": self.agent_stats,
            "explore_map": self.explore_map,
            "current_event_flags_set": self.current_event_flags_set,
            "seen_coords": self.seen_coords,
        }
        if name in getters:
            return getters[name](i)
        raise AttributeError(f"RedV2Batch has no v2 attribute {name!r}; known: {sorted([*direct, *getters])}")


def _copy_rows(obs: Dict[str, np.ndarray], i: int) -> Dict[str, np.ndarray]:
    return {k: v[i].copy() for k, v in obs.items()}


try:
    from stable_baselines3.common.vec_env.base_vec_env import VecEnv as _SB3VecEnv

    _HAVE_SB3 = True
except ImportError:  # pragma: no cover - SB3 is optional
    _SB3VecEnv = object  # type: ignore[misc,assignment]
    _HAVE_SB3 = False


class _V2View:
    """Environment ``i`` for SB3's ``get_attr`` / ``env_method``."""

    def __init__(self, batch: RedV2Batch, i: int):
        self._batch, self._i = batch, i

    def check_if_done(self) -> bool:
        return self._batch.check_if_done(self._i)

    def read_hp_fraction(self) -> float:
        return self._batch.read_hp_fraction(self._i)

    def __getattr__(self, name: str) -> Any:
        return self._batch.attr(name, self._i)


class RedV2VecEnv(_SB3VecEnv):
    """SB3 ``VecEnv`` equal to ``SubprocVecEnv([RedGymEnv(config)] * num_envs)``: an environment
    whose episode ends (v2 truncates at ``max_steps``) is reset in the same ``step_wait``, its
    last observation in ``infos[i]["terminal_observation"]``, ``infos[i]["TimeLimit.truncated"]``
    True. ``get_attr``/``env_method`` answer v2's attributes (``agent_stats``, ``explore_map``,
    ``current_event_flags_set``, ``seen_coords``, ``check_if_done()``, ...)."""

    def __init__(self, config: Dict[str, Any], num_envs: int = 16, *, num_threads: Optional[int] = None,
                 scheduler: Optional[str] = None):
        if not _HAVE_SB3:
            raise ImportError("RedV2VecEnv needs stable-baselines3: pip install 'emurust[rl]'")
        from gymnasium import spaces

        self.batch = RedV2Batch(config, num_envs, num_threads=num_threads, scheduler=scheduler)
        self.render_mode = None
        super().__init__(num_envs, observation_space(), spaces.Discrete(NUM_ACTIONS))
        self._actions: Optional[np.ndarray] = None
        self._obs: Optional[Dict[str, np.ndarray]] = None

    def reset(self) -> Dict[str, np.ndarray]:
        self._obs = self.batch.reset()
        self._reset_seeds()
        self._reset_options()
        return {k: v.copy() for k, v in self._obs.items()}

    def step_async(self, actions: np.ndarray) -> None:
        self._actions = np.asarray(actions)

    def step_wait(self) -> Any:
        if self._actions is None:
            raise RuntimeError("step_wait() without step_async()")
        obs, rew, trunc = self.batch.step(self._actions)
        self._actions = None
        infos: List[Dict[str, Any]] = [{} for _ in range(self.num_envs)]
        dones = trunc.copy()
        if trunc.any():
            for i in np.flatnonzero(trunc):
                infos[i]["TimeLimit.truncated"] = True
                infos[i]["terminal_observation"] = _copy_rows(obs, int(i))
            obs = self.batch.reset(mask=trunc.tolist(), into=obs)
        self._obs = obs
        return obs, rew, dones, infos

    def close(self) -> None:
        pass

    def _indices(self, indices: Any) -> List[int]:
        if indices is None:
            return list(range(self.num_envs))
        if isinstance(indices, int):
            return [indices]
        return [int(i) for i in indices]

    def get_attr(self, attr_name: str, indices: Any = None) -> List[Any]:
        return [getattr(_V2View(self.batch, i), attr_name) for i in self._indices(indices)]

    def set_attr(self, attr_name: str, value: Any, indices: Any = None) -> None:
        raise AttributeError(f"RedV2VecEnv: v2's attributes live in Rust and cannot be set ({attr_name!r})")

    def env_method(self, method_name: str, *method_args: Any, indices: Any = None, **method_kwargs: Any) -> List[Any]:
        return [getattr(_V2View(self.batch, i), method_name)(*method_args, **method_kwargs) for i in self._indices(indices)]

    def env_is_wrapped(self, wrapper_class: Any, indices: Any = None) -> List[bool]:
        return [False for _ in self._indices(indices)]

    def get_images(self) -> Sequence[Optional[np.ndarray]]:
        return [None for _ in range(self.num_envs)]


try:
    from gymnasium.vector import AutoresetMode, VectorEnv as _GymVectorEnv
except ImportError:  # pragma: no cover - Gymnasium is optional
    _GymVectorEnv = object  # type: ignore[misc,assignment]


class RedV2VectorEnv(_GymVectorEnv):
    """Gymnasium ``VectorEnv`` (``gymnasium.make_vec("emurust/PokemonRedV2-v0", num_envs=N,
    config=v2_config)``): next-step autoreset (Gymnasium's default): the step after a truncation
    returns the reset observation with reward 0."""

    def __init__(self, num_envs: int = 16, *, config: Optional[Dict[str, Any]] = None, num_threads: Optional[int] = None, **kwargs: Any):
        from gymnasium import spaces
        from gymnasium.vector.utils import batch_space

        if config is None:
            raise TypeError("emurust/PokemonRedV2-v0 needs config=<v2's env_config dict> (gb_path, init_state, ...)")
        self.batch = RedV2Batch({**config, **kwargs}, num_envs, num_threads=num_threads)
        self.num_envs = num_envs
        self.single_observation_space = observation_space()
        self.single_action_space = spaces.Discrete(NUM_ACTIONS)
        self.observation_space = batch_space(self.single_observation_space, num_envs)
        self.action_space = batch_space(self.single_action_space, num_envs)
        self.metadata = {"autoreset_mode": AutoresetMode.NEXT_STEP}
        self._pending = np.zeros(num_envs, np.bool_)
        self._obs: Optional[Dict[str, np.ndarray]] = None

    def reset(self, *, seed: Any = None, options: Optional[Dict[str, Any]] = None) -> Tuple[Dict[str, np.ndarray], Dict[str, Any]]:
        # v2 stores the seed and uses it nowhere: every reset reloads the same init state.
        self._obs = self.batch.reset()
        self._pending[:] = False
        return {k: v.copy() for k, v in self._obs.items()}, {}

    def step(self, actions: Any) -> Tuple[Dict[str, np.ndarray], np.ndarray, np.ndarray, np.ndarray, Dict[str, Any]]:
        if self._obs is None:
            raise RuntimeError("call reset() before step()")
        pending = self._pending.copy()
        a = np.asarray(actions).copy()
        a[pending] = 0
        obs, rew, trunc = self.batch.step(a)
        if pending.any():
            # These environments' episodes ended last step: they reset instead of stepping.
            # (Stepping them first costs one wasted step in a rare event; the batch has no
            # per-environment step mask.)
            obs = self.batch.reset(mask=pending.tolist(), into=obs)
            rew[pending] = 0.0
            trunc[pending] = False
        self._pending = trunc.copy()
        self._obs = obs
        return obs, rew, np.zeros(self.num_envs, np.bool_), trunc, {}


class RedV2AsyncPool:
    """EnvPool-style asynchronous stepping: ``recv`` returns the first ``batch_size``
    environments to finish, so a step is not held up by the slowest one (no join)::

        pool = RedV2AsyncPool(config, num_envs=16, batch_size=4)
        pool.async_reset()
        while True:
            obs, rew, truncated, env_ids = pool.recv()
            pool.send(policy(obs), env_ids)

    A small ``batch_size`` keeps the most environments stepping: on the 16-core device, 16
    environments in batches of 4 reached 88% of 16 independent processes' steps/s (batches of
    8: 72%, 12: 60%); with 64 environments every batch size measured reached 100-113%
    (docs/pokered_v2.md). The default (all of them) waits for the slowest, as ``RedV2Batch``.

    ``num_threads`` defaults to one fewer than the CPUs (unless ``emurust.set_num_threads`` or
    EMURUST_NUM_THREADS set a count): the caller's thread runs the policy while the
    environments step, and on 16 CPUs 15 workers beat 16 (16 environments in batches of 1-4:
    81-99% of 16 independent processes against 68-90%).

    Each environment is v2's env (same results as ``RedV2Batch`` for the same actions). As in
    EnvPool, an environment whose step truncated resets at its next ``send`` (that result is
    the reset observation with reward 0 and truncated False; the action is ignored)."""

    def __init__(self, config: Dict[str, Any], num_envs: int, batch_size: Optional[int] = None, *, num_threads: Optional[int] = None):
        cfg = {**V2_DEFAULTS, **config}
        self.config = cfg
        self.core = _core.RedV2AsyncPool(*_core_args(cfg, num_envs), **_core_kwargs(cfg, num_threads))
        self.num_envs = int(num_envs)
        self.batch_size = int(batch_size or num_envs)
        if not 1 <= self.batch_size <= self.num_envs:
            raise ValueError(f"batch_size must be 1..{self.num_envs}, got {batch_size}")

    def async_reset(self) -> None:
        """Reset every environment (their results come through ``recv``)."""
        self.core.send(list(range(self.num_envs)), np.zeros(self.num_envs, np.uint8))

    def send(self, actions: Any, env_ids: Any) -> None:
        ids = [int(i) for i in np.asarray(env_ids).reshape(-1)]
        self.core.send(ids, np.ascontiguousarray(np.asarray(actions).reshape(-1), dtype=np.uint8))

    def recv(self, batch_size: Optional[int] = None) -> Tuple[Dict[str, np.ndarray], np.ndarray, np.ndarray, np.ndarray]:
        """(obs, rewards, truncated, env_ids) of the first ``batch_size`` (default: the pool's)
        environments to finish."""
        k = int(batch_size or self.batch_size)
        obs = _obs_buffers(k)
        rew, trunc = np.zeros(k, np.float64), np.zeros(k, np.bool_)
        ids = self.core.recv(k, RedV2Batch._args(obs, rew, trunc))
        return obs, rew, trunc, np.asarray(ids, np.int64)
