"""PufferLib's Pong (crates/emurust-pong, bit-identical with its C reference) as Gymnasium and
Stable-Baselines3 environments: N games stepped by one call to :class:`emurust._core.PongBatch`
(GIL released, Rayon threads), observations written into NumPy arrays.

    import gymnasium as gym, emurust
    env = gym.make("emurust/Pong-v0")                    # one game
    venv = gym.make_vec("emurust/Pong-v0", num_envs=4096) # PongVectorEnv
    from emurust.sb3 import PongVecEnv                   # SB3 VecEnv

The agent is the right paddle; actions 0 still, 1 up, 2 down. Observations (8 float32): both
paddles, the ball's position and velocity, normalised as the reference does, and the two score
observations the reference computes by integer division (always 0). Reward 1 per return, 10 per
point won; the episode ends when a side reaches ``max_score`` (21). The reference's episodes
end only then; ``max_episode_steps`` (default 0: never) truncates them.

Arguments (keyword): the reference's parameters (``width`` 500, ``height`` 640,
``paddle_width`` 20, ``paddle_height`` 70, ``ball_width``/``ball_height`` 32, ``paddle_speed`` 8,
``ball_initial_speed_x`` 10, ``ball_initial_speed_y`` 1, ``ball_max_speed_y`` 13,
``ball_speed_y_increment`` 3, ``max_score`` 21, ``frameskip`` 1), ``max_episode_steps``,
``num_threads`` (as the Game Boy environments: the shared pool by default).

Reset and seeding: a game resets itself when its episode ends, inside the step (the reference
does so), so the vector environment's ``autoreset_mode`` is SAME_STEP: the step returns the new
game's first observation, and ``infos["final_obs"]`` the last one of the game that ended.
``reset(seed=s)`` seeds game i's ``rand()`` as ``srand(s + i)`` (a list gives one seed each; seeds
are 0 to 2**32-1); without a seed at the first reset, seeds come from the OS. Game i seeded
with s is the reference game run after ``srand(s)``, bit for bit.
"""

from __future__ import annotations

from typing import Any, Optional

import numpy as np

from . import _core

try:
    import gymnasium as gym
    from gymnasium import spaces
    from gymnasium.vector import AutoresetMode, VectorEnv
    from gymnasium.vector.utils import batch_space
except ImportError as e:  # pragma: no cover - depends on the environment
    raise ImportError("emurust.pong needs gymnasium>=1.0: pip install 'emurust[rl]'") from e

__all__ = ["PongVectorEnv", "PongEnv", "PongDriver", "ACTIONS"]

#: Action meanings (the reference's: 1 moves the paddle up, towards larger y).
ACTIONS = ("still", "up", "down")
OBS_SIZE = 8
SEED_LIMIT = 2**32


class PongDriver:
    """A :class:`_core.PongBatch` and its output arrays; hands out fresh copies (never views a
    later step overwrites). Shared by the Gymnasium and SB3 wrappers."""

    def __init__(self, num_envs: int, **kwargs: Any):
        if isinstance(num_envs, bool) or not isinstance(num_envs, (int, np.integer)):
            raise TypeError(f"num_envs must be an int, got {type(num_envs).__name__}")
        self.batch = _core.PongBatch(int(num_envs), **kwargs)
        n = self.num_envs = int(num_envs)
        self.obs = np.zeros((n, OBS_SIZE), np.float32)
        self.final_obs = np.zeros((n, OBS_SIZE), np.float32)
        self.rewards = np.zeros(n, np.float32)
        self.terminated = np.zeros(n, np.bool_)
        self.truncated = np.zeros(n, np.bool_)
        self.single_observation_space = spaces.Box(-np.inf, np.inf, (OBS_SIZE,), np.float32)
        self.single_action_space = spaces.Discrete(len(ACTIONS))

    def seed(self, seed: Any) -> None:
        """int s: game i gets s + i; a list: one each (None leaves a game's stream); None: from the OS."""
        n = self.num_envs
        if seed is None:
            seeds: list = [int(s) for s in np.random.SeedSequence().generate_state(n, np.uint32)]
        elif isinstance(seed, (int, np.integer)) and not isinstance(seed, bool):
            seeds = [int(seed) + i for i in range(n)]
        else:
            seeds = list(seed)
            if len(seeds) != n:
                raise ValueError(f"expected {n} seeds, got {len(seeds)}")
        for s in seeds:
            if s is not None and (isinstance(s, bool) or not isinstance(s, (int, np.integer)) or not 0 <= s < SEED_LIMIT):
                raise ValueError(f"Pong seeds are ints from 0 to 2**32-1 (srand's), got {s!r}")
        self.batch.seed([None if s is None else int(s) for s in seeds])

    def check_actions(self, actions: Any) -> np.ndarray:
        a = np.asarray(actions)
        if a.shape != (self.num_envs,) and a.size == self.num_envs:
            a = a.reshape(self.num_envs)
        if a.shape != (self.num_envs,):
            raise ValueError(f"expected {self.num_envs} actions, got shape {a.shape}")
        if not np.issubdtype(a.dtype, np.integer):
            if np.issubdtype(a.dtype, np.floating) and np.all(a == np.round(a)):
                a = a.astype(np.int64)
            else:
                raise TypeError(f"actions must be integers 0-2, got dtype {a.dtype}")
        return np.ascontiguousarray(a, dtype=np.int64)

    def reset(self, mask: Optional[np.ndarray] = None) -> np.ndarray:
        self.batch.reset(self.obs, mask)
        return self.obs.copy()

    def step(self, actions: np.ndarray):
        """(obs, rewards, terminated, truncated, done rows' final observations) as fresh arrays."""
        self.batch.step(actions, self.obs, self.rewards, self.terminated, self.truncated, self.final_obs)
        return self.obs.copy(), self.rewards.copy(), self.terminated.copy(), self.truncated.copy(), self.final_obs


class PongVectorEnv(VectorEnv):
    """N Pong games as a Gymnasium vector environment (see the module docs)."""

    metadata = {"render_modes": [], "autoreset_mode": AutoresetMode.SAME_STEP}

    def __init__(self, num_envs: int = 1, *, autoreset_mode: Any = AutoresetMode.SAME_STEP,
                 render_mode: Optional[str] = None, **kwargs: Any):
        if AutoresetMode(autoreset_mode) != AutoresetMode.SAME_STEP:
            raise ValueError("Pong games reset themselves inside the step (as the reference does): "
                             "only autoreset_mode SAME_STEP is supported")
        if render_mode is not None:
            raise ValueError("emurust's Pong does not render (render_mode must be None)")
        self.driver = PongDriver(num_envs, **kwargs)
        self.num_envs = self.driver.num_envs
        self.render_mode = None
        self.single_observation_space = self.driver.single_observation_space
        self.single_action_space = self.driver.single_action_space
        self.observation_space = batch_space(self.single_observation_space, self.num_envs)
        self.action_space = batch_space(self.single_action_space, self.num_envs)
        self._needs_reset = True

    def reset(self, *, seed: Any = None, options: Optional[dict] = None):
        super().reset(seed=int(seed) if isinstance(seed, (int, np.integer)) else None)
        from .envs import reset_mask_option

        mask = reset_mask_option(options, self.num_envs, self._needs_reset)
        if seed is not None or self._needs_reset:
            self.driver.seed(seed)
        self._needs_reset = False
        return self.driver.reset(mask), {}

    def step(self, actions: Any):
        if self._needs_reset:
            raise RuntimeError("call reset() before step()")
        obs, rewards, terminated, truncated, final = self.driver.step(self.driver.check_actions(actions))
        infos: dict[str, Any] = {}
        done = terminated | truncated
        if done.any():
            final_obs = np.full(self.num_envs, None, dtype=object)
            for i in np.flatnonzero(done):
                final_obs[i] = final[i].copy()
            infos = {"final_obs": final_obs, "_final_obs": done.copy(), "final_info": {}, "_final_info": done.copy()}
        return obs, rewards, terminated, truncated, infos

    def get_state(self, i: int) -> dict:
        """Game i's state (the reference's fields)."""
        return self.driver.batch.get_state(i)


class PongEnv(gym.Env):
    """One Pong game as a Gymnasium environment (a batch of one; same arguments)."""

    metadata = {"render_modes": []}

    def __init__(self, *, render_mode: Optional[str] = None, **kwargs: Any):
        if render_mode is not None:
            raise ValueError("emurust's Pong does not render (render_mode must be None)")
        self.driver = PongDriver(1, **kwargs)
        self.observation_space = self.driver.single_observation_space
        self.action_space = self.driver.single_action_space
        self._seeded = False

    def reset(self, *, seed: Optional[int] = None, options: Optional[dict] = None):
        super().reset(seed=seed)
        if options:
            raise ValueError(f"unknown reset options {sorted(options)}")
        if seed is not None:
            self.driver.seed(int(seed))
        elif not self._seeded:
            self.driver.seed(int(self.np_random.integers(0, SEED_LIMIT)))
        self._seeded = True
        return self.driver.reset()[0], {}

    def step(self, action: Any):
        if not self._seeded:
            raise RuntimeError("call reset() before step()")
        if isinstance(action, (bool, np.bool_)) or not isinstance(action, (int, np.integer, np.ndarray)):
            raise TypeError(f"action must be an int, got {type(action).__name__}")
        obs, rewards, terminated, truncated, _ = self.driver.step(self.driver.check_actions(np.asarray(action).reshape(-1)))
        return obs[0], float(rewards[0]), bool(terminated[0]), bool(truncated[0]), {}
