"""emurust environments across a Ray cluster: SB3 ``VecEnv``, Gymnasium ``VectorEnv``, RLlib.

    pip install 'emurust[ray]'

    from emurust.ray import RayVecEnv
    venv = RayVecEnv(num_actors=4, envs_per_actor=64, threads_per_actor=4, game="dodge")
    PPO("CnnPolicy", VecMonitor(venv)).learn(1_000_000)

Each actor (:class:`BatchActor`, a Ray actor declaring ``num_cpus=threads_per_actor``) owns one
:class:`emurust._core.Batch` of M emulators stepped on T Rayon threads. The driver-side classes
(:class:`RayVecEnv` for Stable-Baselines3, :class:`RayVectorEnv` for Gymnasium) send every
actor its slice of the actions at once (``step_async``), then gather the replies in actor
order (``step_wait``). Actor k owns the global environments ``offset_k .. offset_k + M_k - 1``
and is seeded with ``seed + offset_k``, so the results are identical to one local batch of the
same total size with the same seed (tested).

Connecting: if Ray is not initialised yet, the first environment calls ``ray.init(address)``
(``address=None`` reads ``RAY_ADDRESS``, else starts a local Ray). The same script runs on a
cluster by changing only the address (``address="auto"`` on a cluster node, or
``RAY_ADDRESS=ray://head:10001``). ROM and save-state paths are read on the driver and shipped
as bytes, so the worker nodes need emurust installed but no game files.

Observations: an actor returns read-only views of its batch's output buffers; Ray serialises
them once into the shared-memory object store, the driver maps them without copying and copies
them once into the fresh arrays it returns (arrays handed out are never overwritten later).

Faults (see docs/ray.md):

- every ``checkpoint_every`` steps (and after every full reset) each actor returns its
  environments' save states with its step results, and the driver keeps them together with the
  actions sent since. An actor that dies (``ray.kill``, a crash, its node lost) is created again
  (up to ``max_restarts`` times each), loads the saved states, replays the logged actions and
  then answers the step it missed. The emulator is deterministic, so the replayed environments
  are where they were; two things are not in a save state and restart from the checkpoint: the
  episode step counters (``max_episode_steps`` counts again from the checkpoint for episodes
  that were running then) and the reset generators (resets during or after the replay draw other
  idle-frame counts when ``noop_max > 0``).
- with ``checkpoint_every=0`` (no save states) a new actor starts from reset: the episodes it
  had end as truncated (``TimeLimit.truncated`` for SB3, ``truncated`` for Gymnasium, with the
  last observation the driver had as the final one), nothing is lost silently.
- every affected environment's info says so: ``emurust_actor_restarted`` (True),
  ``emurust_restored_from`` ("checkpoint" or "reset") and ``emurust_replayed_steps``.
- every wait has a deadline (``step_timeout``, ``start_timeout``): past it
  :class:`RayEnvTimeoutError` names the actor, its node and what it was doing; the driver never
  hangs on a lost node.

RLlib (new API stack, env runners): :func:`register_rllib_env` registers a creator that gives
each env runner one emurust batch as its vector environment; see :func:`rllib_ppo_config`.
"""

from __future__ import annotations

from emurust._core import read_user_file

import dataclasses
import inspect
import os
import pathlib
import time
import zlib
from typing import Any, Callable, Iterable, Optional, Sequence

import numpy as np

try:
    import ray
    from ray.exceptions import GetTimeoutError, RayActorError
except ImportError as e:  # pragma: no cover - depends on the environment
    raise ImportError("emurust.ray needs Ray: pip install 'emurust[ray]'") from e

from .envs import BatchDriver, _driver_kwargs, reset_mask_option

__all__ = [
    "ActorGroupConfig",
    "BatchActor",
    "RayVecEnv",
    "RayVectorEnv",
    "RayEnvError",
    "RayEnvTimeoutError",
    "register_rllib_env",
    "rllib_ppo_config",
]

RESTARTED = "emurust_actor_restarted"
RESTORED_FROM = "emurust_restored_from"
REPLAYED = "emurust_replayed_steps"


class RayEnvError(RuntimeError):
    """An actor could not be used or restored (restarts exhausted, start failed)."""


class RayEnvTimeoutError(RayEnvError, TimeoutError):
    """An actor did not answer within its deadline (a lost node, an overloaded cluster)."""


# ---------------------------------------------------------------------------------- the actor


def _as_bytes(x: Any) -> Any:
    """Paths are read here (on the driver) so worker nodes need no copy of the files."""
    if isinstance(x, (str, pathlib.Path)):
        return read_user_file(x, "file")
    return x


class BatchActor:
    """Owns one batch of ``num_envs`` emulators (global indices ``offset ..``). Used as a Ray
    actor (``ray.remote(BatchActor)``); plain Python otherwise. Replies carry read-only views
    of the batch's buffers: Ray serialises them before the next call can change them."""

    def __init__(self, num_envs: int, offset: int, kwargs: dict):
        kwargs = dict(kwargs)
        self.ram_ranges = [(int(a), int(n)) for a, n in kwargs.get("ram", ())]
        self.driver = BatchDriver(num_envs, **kwargs)
        self.batch = self.driver.batch
        self.num_envs = int(num_envs)
        self.offset = int(offset)
        self.busy_s = 0.0  # time spent in step(), for the overhead measurements
        self.steps = 0

    def describe(self) -> dict:
        try:
            node = ray.get_runtime_context().get_node_id()
        except Exception:  # not inside Ray
            node = None
        return {
            "node_id": node,
            "pid": os.getpid(),
            "num_envs": self.num_envs,
            "num_threads": self.batch.num_threads,
            "observation_space": self.driver.single_observation_space,
            "action_space": self.driver.single_action_space,
            "frame_skip": self.batch.frame_skip,
        }

    def _obs(self) -> Any:
        buf = self.batch.buffers
        if self.driver.dict_obs:
            return {k: buf[k] for k in self.driver.obs_names}
        return buf[self.driver.obs_names[0]]

    def seed(self, seeds: Optional[list]) -> None:
        self.driver.seed(seeds)

    def reset(self, mask: Optional[np.ndarray] = None, checkpoint: bool = False):
        self.driver.reset(mask)
        return self._obs(), (self.save_states() if checkpoint else None)

    def step(self, actions: np.ndarray, reset_mask: Optional[np.ndarray], same_step: bool, checkpoint: bool):
        """One step. ``same_step``: finished environments are reset in this call and their
        last observations returned in ``final`` ({local index: obs}), as SB3 expects."""
        t0 = time.perf_counter()
        final = None
        if same_step and reset_mask is None:
            # One pass where the batch resets in the step (else a step and a reset).
            rewards, terminated, truncated, finals = self.driver.step_and_reset_ended(actions)
            final = finals or None
        else:
            if self.driver.same_step_reset:
                raise RuntimeError("emurust internal error: a same-step actor got a next-step call")
            rewards, terminated, truncated = self.driver.step(actions, reset_mask)
        states = self.save_states() if checkpoint else None
        self.busy_s += time.perf_counter() - t0
        self.steps += 1
        return self._obs(), rewards, terminated, truncated, final, states

    def timing(self, clear: bool = False) -> tuple[float, int]:
        """(seconds spent in step, steps) since the start or the last clear."""
        out = (self.busy_s, self.steps)
        if clear:
            self.busy_s, self.steps = 0.0, 0
        return out

    def replay(self, log: list) -> int:
        """Steps again the logged ``(actions, reset_mask, same_step)`` calls; returns how many."""
        for actions, reset_mask, same_step in log:
            self.step(actions, reset_mask, same_step, False)
        return len(log)

    def save_states(self) -> list:
        """Checkpoint: every environment's save state, zlib-compressed (a Dodge state is 166 KB,
        about 4 KB compressed, 0.4 ms each)."""
        return [zlib.compress(self.batch.save_state(i), 1) for i in range(self.num_envs)]

    def load_states(self, states: Sequence[Any]) -> None:
        for i, s in enumerate(states):
            self.load_state(i, zlib.decompress(s))

    def load_state(self, i: int, state: Any) -> None:
        self.batch.load_state(i, state)
        if self.driver.reward_fn is not None:
            # reward_fn deltas start from the loaded RAM (the output buffers change only at the
            # next step, so read the ranges from the emulator).
            row = [np.asarray(self.batch.read(i, a, n), dtype=np.uint8).reshape(-1) for a, n in self.ram_ranges]
            self.driver._prev_ram[i] = np.concatenate(row) if row else self.driver._prev_ram[i]

    def save_state(self, i: int) -> bytes:
        return self.batch.save_state(i)

    def set_start_state(self, state: Any, i: Optional[int]) -> None:
        self.batch.set_start_state(state, i)

    def screens(self) -> list:
        return [self.batch.screen_rgb(i) for i in range(self.num_envs)]

    def episode_steps(self) -> list:
        return list(self.batch.episode_steps)


# ---------------------------------------------------------------------------------- the group


@dataclasses.dataclass(frozen=True)
class ActorGroupConfig:
    """The constructor arguments :class:`RayVecEnv` and :class:`RayVectorEnv` share: all but
    the environments' own keyword arguments (and RayVectorEnv's ``autoreset_mode``)."""

    num_actors: Optional[int] = None
    envs_per_actor: Any = 1
    threads_per_actor: int = 1
    address: Optional[str] = None
    step_timeout: float = 60.0
    start_timeout: float = 120.0
    checkpoint_every: int = 100
    max_restarts: int = 3
    scheduling_strategy: Any = "SPREAD"
    actor_options: Optional[dict] = None
    render_mode: Optional[str] = None

    #: The first three may be passed by position; the others by keyword only.
    POSITIONAL = ("num_actors", "envs_per_actor", "threads_per_actor")

    @classmethod
    def from_call(cls, owner: str, args: tuple, kwargs: dict) -> tuple["ActorGroupConfig", dict]:
        """(config, the environments' keyword arguments) from ``owner``'s constructor call,
        with Python's errors for too many positional arguments or a value given twice."""
        if len(args) > len(cls.POSITIONAL):
            raise TypeError(f"{owner}() takes at most {len(cls.POSITIONAL)} positional arguments ({len(args)} given)")
        given = dict(zip(cls.POSITIONAL, args))
        names = {f.name for f in dataclasses.fields(cls)}
        env_kwargs = {}
        for name, value in kwargs.items():
            if name not in names:
                env_kwargs[name] = value
            elif name in given:
                raise TypeError(f"{owner}() got multiple values for argument {name!r}")
            else:
                given[name] = value
        config = cls(**given)
        if config.render_mode not in (None, "rgb_array"):
            raise ValueError(f"render_mode must be None or 'rgb_array', got {config.render_mode!r}")
        return config, env_kwargs

    @classmethod
    def signature(cls, *extra: inspect.Parameter) -> inspect.Signature:
        """The constructors' signature (for ``help()`` and ``inspect``): self, the config's
        fields, ``extra`` keyword-only parameters, ``**env_kwargs``."""
        P = inspect.Parameter
        params = [P("self", P.POSITIONAL_OR_KEYWORD)]
        for f in dataclasses.fields(cls):
            kind = P.POSITIONAL_OR_KEYWORD if f.name in cls.POSITIONAL else P.KEYWORD_ONLY
            params.append(P(f.name, kind, default=f.default, annotation=f.type))
        params.extend(extra)
        params.append(P("env_kwargs", P.VAR_KEYWORD, annotation="Any"))
        return inspect.Signature(params)


class _ActorGroup:
    """The driver's side: spawns the actors, sends calls, gathers replies in actor order,
    keeps checkpoints and restores dead actors."""

    def __init__(self, config: ActorGroupConfig, kwargs: dict):
        num_actors, envs_per_actor, threads_per_actor = config.num_actors, config.envs_per_actor, config.threads_per_actor
        checkpoint_every = config.checkpoint_every
        if isinstance(envs_per_actor, (int, np.integer)):
            if num_actors is None or int(num_actors) < 1:
                raise ValueError("num_actors must be >= 1")
            sizes = [int(envs_per_actor)] * int(num_actors)
        else:
            sizes = [int(m) for m in envs_per_actor]
            if num_actors is not None and int(num_actors) != len(sizes):
                raise ValueError(f"num_actors={num_actors} but envs_per_actor has {len(sizes)} entries")
        if not sizes or min(sizes) < 1:
            raise ValueError(f"every actor needs at least one environment, got {sizes}")
        if int(threads_per_actor) < 1:
            raise ValueError("threads_per_actor must be >= 1")
        if checkpoint_every < 0:
            raise ValueError("checkpoint_every must be >= 0 (0: no checkpoints, restarted actors reset)")
        self.sizes = sizes
        self.offsets = [int(x) for x in np.cumsum([0] + sizes[:-1])]
        self.num_envs = int(sum(sizes))
        self.threads = int(threads_per_actor)
        self.step_timeout = float(config.step_timeout)
        self.start_timeout = float(config.start_timeout)
        self.checkpoint_every = int(checkpoint_every)
        self.max_restarts = int(config.max_restarts)
        self.scheduling_strategy = config.scheduling_strategy
        self.actor_options = dict(config.actor_options or {})

        game = kwargs.pop("game", None)
        kw = _driver_kwargs(game, kwargs)
        kw.pop("game", None)
        kw["rom"] = _as_bytes(kw.get("rom"))
        start = kw.pop("start_state", None)
        if isinstance(start, (list, tuple)):
            if len(start) != self.num_envs:
                raise ValueError(f"start_state: expected {self.num_envs} states, got {len(start)}")
            starts = [_as_bytes(s) for s in start]
            self.per_actor_start = [starts[o : o + m] for o, m in zip(self.offsets, sizes)]
        else:
            kw["start_state"] = _as_bytes(start)
            self.per_actor_start = [None] * len(sizes)
        # Check the arguments here, where a mistake raises at once (not in a remote actor).
        check = dict(kw, num_threads=1)
        if self.per_actor_start[0] is not None:
            check["start_state"] = self.per_actor_start[0][0]
        BatchDriver(1, **check)
        kw["num_threads"] = self.threads
        self.kwargs = kw

        if not ray.is_initialized():
            ray.init(address=config.address)
        self._remote_cls = ray.remote(BatchActor)
        self.restarts = [0] * len(sizes)
        self.seeds: list = [None] * self.num_envs
        self.start_overrides: dict[int, Any] = {}  # global env -> start state set later
        self.checkpoints: list = [None] * len(sizes)
        self.logs: list[list] = [[] for _ in sizes]
        self.actors: list = [None] * len(sizes)
        self.nodes: list = [None] * len(sizes)
        for k in range(len(sizes)):
            self.actors[k] = self._spawn(k)
        try:
            infos = self._get([a.describe.remote() for a in self.actors], "start", self.start_timeout)
        except BaseException:
            self.close()  # an actor still waiting for CPUs would take them later
            raise
        self.nodes = [i["node_id"] for i in infos]
        self.describe = infos[0]

    # -- plumbing

    def _spawn(self, k: int):
        opts: dict = dict(num_cpus=self.threads, max_concurrency=1, max_restarts=0)
        if self.scheduling_strategy is not None:
            opts["scheduling_strategy"] = self.scheduling_strategy
        opts.update(self.actor_options)
        kw = dict(self.kwargs)
        if self.per_actor_start[k] is not None:
            kw["start_state"] = list(self.per_actor_start[k])
        return self._remote_cls.options(**opts).remote(self.sizes[k], self.offsets[k], kw)

    def _where(self, k: int) -> str:
        return f"actor {k} (environments {self.offsets[k]}-{self.offsets[k] + self.sizes[k] - 1}, node {self.nodes[k]})"

    def _get(self, refs: list, what: str, timeout: float) -> list:
        """ray.get of one ref per actor, in actor order, under one deadline; no recovery."""
        deadline = time.monotonic() + timeout
        out = []
        for k, ref in enumerate(refs):
            try:
                out.append(ray.get(ref, timeout=max(0.0, deadline - time.monotonic())))
            except RayActorError as e:
                raise RayEnvError(f"{self._where(k)} died during {what}: {e}") from e
            except GetTimeoutError:
                raise RayEnvTimeoutError(
                    f"{self._where(k)} did not answer {what} within {timeout:g} s; "
                    f"it may be waiting for {self.threads} CPU(s) (available: {ray.available_resources().get('CPU', 0)}) "
                    "or its node may be lost"
                ) from None
        return out

    def slice(self, arr: Optional[np.ndarray], k: int) -> Optional[np.ndarray]:
        if arr is None:
            return None
        o, m = self.offsets[k], self.sizes[k]
        return arr[o : o + m]

    def call(self, method: str, args_of: Callable[[int], tuple], *, what: str, recover: bool = True) -> tuple[list, list]:
        """Send ``method(*args_of(k))`` to every actor, then gather in actor order. A dead actor
        is restored (if ``recover``) and the call sent again; returns (results, restored) where
        restored[k] is None or (how, replayed steps)."""
        refs = [getattr(a, method).remote(*args_of(k)) for k, a in enumerate(self.actors)]
        return self.gather(refs, method, args_of, what=what, recover=recover)

    def gather(self, refs: list, method: str, args_of: Callable[[int], tuple], *, what: str, recover: bool = True):
        deadline = time.monotonic() + self.step_timeout
        results: list = [None] * len(refs)
        restored: list = [None] * len(refs)
        for k, ref in enumerate(refs):
            try:
                results[k] = ray.get(ref, timeout=max(0.0, deadline - time.monotonic()))
            except GetTimeoutError:
                raise RayEnvTimeoutError(
                    f"{self._where(k)} did not answer {what} within {self.step_timeout:g} s "
                    "(its node may be lost or overloaded); close() this environment"
                ) from None
            except RayActorError as e:
                if not recover:
                    raise RayEnvError(f"{self._where(k)} died during {what}: {e}") from e
                restored[k] = self.restore(k, e)
                if restored[k][0] == "checkpoint" or method != "step":
                    results[k] = self._get_all([getattr(self.actors[k], method).remote(*args_of(k))], k, what)[0]
        return results, restored

    def restore(self, k: int, err: BaseException) -> tuple[str, int]:
        """Replace dead actor k: a new actor, seeded as the old one was, loaded with the last
        checkpoint and the logged steps replayed (or left to be reset by the caller)."""
        if self.restarts[k] >= self.max_restarts:
            raise RayEnvError(f"{self._where(k)} died and was already restarted {self.restarts[k]} time(s) (max_restarts): {err}") from err
        self.restarts[k] += 1
        try:
            ray.kill(self.actors[k], no_restart=True)
        except Exception:
            pass
        self.actors[k] = self._spawn(k)
        self.nodes[k] = self._get_all([self.actors[k].describe.remote()], k, "start (restart)", self.start_timeout)[0]["node_id"]
        a = self.actors[k]
        o, m = self.offsets[k], self.sizes[k]
        refs = [a.seed.remote(self.seeds[o : o + m])]
        for i, s in self.start_overrides.items():
            if o <= i < o + m:
                refs.append(a.set_start_state.remote(s, i - o))
        how = "reset"
        if self.checkpoints[k] is not None:
            refs.append(a.load_states.remote(self.checkpoints[k]))
            refs.append(a.replay.remote(list(self.logs[k])))
            how = "checkpoint"
        out = self._get_all(refs, k, "restore")
        return how, (int(out[-1]) if how == "checkpoint" else 0)

    def _get_all(self, refs: list, k: int, what: str, timeout: Optional[float] = None) -> list:
        timeout = self.step_timeout if timeout is None else timeout
        try:
            return ray.get(refs, timeout=timeout)
        except GetTimeoutError:
            raise RayEnvTimeoutError(f"{self._where(k)} did not answer {what} within {timeout:g} s") from None
        except RayActorError as e:
            raise RayEnvError(f"{self._where(k)} died again during {what}: {e}") from e

    def record_seeds(self, seeds: list) -> None:
        """Seeds given (None: generator left as it was); a restarted actor gets the last ones."""
        self.seeds = [old if s is None else s for old, s in zip(self.seeds, seeds)]

    def after_step(self, k: int, states: Optional[list], step_args: tuple) -> None:
        """Called for each actor's successful step, in order: a reply with states is the new
        checkpoint (states after this step); otherwise the step is logged for replay."""
        if states is not None:
            self.checkpoints[k] = states
            self.logs[k] = []
        elif self.checkpoints[k] is not None:
            actions, reset_mask, same_step, _ = step_args
            self.logs[k].append((actions, reset_mask, same_step))

    def close(self) -> None:
        for a in self.actors:
            if a is not None:
                try:
                    ray.kill(a, no_restart=True)
                except Exception:
                    pass
        self.actors = [None] * len(self.actors)


# ---------------------------------------------------------------------------------- shared driver logic


def _draw_seeds(n: int) -> list:
    return [int(s) for s in np.random.SeedSequence().generate_state(n, dtype=np.uint64)]


class _RayStepper:
    """What the SB3 and Gymnasium classes share: seeding, reset, pipelined steps, restores."""

    group: _ActorGroup

    def _init_group(self, config: ActorGroupConfig, env_kwargs: dict, same_step: bool) -> dict:
        # Same-step resets run inside each actor's step pass (Batch(same_step_reset=True)).
        self.group = _ActorGroup(config, dict(env_kwargs, same_step_reset=same_step))
        self.render_mode = config.render_mode
        d = self.group.describe
        self._dict_obs = hasattr(d["observation_space"], "spaces")
        self._num_actions = int(d["action_space"].n)
        self._pending: Optional[tuple] = None
        self._last_obs: Any = None
        self._step_count = 0
        self._closed = False
        return d

    @property
    def actor_nodes(self) -> list:
        """The Ray node id of every actor (after restarts, where the new one runs)."""
        return list(self.group.nodes)

    @property
    def actor_restarts(self) -> list:
        return list(self.group.restarts)

    def _concat(self, parts: list) -> Any:
        if self._dict_obs:
            return {key: np.concatenate([p[key] for p in parts]) for key in parts[0]}
        return np.concatenate(parts)

    def _rows(self, obs: Any, rows: Iterable[int]) -> list:
        if self._dict_obs:
            return [{key: v[i].copy() for key, v in obs.items()} for i in rows]
        return [obs[i].copy() for i in rows]

    def _check_actions(self, actions: Any) -> np.ndarray:
        a = np.asarray(actions)
        if a.ndim == 0 and self.group.num_envs == 1:
            a = a.reshape(1)
        if a.dtype == np.bool_ or not np.issubdtype(a.dtype, np.integer):
            raise TypeError(f"actions must be integers, got dtype {a.dtype}")
        a = a.reshape(-1) if a.size == self.group.num_envs else a
        if a.shape != (self.group.num_envs,):
            raise ValueError(f"actions must have shape ({self.group.num_envs},), got {a.shape}")
        bad = (a < 0) | (a >= self._num_actions)
        if bad.any():
            i = int(np.flatnonzero(bad)[0])
            raise ValueError(f"action {a[i]} of environment {i} is out of range: there are {self._num_actions} actions")
        return np.ascontiguousarray(a, dtype=np.int64)

    def _seed_and_reset(self, seeds: Optional[list], mask: Optional[np.ndarray] = None) -> Any:
        g = self.group
        if seeds is not None:
            g.record_seeds(seeds)
            g.call("seed", lambda k: (seeds[g.offsets[k] : g.offsets[k] + g.sizes[k]],), what="seed")
        # Every reset (masked ones too) is a checkpoint: replaying resets is not exact.
        ckpt = bool(g.checkpoint_every)
        res, _ = g.call("reset", lambda k: (g.slice(mask, k), ckpt), what="reset")
        if ckpt:
            for k, (_, states) in enumerate(res):
                g.after_step(k, states, (None, None, None, None))
        self._last_obs = self._concat([r[0] for r in res])
        self._step_count = 0
        return self._last_obs

    def _send_step(self, actions: np.ndarray, reset_mask: Optional[np.ndarray], same_step: bool) -> None:
        if self._closed:
            raise RuntimeError("this environment is closed")
        g = self.group
        every = g.checkpoint_every
        ckpt = bool(every) and (self._step_count + 1) % every == 0
        args = [
            (actions[o : o + m], None if reset_mask is None else reset_mask[o : o + m], same_step, ckpt)
            for o, m in zip(g.offsets, g.sizes)
        ]
        refs = [a.step.remote(*args[k]) for k, a in enumerate(g.actors)]
        self._pending = (refs, args, same_step)

    def _gather_step(self):
        """Returns obs, rewards, terminated, truncated, finals ({global i: obs}), restored
        ({global i: (how, replayed)})."""
        if self._pending is None:
            raise RuntimeError("step_async() must be called before step_wait()")
        refs, args, same_step = self._pending
        self._pending = None
        g = self.group
        results, restored = g.gather(refs, "step", lambda k: args[k], what="step")
        finals: dict = {}
        lost: dict = {}
        for k, res in enumerate(results):
            o, m = g.offsets[k], g.sizes[k]
            if res is None:  # restored from reset: the episodes end here, truncated
                last = self._rows(self._last_obs, range(o, o + m))
                if same_step or getattr(self, "_reset_now_on_restart", True):
                    obs_k, states = g._get_all([g.actors[k].reset.remote(None, bool(g.checkpoint_every))], k, "reset")[0]
                else:
                    obs_k, states = self._slice_obs(self._last_obs, o, m), None
                res = (obs_k, np.zeros(m), np.zeros(m, bool), np.ones(m, bool), None, states)
                if same_step:
                    res = res[:4] + ({j: last[j] for j in range(m)},) + res[5:]
                results[k] = res
                if states is not None:
                    g.after_step(k, states, args[k])
            else:
                g.after_step(k, res[5], args[k])
            if res[4]:
                finals.update({o + j: v for j, v in res[4].items()})
            if restored[k] is not None:
                lost.update({i: restored[k] for i in range(o, o + m)})
        obs = self._concat([r[0] for r in results])
        rewards = np.concatenate([r[1] for r in results]).astype(np.float64)
        terminated = np.concatenate([r[2] for r in results]).astype(bool)
        truncated = np.concatenate([r[3] for r in results]).astype(bool)
        self._last_obs = obs
        self._step_count += 1
        return obs, rewards, terminated, truncated, finals, lost

    def _slice_obs(self, obs: Any, o: int, m: int) -> Any:
        if self._dict_obs:
            return {key: v[o : o + m] for key, v in obs.items()}
        return obs[o : o + m]

    def _env_call(self, method: str, i: int, *args: Any) -> Any:
        g = self.group
        k = int(np.searchsorted(np.asarray(g.offsets), i, side="right") - 1)
        if not 0 <= i < g.num_envs:
            raise IndexError(f"environment {i} out of range (0-{g.num_envs - 1})")
        return g._get_all([getattr(g.actors[k], method).remote(i - g.offsets[k], *args)], k, method)[0]

    def _save_state(self, i: int) -> bytes:
        return self._env_call("save_state", i)

    def _load_state(self, i: int, state: Any) -> None:
        self._env_call("load_state", i, _as_bytes(state))
        self._invalidate_checkpoint(i)

    def _set_start_state(self, state: Any, i: int) -> None:
        state = _as_bytes(state)
        self._env_call("set_start_state", i, state)
        self.group.start_overrides[i] = state

    def _invalidate_checkpoint(self, i: int) -> None:
        """A loaded state is not in the checkpoint: the actor's next restore resets instead,
        until the next checkpoint."""
        g = self.group
        k = int(np.searchsorted(np.asarray(g.offsets), i, side="right") - 1)
        g.checkpoints[k] = None
        g.logs[k] = []

    def _screens(self) -> list:
        g = self.group
        res, _ = g.call("screens", lambda k: (), what="screens")
        return [s for r in res for s in r]

    def _close(self) -> None:
        if not self._closed:
            self.group.close()
            self._closed = True


_COMMON_DOC = """
    Arguments: ``num_actors`` actors of ``envs_per_actor`` environments each (or a list of
    sizes, one per actor), each actor stepping its batch on ``threads_per_actor`` threads and
    declaring that many CPUs to Ray. ``address``: passed to ``ray.init`` if Ray is not
    initialised yet. ``step_timeout`` / ``start_timeout`` (seconds): deadlines of a step and of
    an actor's start. ``checkpoint_every`` (steps; 0: none), ``max_restarts`` (per actor):
    see the module docs. ``scheduling_strategy`` ("SPREAD": actors on as many nodes as
    possible; None: Ray's default; or a placement-group strategy). ``actor_options``: more
    ``ray.remote`` options. Other keyword arguments are those of
    :class:`emurust.envs.GameBoyVectorEnv` (``game``, ``rom``, ``obs``, ``reward``, ...).
"""


# ---------------------------------------------------------------------------------- Stable-Baselines3


def _sb3_base():
    try:
        from stable_baselines3.common.vec_env.base_vec_env import VecEnv
    except ImportError as e:  # pragma: no cover - depends on the environment
        raise ImportError("RayVecEnv needs stable-baselines3: pip install 'emurust[rl]'") from e
    return VecEnv


def _make_ray_vec_env_class():
    VecEnv = _sb3_base()

    class RayVecEnv(_RayStepper, VecEnv):
        """Stable-Baselines3 ``VecEnv`` of emurust batches on Ray actors; same observations,
        rewards, dones and infos as :class:`emurust.sb3.EmurustVecEnv` of the same total size
        and seed (same-step reset, ``terminal_observation``, ``TimeLimit.truncated``).
        """

        __doc__ = (__doc__ or "") + _COMMON_DOC

        def __init__(self, *args: Any, **kwargs: Any):
            d = self._init_group(*ActorGroupConfig.from_call("RayVecEnv", args, kwargs), same_step=True)
            self._seeded = False
            VecEnv.__init__(self, self.group.num_envs, d["observation_space"], d["action_space"])
            self.metadata["render_fps"] = 60 / d["frame_skip"]

        __init__.__signature__ = ActorGroupConfig.signature()

        def reset(self):
            seeds = self._seeds
            if any(s is not None for s in seeds):
                # As EmurustVecEnv: environments without a seed keep their generator.
                seeds = [None if s is None else int(s) for s in seeds]
            elif not self._seeded:
                seeds = _draw_seeds(self.num_envs)
            else:
                seeds = None
            self._seeded = True
            self._reset_seeds()
            self._reset_options()
            return self._seed_and_reset(seeds)

        def step_async(self, actions: np.ndarray) -> None:
            self._send_step(self._check_actions(actions), None, True)

        def step_wait(self):
            obs, rewards, terminated, truncated, finals, restored = self._gather_step()
            done = terminated | truncated
            infos: list[dict[str, Any]] = [{} for _ in range(self.num_envs)]
            for i in np.flatnonzero(done):
                i = int(i)
                infos[i]["terminal_observation"] = finals[i]
                infos[i]["TimeLimit.truncated"] = bool(truncated[i] and not terminated[i])
            for i, (how, replayed) in restored.items():
                infos[i][RESTARTED] = True
                infos[i][RESTORED_FROM] = how
                infos[i][REPLAYED] = replayed
            return obs, rewards.astype(np.float32), done, infos

        def close(self) -> None:
            self._close()

        def get_images(self) -> Sequence[Optional[np.ndarray]]:
            return self._screens()

        def _indices(self, indices: Any) -> list[int]:
            if indices is None:
                return list(range(self.num_envs))
            if isinstance(indices, (int, np.integer)):
                return [int(indices)]
            return [int(i) for i in indices]

        def get_attr(self, attr_name: str, indices: Any = None) -> list[Any]:
            value = getattr(self, attr_name)
            return [value for _ in self._indices(indices)]

        def set_attr(self, attr_name: str, value: Any, indices: Any = None) -> None:
            setattr(self, attr_name, value)

        def env_method(self, method_name: str, *method_args: Any, indices: Any = None, **method_kwargs: Any) -> list[Any]:
            """``save_state``, ``load_state(state)``, ``set_start_state(state)`` per environment."""
            if method_name == "save_state":
                return [self._save_state(i) for i in self._indices(indices)]
            if method_name == "load_state":
                return [self._load_state(i, *method_args, **method_kwargs) for i in self._indices(indices)]
            if method_name == "set_start_state":
                return [self._set_start_state(*method_args, i=i, **method_kwargs) for i in self._indices(indices)]
            raise AttributeError(f"RayVecEnv has no per-environment method {method_name!r}")

        def env_is_wrapped(self, wrapper_class: type, indices: Any = None) -> list[bool]:
            return [False for _ in self._indices(indices)]

    return RayVecEnv


# ---------------------------------------------------------------------------------- Gymnasium


def _make_ray_vector_env_class():
    from gymnasium.vector import AutoresetMode, VectorEnv
    from gymnasium.vector.utils import batch_space

    class RayVectorEnv(_RayStepper, VectorEnv):
        """Gymnasium ``VectorEnv`` of emurust batches on Ray actors; same results as
        :class:`emurust.envs.GameBoyVectorEnv` of the same total size and seed. Infos of
        restored environments: ``emurust_actor_restarted`` (bool array, with the ``_`` mask),
        ``emurust_restored_from`` and ``emurust_replayed_steps``.
        """

        __doc__ = (__doc__ or "") + _COMMON_DOC
        metadata = {"render_modes": ["rgb_array"], "autoreset_mode": AutoresetMode.NEXT_STEP}

        def __init__(self, *args: Any, autoreset_mode: Any = AutoresetMode.NEXT_STEP, **kwargs: Any):
            try:
                mode = AutoresetMode(autoreset_mode)
            except ValueError:
                raise ValueError(f"unknown autoreset_mode {autoreset_mode!r}") from None
            d = self._init_group(
                *ActorGroupConfig.from_call("RayVectorEnv", args, kwargs), same_step=mode == AutoresetMode.SAME_STEP
            )
            self.autoreset_mode = mode
            self._reset_now_on_restart = mode != AutoresetMode.NEXT_STEP
            self.metadata = dict(self.metadata, autoreset_mode=mode, render_fps=60 / d["frame_skip"])
            self.num_envs = self.group.num_envs
            self.single_observation_space = d["observation_space"]
            self.single_action_space = d["action_space"]
            self.observation_space = batch_space(self.single_observation_space, self.num_envs)
            self.action_space = batch_space(self.single_action_space, self.num_envs)
            self._autoreset = np.zeros(self.num_envs, dtype=bool)
            self._needs_reset = True

        __init__.__signature__ = ActorGroupConfig.signature(
            inspect.Parameter("autoreset_mode", inspect.Parameter.KEYWORD_ONLY, default=AutoresetMode.NEXT_STEP, annotation="Any")
        )

        def reset(self, *, seed: Any = None, options: Optional[dict] = None):
            super().reset(seed=seed if isinstance(seed, (int, np.integer)) else None)
            n = self.num_envs
            mask = reset_mask_option(options, n, self._needs_reset)
            seeds = None
            if seed is not None or self._needs_reset:
                if isinstance(seed, (int, np.integer)) and not isinstance(seed, bool):
                    if seed < 0:
                        raise ValueError("seed must be >= 0")
                    seeds = [int(seed) + i for i in range(n)]
                elif isinstance(seed, (list, tuple)):
                    if len(seed) != n:
                        raise ValueError(f"expected {n} seeds, got {len(seed)}")
                    seeds = [None if s is None else int(s) for s in seed]
                elif seed is None:
                    seeds = _draw_seeds(n)
                else:
                    raise TypeError(f"seed must be an int or a list of ints, got {type(seed).__name__}")
                if mask is not None:  # environments not reset keep their generators
                    seeds = [s if m else None for s, m in zip(seeds, mask)]
            obs = self._seed_and_reset(seeds, mask)
            self._needs_reset = False
            if mask is None:
                self._autoreset[:] = False
            else:
                self._autoreset[mask] = False
            return self._copy(obs), {}

        def _copy(self, obs: Any) -> Any:
            if self._dict_obs:
                return {k: v.copy() for k, v in obs.items()}
            return obs.copy()

        def step(self, actions: Any):
            if self._needs_reset:
                raise RuntimeError("call reset() before step()")
            a = self._check_actions(actions)
            mode = self.autoreset_mode
            mask = None
            if mode == AutoresetMode.NEXT_STEP and self._autoreset.any():
                mask = self._autoreset.copy()
            self._send_step(a, mask, mode == AutoresetMode.SAME_STEP)
            obs, rewards, terminated, truncated, finals, restored = self._gather_step()
            infos: dict[str, Any] = {}
            done = terminated | truncated
            if mode == AutoresetMode.NEXT_STEP:
                self._autoreset = done
            elif mode == AutoresetMode.SAME_STEP and done.any():
                final_obs = np.full(self.num_envs, None, dtype=object)
                for i in np.flatnonzero(done):
                    final_obs[i] = finals[int(i)]
                infos["final_obs"] = final_obs
                infos["_final_obs"] = done.copy()
                infos["final_info"] = {}
                infos["_final_info"] = done.copy()
            if restored:
                flag = np.zeros(self.num_envs, dtype=bool)
                how = np.full(self.num_envs, None, dtype=object)
                replayed = np.zeros(self.num_envs, dtype=np.int64)
                for i, (h, r) in restored.items():
                    flag[i], how[i], replayed[i] = True, h, r
                infos[RESTARTED], infos["_" + RESTARTED] = flag, flag.copy()
                infos[RESTORED_FROM], infos["_" + RESTORED_FROM] = how, flag.copy()
                infos[REPLAYED], infos["_" + REPLAYED] = replayed, flag.copy()
            return obs, rewards, terminated, truncated, infos

        def render(self):
            if self.render_mode == "rgb_array":
                return tuple(self._screens())
            return None

        def save_state(self, env: int) -> bytes:
            return self._save_state(env)

        def load_state(self, env: int, state: Any) -> None:
            self._load_state(env, state)

        def set_start_state(self, state: Any, env: Optional[int] = None) -> None:
            for i in range(self.num_envs) if env is None else [env]:
                self._set_start_state(state, i)

        def close_extras(self, **kwargs: Any) -> None:
            self._close()

    return RayVectorEnv


def __getattr__(name: str):
    # The SB3 and Gymnasium classes are built on first use, so that importing emurust.ray needs
    # neither library.
    if name == "RayVecEnv":
        cls = _make_ray_vec_env_class()
    elif name == "RayVectorEnv":
        cls = _make_ray_vector_env_class()
    else:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    cls.__module__ = __name__
    cls.__qualname__ = name
    globals()[name] = cls
    return cls


# ---------------------------------------------------------------------------------- RLlib


def _scaled(env: Any, vector: bool) -> Any:
    """uint8 observations as float32 in [0, 1], images channel-last (as RLlib's default modules
    expect)."""
    from gymnasium import spaces

    single = env.single_observation_space if vector else env.observation_space
    if not isinstance(single, spaces.Box):
        return env  # Dict observations: add RLlib connectors of your own
    scale = np.float32(1.0 / float(np.max(single.high)))
    # RLlib's CNN encoders take channel-last images: (1, H, W) -> (H, W, 1), (3, H, W) -> (H, W, 3).
    chw = len(single.shape) == 3 and single.shape[0] in (1, 3)
    shape = (single.shape[1], single.shape[2], single.shape[0]) if chw else single.shape
    new_single = spaces.Box(0.0, 1.0, shape, np.float32)

    def f(o):
        o = o.astype(np.float32) * scale
        return np.moveaxis(o, -3, -1) if chw else o

    if vector:
        from gymnasium.vector.utils import batch_space
        from gymnasium.wrappers.vector import TransformObservation

        return TransformObservation(env, f, batch_space(new_single, env.num_envs), new_single)
    from gymnasium.wrappers import TransformObservation as T1

    return T1(env, f, new_single)


def _rllib_creator(defaults: dict) -> Callable[[Any], Any]:
    def create(env_ctx: Any):
        from .envs import GameBoyEnv, GameBoyVectorEnv

        cfg = dict(defaults)
        cfg.update(dict(env_ctx or {}))
        num_envs = cfg.pop("num_envs", None)
        scale = cfg.pop("scale_obs", True)
        if num_envs is None:  # RLlib asks for a single environment (SYNC/ASYNC vectorisation)
            env = GameBoyEnv(**cfg)
        else:
            env = GameBoyVectorEnv(int(num_envs), **cfg)
        return _scaled(env, num_envs is not None) if scale else env

    return create


def register_rllib_env(name: str = "emurust", **defaults: Any) -> str:
    """Register an RLlib env creator ``name``: each env runner's vector environment becomes one
    emurust batch (``gym_env_vectorize_mode="vector_entry_point"``; see
    :func:`rllib_ppo_config`). ``defaults`` are environment arguments (``game="dodge"``,
    ``obs="grey_half"``, ``num_threads=4`` ...); ``config.environment(env_config=...)``
    overrides them. ``scale_obs`` (True): observations as float32 in [0, 1], images channel-last,
    as RLlib's default modules expect. ROM and state paths are read here and shipped as bytes. Returns ``name``."""
    from ray.tune.registry import register_env

    defaults = dict(defaults)
    game = defaults.pop("game", None)
    if game is not None:
        from .games import task_kwargs

        defaults = task_kwargs(game, **defaults)
    for key in ("rom", "start_state"):
        if key in defaults:
            v = defaults[key]
            defaults[key] = [_as_bytes(x) for x in v] if isinstance(v, (list, tuple)) else _as_bytes(v)
    register_env(name, _rllib_creator(defaults))
    return name


def rllib_ppo_config(
    env: str = "emurust",
    *,
    num_env_runners: int = 1,
    envs_per_runner: int = 16,
    threads_per_runner: int = 1,
    env_config: Optional[dict] = None,
):
    """A ``PPOConfig`` (new API stack) whose env runners each step one emurust batch of
    ``envs_per_runner`` environments on ``threads_per_runner`` threads (the CPUs each runner
    declares). Chain the usual ``.training(...)``, ``.rl_module(...)`` calls on it; on a
    cluster, only ``ray.init(address=...)`` changes."""
    from ray.rllib.algorithms.ppo import PPOConfig

    cfg = dict(env_config or {})
    cfg.setdefault("num_threads", int(threads_per_runner))
    return (
        PPOConfig()
        .environment(env, env_config=cfg)
        .env_runners(
            num_env_runners=int(num_env_runners),
            num_envs_per_env_runner=int(envs_per_runner),
            num_cpus_per_env_runner=int(threads_per_runner),
            gym_env_vectorize_mode="vector_entry_point",
        )
    )
