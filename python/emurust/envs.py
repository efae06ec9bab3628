"""Gymnasium environments on top of :class:`emurust._core.Batch` (N emulators stepped in Rust).

- :class:`GameBoyVectorEnv`: a ``gymnasium.vector.VectorEnv`` of N emulators stepped by one
  call (GIL released, Rayon threads). ``autoreset_mode`` NEXT_STEP (default), SAME_STEP or
  DISABLED (reset finished environments with ``reset(options={"reset_mask": mask})``). In
  SAME_STEP mode an environment whose episode ends is reset inside the same parallel pass as
  the step (``Batch(same_step_reset=True)``), unless a Python ``reward_fn`` must read the
  step's RAM first.
- :class:`GameBoyEnv`: a single ``gymnasium.Env`` (a batch of one).

Registered ids (importing this module registers them)::

    gymnasium.make("emurust/GameBoy-v0", rom="game.gb", ...)
    gymnasium.make_vec("emurust/GameBoy-v0", num_envs=64, rom="game.gb", ...)
    gymnasium.make("emurust/Dodge-v0")  /  make_vec("emurust/Dodge-v0", num_envs=8)
    (also emurust/Snake-v0, emurust/Runner-v0; see :mod:`emurust.games`)
    gymnasium.make_vec("emurust/Tetris-v0", num_envs=64, rom="Tetris.gb", start_state=...)
    (commercial games, your own ROM: also emurust/SuperMarioLand-v0, emurust/Kirby-v0,
    emurust/2048-v0, emurust/PokemonRed-v0; see :mod:`emurust.user_rom_games`)

Without importing emurust.envs first, use ``gymnasium.make("emurust.envs:emurust/Dodge-v0")``.

Arguments (all keyword):

``rom``
    path or bytes of the ROM (shared by all emulators).
``obs``
    a name or a list of names (a list of several gives a ``Dict`` space):
    ``"grey"`` (1, 144, 160) uint8 grey levels, channel-first; ``"grey_half"`` (1, 72, 80) the
    grey screen averaged over 2x2 blocks; ``"rgb"`` (144, 160, 3) channel-last;
    ``"rgb_chw"`` (3, 144, 160); ``"shades"`` (1, 144, 160) shade indices 0-3; ``"ram"`` (K,)
    the bytes of the ``ram`` ranges. Grey levels are PyBoy's default palette (255, 153, 85, 0).
    ``"features"``: the game's state as numbers read from RAM, for games that define them
    (``game="dodge"``: (45,) float32, see :func:`emurust.games.dodge_features`; the features
    ``emurust train`` trains its MLP policy on). RAM-only observations draw no frames.
``ram``
    list of ``(address, length)`` RAM ranges, read after every step (``"ram"`` observation and
    ``reward_fn``).
``actions``
    the discrete action set: a list whose items are button names joined by ``+``
    (``"a+right"``), lists of names, ``"noop"``, or int masks. Default:
    :func:`emurust._core.default_actions` (no-op, each button, A/B with left/right).
``frame_skip`` (24), ``press_frames`` (8)
    frames per step, and for how many of them the action's buttons are held (then released).
    Only the last frame of a step is drawn, and none when the observation is RAM only.
``reward``, ``terminate``, ``reward_fn``
    see :mod:`emurust.rewards`.
``max_episode_steps``
    steps after which an episode is truncated (None/0: never).
``start_state``
    save state (bytes or path) every reset starts from; a list gives one per environment.
    emurust's own, or a PyBoy 2.8.1 ``.state`` of any format version PyBoy 2.8.1 loads (0 to 29,
    e.g. the version 7 start states of Pokémon Red agents), taken as ``PyBoy(rom)`` followed
    by ``load_state`` has it.
    Default: power-on (the state PyBoy's boot ROM leaves).
``noop_max`` (0), ``reset_script``
    each reset runs a seeded number of idle frames in ``[0, noop_max]``, then the script: a list
    of ``(buttons, frames)`` (e.g. ``[("start", 2), ("noop", 12)]``). At least one frame runs.
``num_threads``
    Rayon threads. Default: the one pool all batches of the process share, of
    :func:`emurust.set_num_threads` threads (else ``EMURUST_NUM_THREADS``, else the number of
    CPUs); another count gives the batch a pool of its own. Results do not depend on it.
``scheduler`` (None)
    how a step is spread over the threads: ``"rayon"`` (each step handed to Rayon's work
    stealing; the default, faster for Game Boy envs on the 16-core device) or ``"gang"``
    (each thread the same block of environments every step, threads waiting briefly for the
    next step). None: ``EMURUST_SCHEDULER``, else ``"rayon"``. Results do not depend on it;
    see docs/scheduling.md.
``cgb`` (None)
    PyBoy's hardware choice: None = Game Boy Color for cartridges whose header asks for it,
    True/False to force it. On the Game Boy Color ``grey``/``grey_half`` are the luma of the
    colours shown (PIL's ``convert("L")``), as a PyBoy user derives grey from the RGB screen.
``sound_emulated`` (True)
    as PyBoy's ``sound_emulated``: False skips the sound unit (faster; FF10-FF3F then read 0,
    as in ``PyBoy(sound_emulated=False)``, which games can notice).

Seeding: ``reset(seed=s)`` seeds environment i's reset generator with ``s + i`` (a list gives
one seed each); it only decides the number of idle frames at each reset (the emulator itself
is deterministic). Without a seed at the first reset, seeds are drawn from the OS.
"""

from __future__ import annotations

from typing import Any, Callable, Optional, Sequence

import numpy as np

from . import _core
from .rewards import parse_reward, parse_terminate

try:
    import gymnasium as gym
    from gymnasium import spaces
    from gymnasium.vector import AutoresetMode, VectorEnv
    from gymnasium.vector.utils import batch_space
except ImportError as e:  # pragma: no cover - depends on the environment
    raise ImportError("emurust.envs needs gymnasium>=1.0: pip install 'emurust[rl]'") from e

__all__ = ["GameBoyEnv", "GameBoyVectorEnv", "BatchDriver", "register_envs", "default_actions"]

default_actions = _core.default_actions
RewardFn = Callable[[np.ndarray, np.ndarray], Any]


def _obs_space(name: str, shape: tuple) -> spaces.Box:
    if name == "features":
        return spaces.Box(low=-np.inf, high=np.inf, shape=tuple(shape), dtype=np.float32)
    high = 3 if name == "shades" else 255
    return spaces.Box(low=0, high=high, shape=tuple(shape), dtype=np.uint8)


class _Closed:
    """Stands for the batch of a closed environment: any use raises a clear error."""

    def __getattr__(self, name: str) -> Any:
        raise RuntimeError("this emurust environment is closed")


_CLOSED: Any = _Closed()  # typed Any: it stands in for a BatchDriver and a Batch


class BatchDriver:
    """Builds a :class:`_core.Batch` from keyword arguments and turns its output buffers into
    fresh arrays (never views that a later step overwrites). Shared by the Gymnasium and SB3
    wrappers."""

    def __init__(
        self,
        num_envs: int,
        rom: Any = None,
        *,
        game: Optional[str] = None,
        obs: Any = "grey",
        ram: Sequence[tuple[int, int]] = (),
        actions: Optional[Sequence[Any]] = None,
        frame_skip: int = 24,
        press_frames: int = 8,
        reward: Any = (),
        terminate: Any = (),
        reward_fn: Optional[RewardFn] = None,
        max_episode_steps: Optional[int] = None,
        start_state: Any = None,
        noop_max: int = 0,
        reset_script: Sequence[tuple[Any, int]] = (),
        num_threads: Optional[int] = None,
        cgb: Optional[bool] = None,
        sound_emulated: bool = True,
        same_step_reset: bool = False,
        scheduler: Optional[str] = None,
    ):
        if isinstance(num_envs, bool) or not isinstance(num_envs, (int, np.integer)):
            raise TypeError(f"num_envs must be an int, got {type(num_envs).__name__}")
        if rom is None:
            raise ValueError("rom is required (a path or the ROM's bytes)")
        if reward_fn is not None and not callable(reward_fn):
            raise TypeError("reward_fn must be callable: reward_fn(ram, prev_ram)")
        if reward_fn is not None and not ram:
            raise ValueError("reward_fn needs ram=[(address, length), ...] to read")
        obs_names = [obs] if isinstance(obs, str) else list(obs)
        user_ram = [(int(a), int(n)) for a, n in ram]
        # "features" is computed here from a RAM block the batch reads along with `ram`.
        self._features: Optional[Callable[[np.ndarray], np.ndarray]] = None
        batch_ram = list(user_ram)
        if "features" in obs_names:
            from .games import features_of

            block, self._features = features_of(game)
            if block not in batch_ram:
                batch_ram.append(block)
            start = sum(n for _, n in batch_ram[: batch_ram.index(block)])
            self._features_cols = slice(start, start + block[1])
        self._user_ram_bytes = sum(n for _, n in user_ram)
        batch_obs = [n for n in obs_names if n != "features"] or ["ram"]
        per_env_states = isinstance(start_state, (list, tuple))
        if per_env_states and len(start_state) != num_envs:
            raise ValueError(f"start_state: expected {num_envs} states, got {len(start_state)}")
        script = [(b if b not in (None, 0) else "noop", int(f)) for b, f in reset_script]
        self.batch = _core.Batch(
            rom,
            int(num_envs),
            actions=list(actions) if actions is not None else None,
            frame_skip=frame_skip,
            press_frames=press_frames,
            obs=batch_obs,
            ram=batch_ram,
            reward=parse_reward(reward),
            terminate=parse_terminate(terminate),
            max_episode_steps=int(max_episode_steps or 0),
            noop_max=noop_max,
            reset_script=script,
            start_state=None if per_env_states else start_state,
            num_threads=num_threads,
            cgb=cgb,
            sound_emulated=bool(sound_emulated),
            # A Python reward_fn reads each step's RAM: ended environments must not be reset
            # before it has, so they are reset by a second call (`reset`) instead.
            same_step_reset=bool(same_step_reset) and reward_fn is None,
            scheduler=scheduler,
        )
        self.same_step_reset = bool(same_step_reset) and reward_fn is None
        if per_env_states:
            for i, s in enumerate(start_state):
                if s is not None:
                    self.batch.set_start_state(s, i)
        self.num_envs = int(num_envs)
        self.game = game
        self.reward_fn = reward_fn
        self.obs_names = list(self.batch.obs_names) if self._features is None else list(obs_names)
        self._buf = self.batch.buffers
        shapes = dict(self.batch.obs_shapes)
        if self._features is not None:
            shapes["ram"] = (self._user_ram_bytes,)
            shapes["features"] = self._features(self._buf["ram"][:1, self._features_cols]).shape[1:]
        self.dict_obs = len(self.obs_names) > 1
        if self.dict_obs:
            self.single_observation_space: spaces.Space = spaces.Dict(
                {k: _obs_space(k, shapes[k]) for k in self.obs_names}
            )
        else:
            k = self.obs_names[0]
            self.single_observation_space = _obs_space(k, shapes[k])
        self.single_action_space = spaces.Discrete(self.batch.num_actions)
        self._prev_ram = np.zeros_like(self._user_ram(self._buf["ram"]))

    # ------------------------------------------------------------------ helpers

    def _user_ram(self, ram: np.ndarray) -> np.ndarray:
        """The columns of the batch's RAM buffer that the user's ``ram`` ranges asked for (a
        view; the batch may read a block for ``"features"`` after them)."""
        return ram if self._features is None else ram[:, : self._user_ram_bytes]

    def _view(self, name: str, prefix: str = "", rows: Any = None) -> np.ndarray:
        """Observation `name` of every environment, or of `rows` (an index or a mask): the
        batch's buffer (a view; a copy for a mask), or for ``"features"`` a fresh array
        computed from the RAM block of those rows only."""
        if self._features is not None and name == "features":
            block = self._buf[prefix + "ram"][:, self._features_cols]
            if isinstance(rows, (int, np.integer)):
                return self._features(block[rows : rows + 1])[0]
            return self._features(block if rows is None else block[rows])
        if self._features is not None and name == "ram":
            b = self._user_ram(self._buf[prefix + "ram"])
        else:
            b = self._buf[prefix + name]
        return b if rows is None else b[rows]

    def obs_views(self) -> Any:
        """The current observations as views of the batch's buffers where possible (the next
        step overwrites them)."""
        if self.dict_obs:
            return {k: self._view(k) for k in self.obs_names}
        return self._view(self.obs_names[0])

    def _fresh(self, name: str, prefix: str = "", rows: Any = None) -> np.ndarray:
        """:meth:`_view`, never sharing memory with the batch: views are copied (computed
        features and rows picked by a mask are new arrays already)."""
        a = self._view(name, prefix, rows)
        fresh = name == "features" and self._features is not None
        return a if fresh or (rows is not None and not isinstance(rows, (int, np.integer))) else a.copy()

    def obs(self, rows: Optional[np.ndarray] = None) -> Any:
        """A copy of the current observations (of `rows` only, if given)."""
        if self.dict_obs:
            return {k: self._fresh(k, rows=rows) for k in self.obs_names}
        return self._fresh(self.obs_names[0], rows=rows)

    def obs_of(self, i: int) -> Any:
        if self.dict_obs:
            return {k: self._fresh(k, rows=i) for k in self.obs_names}
        return self._fresh(self.obs_names[0], rows=i)

    def final_obs_of(self, i: int) -> Any:
        """Environment `i`'s terminal observation after a step that ended its episode and reset
        it in the same pass (``same_step_reset``)."""
        if self.dict_obs:
            return {k: self._fresh(k, "final_", i) for k in self.obs_names}
        return self._fresh(self.obs_names[0], "final_", i)

    def step_and_reset_ended(self, actions: np.ndarray):
        """Step; environments whose episode ends are reset right away (Gymnasium's same-step
        autoreset). Returns (rewards, terminated, truncated, final observations of the ended
        environments, by index). One parallel pass with ``same_step_reset``, else a step and
        a reset of the ended ones."""
        rewards, terminated, truncated = self.step(actions)
        done = terminated | truncated
        finals: dict[int, Any] = {}
        if done.any():
            ended = [int(i) for i in np.flatnonzero(done)]
            if self.same_step_reset:
                finals = {i: self.final_obs_of(i) for i in ended}
            else:
                finals = {i: self.obs_of(i) for i in ended}
                self.reset(done)
        return rewards, terminated, truncated, finals

    def check_actions(self, actions: Any) -> np.ndarray:
        a = np.asarray(actions)
        if a.ndim == 0 and self.num_envs == 1:
            a = a.reshape(1)
        if a.dtype == np.bool_ or not np.issubdtype(a.dtype, np.integer):
            raise TypeError(f"actions must be integers, got dtype {a.dtype}")
        if a.shape != (self.num_envs,):
            raise ValueError(f"actions must have shape ({self.num_envs},), got {a.shape}")
        n = self.batch.num_actions
        bad = (a < 0) | (a >= n)
        if bad.any():
            i = int(np.flatnonzero(bad)[0])
            raise ValueError(f"action {a[i]} of environment {i} is out of range: there are {n} actions (0-{n - 1})")
        return np.ascontiguousarray(a, dtype=np.int64)

    def _apply_reward_fn(self, rewards: np.ndarray, terminated: np.ndarray, skip: Optional[np.ndarray]) -> None:
        if self.reward_fn is None:
            return
        ram = self._user_ram(self._buf["ram"])
        res = self.reward_fn(ram, self._prev_ram)
        if isinstance(res, tuple):
            r, t = res
        else:
            r, t = res, None
        r = np.asarray(r, dtype=np.float64)
        if r.shape != (self.num_envs,):
            raise ValueError(f"reward_fn must return rewards of shape ({self.num_envs},), got {r.shape}")
        if skip is not None:
            r = np.where(skip, 0.0, r)
        rewards += r
        if t is not None:
            t = np.asarray(t, dtype=bool)
            if t.shape != (self.num_envs,):
                raise ValueError(f"reward_fn must return terminations of shape ({self.num_envs},), got {t.shape}")
            if skip is not None:
                t = t & ~skip
            terminated |= t

    def _remember_ram(self) -> None:
        if self.reward_fn is not None:
            np.copyto(self._prev_ram, self._user_ram(self._buf["ram"]))

    # ------------------------------------------------------------------ operations

    def seed(self, seed: Any) -> None:
        if seed is None:
            seed = [int(s) for s in np.random.SeedSequence().generate_state(self.num_envs, dtype=np.uint64)]
        elif isinstance(seed, (list, tuple)):
            if len(seed) != self.num_envs:
                raise ValueError(f"expected {self.num_envs} seeds, got {len(seed)}")
        elif isinstance(seed, (int, np.integer)) and not isinstance(seed, bool):
            if seed < 0:
                raise ValueError("seed must be >= 0")
            seed = int(seed)
        else:
            raise TypeError(f"seed must be an int or a list of ints, got {type(seed).__name__}")
        self.batch.seed(seed)

    def reset(self, mask: Optional[np.ndarray] = None) -> None:
        self.batch.reset(mask)
        self._remember_ram()

    def step(self, actions: np.ndarray, reset_mask: Optional[np.ndarray] = None):
        """Step (and reset the `reset_mask` rows). Returns copies (rewards, terminated, truncated)."""
        self.batch.step(actions, reset_mask)
        rewards = self._buf["rewards"].copy()
        terminated = self._buf["terminated"].copy()
        truncated = self._buf["truncated"].copy()
        self._apply_reward_fn(rewards, terminated, reset_mask)
        self._remember_ram()
        return rewards, terminated, truncated


def _driver_kwargs(game: Optional[str], kwargs: dict) -> dict:
    if game is not None:
        from .games import task_kwargs

        kwargs = task_kwargs(game, **kwargs)
        kwargs["game"] = game
    return kwargs


def reset_mask_option(options: Optional[dict], num_envs: int, needs_reset: bool) -> Optional[np.ndarray]:
    """The checked ``reset_mask`` of a vector environment's ``reset(options=...)`` (gymnasium's
    option for resetting some environments only), or None without one. Shared by
    :class:`GameBoyVectorEnv` and ``emurust.ray.RayVectorEnv``: any other option is a
    ValueError; the mask must be a NumPy bool array of shape ``(num_envs,)`` (TypeError for
    another type, ValueError for another shape or dtype) with at least one True; a masked
    reset before the first full one (``needs_reset``) is a RuntimeError."""
    options = dict(options or {})
    mask = options.pop("reset_mask", None)
    if options:
        raise ValueError(f"unknown reset options {sorted(map(str, options))}; only 'reset_mask' is supported")
    if mask is None:
        return None
    if not isinstance(mask, np.ndarray):
        raise TypeError(f"options['reset_mask'] must be a numpy array, got {type(mask).__name__}")
    if mask.shape != (num_envs,) or mask.dtype != np.bool_:
        raise ValueError(f"options['reset_mask'] must be a bool array of shape ({num_envs},), "
                         f"got {mask.dtype} {mask.shape}")
    if not mask.any():
        raise ValueError("options['reset_mask'] must contain at least one True value")
    if needs_reset:
        raise RuntimeError("call reset() without a mask first")
    return mask


class GameBoyVectorEnv(VectorEnv):
    """N Game Boys of one ROM as a Gymnasium vector environment (see the module docs)."""

    metadata = {"render_modes": ["rgb_array"], "autoreset_mode": AutoresetMode.NEXT_STEP}

    def __init__(
        self,
        num_envs: int = 1,
        *,
        game: Optional[str] = None,
        autoreset_mode: AutoresetMode | str = AutoresetMode.NEXT_STEP,
        render_mode: Optional[str] = None,
        **kwargs: Any,
    ):
        try:
            mode = AutoresetMode(autoreset_mode)
        except ValueError:
            raise ValueError(
                f"unknown autoreset_mode {autoreset_mode!r}; expected one of {[m.value for m in AutoresetMode]}"
            ) from None
        # Same-step autoreset in the step's own parallel pass (see BatchDriver.step_and_reset_ended).
        kwargs.setdefault("same_step_reset", mode == AutoresetMode.SAME_STEP)
        self.driver = BatchDriver(num_envs, **_driver_kwargs(game, kwargs))
        if render_mode not in (None, "rgb_array"):
            raise ValueError(f"render_mode must be None or 'rgb_array', got {render_mode!r}")
        # One step is frame_skip frames of the ~60 Hz Game Boy: that is the rate render() advances at.
        self.metadata = dict(self.metadata, autoreset_mode=mode, render_fps=60 / self.driver.batch.frame_skip)
        self.autoreset_mode = mode
        self.render_mode = render_mode
        self.num_envs = self.driver.num_envs
        self.batch = self.driver.batch
        self.single_observation_space = self.driver.single_observation_space
        self.single_action_space = self.driver.single_action_space
        self.observation_space = batch_space(self.single_observation_space, self.num_envs)
        self.action_space = batch_space(self.single_action_space, self.num_envs)
        self._autoreset = np.zeros(self.num_envs, dtype=bool)
        self._needs_reset = True

    def close_extras(self, **kwargs: Any) -> None:
        """Free the emulators; any later call raises RuntimeError."""
        self.driver = self.batch = _CLOSED

    def reset(self, *, seed: Any = None, options: Optional[dict] = None):
        super().reset(seed=int(seed) if isinstance(seed, (int, np.integer)) else None)
        mask = reset_mask_option(options, self.num_envs, self._needs_reset)
        if seed is not None or self._needs_reset:
            if mask is not None and isinstance(seed, (int, np.integer)):
                seed = [int(seed) + i if m else None for i, m in enumerate(mask)]
            self.driver.seed(seed)
        self.driver.reset(mask)
        self._needs_reset = False
        if mask is None:
            self._autoreset[:] = False
        else:
            self._autoreset[mask] = False
        return self.driver.obs(), {}

    def step(self, actions: Any):
        if self._needs_reset:
            raise RuntimeError("call reset() before step()")
        a = self.driver.check_actions(actions)
        mode = self.autoreset_mode
        infos: dict[str, Any] = {}
        if mode == AutoresetMode.NEXT_STEP:
            mask = self._autoreset.copy() if self._autoreset.any() else None
            rewards, terminated, truncated = self.driver.step(a, mask)
            self._autoreset = terminated | truncated
            return self.driver.obs(), rewards, terminated, truncated, infos
        if mode == AutoresetMode.SAME_STEP:
            rewards, terminated, truncated, finals = self.driver.step_and_reset_ended(a)
            if finals:
                done = terminated | truncated
                final_obs = np.full(self.num_envs, None, dtype=object)
                for i, o in finals.items():
                    final_obs[i] = o
                infos["final_obs"] = final_obs
                infos["_final_obs"] = done.copy()
                infos["final_info"] = {}
                infos["_final_info"] = done.copy()
            return self.driver.obs(), rewards, terminated, truncated, infos
        rewards, terminated, truncated = self.driver.step(a)
        return self.driver.obs(), rewards, terminated, truncated, infos

    def render(self):
        if self.render_mode == "rgb_array":
            return tuple(self.batch.screen_rgb(i) for i in range(self.num_envs))
        return None

    def save_state(self, env: int) -> bytes:
        """Save environment `env` now (bytes for :meth:`load_state` or ``start_state``)."""
        return self.batch.save_state(env)

    def load_state(self, env: int, state: Any) -> None:
        """Load a state (bytes or path) into environment `env`; its episode goes on from there."""
        self.batch.load_state(env, state)
        self.driver._remember_ram()

    def set_start_state(self, state: Any, env: Optional[int] = None) -> None:
        """State that later resets of `env` (all, if None) start from; None for power-on."""
        self.batch.set_start_state(state, env)


class GameBoyEnv(gym.Env):
    """One Game Boy as a Gymnasium environment (a batch of one; same arguments as
    :class:`GameBoyVectorEnv`)."""

    metadata = {"render_modes": ["rgb_array"], "render_fps": 60}

    def __init__(self, *, game: Optional[str] = None, render_mode: Optional[str] = None, **kwargs: Any):
        self.driver = BatchDriver(1, **_driver_kwargs(game, kwargs))
        if render_mode not in (None, "rgb_array"):
            raise ValueError(f"render_mode must be None or 'rgb_array', got {render_mode!r}")
        self.render_mode = render_mode
        self.batch = self.driver.batch
        self.metadata = dict(self.metadata, render_fps=60 / self.batch.frame_skip)
        self.observation_space = self.driver.single_observation_space
        self.action_space = self.driver.single_action_space
        self._seeded = False

    def close(self) -> None:
        """Free the emulator; any later call raises RuntimeError."""
        self.driver = self.batch = _CLOSED

    def reset(self, *, seed: Optional[int] = None, options: Optional[dict] = None):
        super().reset(seed=seed)
        if options:
            raise ValueError(f"unknown reset options {sorted(options)}")
        if seed is not None:
            self.driver.seed(int(seed))
            self._seeded = True
        elif not self._seeded:
            self.driver.seed(int(self.np_random.integers(0, 2**63 - 1)))
            self._seeded = True
        self.driver.reset()
        return self.driver.obs_of(0), {}

    def step(self, action: Any):
        if not self._seeded:
            raise RuntimeError("call reset() before step()")
        if isinstance(action, (bool, np.bool_)) or not isinstance(action, (int, np.integer, np.ndarray)):
            raise TypeError(f"action must be an int, got {type(action).__name__}")
        a = self.driver.check_actions(np.asarray(action).reshape(-1))
        rewards, terminated, truncated = self.driver.step(a)
        return self.driver.obs_of(0), float(rewards[0]), bool(terminated[0]), bool(truncated[0]), {}

    def render(self):
        if self.render_mode == "rgb_array":
            return self.batch.screen_rgb(0)
        return None

    def save_state(self) -> bytes:
        return self.batch.save_state(0)

    def load_state(self, state: Any) -> None:
        self.batch.load_state(0, state)
        self.driver._remember_ram()


from ._registration import register_envs  # noqa: E402  (re-exported)

register_envs()
