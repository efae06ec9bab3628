"""Verification of emurust's Pong against the C reference (PufferLib's ``pong.h``), L2-L4.

L1 (properties of one game) are the cargo tests of crates/emurust-pong. Here:

- L2 :func:`interactions`: purpose-built states where two rules meet (a wall and a paddle in
  one frame, a paddle's edge, the spin while the paddle is clipped, the point that ends a game
  and its ``rand()`` serve, frame skip), run on both from the same state; every field compared
  after every step, plus a sanity condition on the reference so a check that exercises nothing
  fails.
- L3 :func:`rollout`: thousands of seeded games (game k: ``srand(seed + k)``) played to their
  end on both, under a mix of policies (uniform random, sticky random, ball trackers with
  noise); every observation (bit for bit), reward and terminal compared at every step.
- L4 :func:`transfer`: a PPO policy trained on emurust, evaluated on both with the same
  sampling seeds; the returns' equivalence is a TOST within a margin, so a divergence that
  changes play fails it (``plant`` puts one in: see :data:`PLANTS`).
"""

from __future__ import annotations

import json
import time
from dataclasses import asdict, dataclass, field
from typing import Any, Callable, Optional

import numpy as np

from .pong_oracle import DEFAULT_CONFIG, LOG_FIELDS, STATE_FIELDS, OracleBatch

OBS_NAMES = ("paddle_l", "paddle_r", "ball_x", "ball_y", "ball_vx", "ball_vy", "score_l", "score_r")


def _ours(n: int, seeds: list[int], num_threads: Optional[int] = None, **config: Any):
    from .. import _core

    b = _core.PongBatch(n, **config, num_threads=num_threads)
    b.seed(list(seeds))
    return b


class _OurOutputs:
    def __init__(self, n: int):
        self.obs = np.zeros((n, 8), np.float32)
        self.final = np.zeros((n, 8), np.float32)
        self.rewards = np.zeros(n, np.float32)
        self.terminated = np.zeros(n, np.bool_)
        self.truncated = np.zeros(n, np.bool_)


# ---------------------------------------------------------------- L3 rollouts


@dataclass
class Divergence:
    episode: int  # game index k (seed = seed + k)
    seed: int
    step: int  # steps taken in that game when the difference appeared (0: after reset)
    component: str
    ours: Any
    reference: Any
    actions: list = field(default_factory=list)  # the game's last actions, oldest first
    state_ours: dict = field(default_factory=dict)
    state_reference: dict = field(default_factory=dict)


@dataclass
class RolloutResult:
    episodes: int  # games compared to their end
    steps: int  # game-steps compared
    seed: int
    policy_mix: str
    returns: int = 0  # agent returns (reward 1)
    wins: int = 0  # points won by the agent
    unfinished: int = 0  # games cut at max_steps without ending
    seconds: float = 0.0
    divergence: Optional[Divergence] = None

    @property
    def identical(self) -> bool:
        return self.divergence is None and self.unfinished == 0


POLICIES = ("random", "sticky", "tracker", "noisy_tracker")


def _policy_actions(kind: np.ndarray, obs: np.ndarray, prev: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """Actions of the policy mix: kind 0 uniform, 1 sticky (keep the last action 90%), 2 track
    the ball (10% random), 3 track with 40% random. Trackers read the reference's observation."""
    n = len(obs)
    uniform = rng.integers(0, 3, n)
    # Ball centre minus paddle centre, in court heights (default geometry).
    diff = obs[:, 3] + 16 / 640 - obs[:, 1]
    track = np.where(diff > 0.01, 1, np.where(diff < -0.01, 2, 0))
    u = rng.random(n)
    a = np.where(kind == 0, uniform, 0)
    a = np.where(kind == 1, np.where(u < 0.9, prev, uniform), a)
    a = np.where(kind == 2, np.where(u < 0.1, uniform, track), a)
    a = np.where(kind == 3, np.where(u < 0.4, uniform, track), a)
    return a.astype(np.int64)


def _state_diff(a: dict, b: dict) -> Optional[tuple[str, Any, Any]]:
    for k in (*STATE_FIELDS, *LOG_FIELDS):
        va, vb = a[k], b[k]
        if np.float32(va).tobytes() != np.float32(vb).tobytes() if isinstance(va, float) else va != vb:
            return k, va, vb
    return None


def rollout(episodes: int = 300, seed: int = 0, chunk: int = 2000, max_steps: int = 50_000,
            num_threads: Optional[int] = None, progress: Optional[Callable[[str], None]] = None,
            plant: Optional[str] = None, **config: Any) -> RolloutResult:
    """Play games seeded ``seed + k`` (k < episodes) to their end on both and compare every step."""
    res = RolloutResult(0, 0, seed, "random/sticky/tracker/noisy tracker (k % 4)")
    t0 = time.perf_counter()
    for start in range(0, episodes, chunk):
        n = min(chunk, episodes - start)
        seeds = [(seed + start + i) % 2**32 for i in range(n)]
        ours = _ours(n, seeds, num_threads, **_planted_config(plant, config))
        ref = OracleBatch(seeds, **config)
        out = _OurOutputs(n)
        ours.reset(out.obs)
        ref_obs = ref.reset()
        kind = (np.arange(start, start + n) % 4).astype(np.int64)
        rng = np.random.default_rng([seed, start])
        prev = np.zeros(n, np.int64)
        history = np.zeros((n, 16), np.int64)
        live = np.ones(n, bool)
        steps = np.zeros(n, np.int64)
        div = _compare(ref_obs, out.obs, None, None, None, None, live)
        t = 0
        while div is None and live.any() and t < max_steps:
            actions = _policy_actions(kind, ref_obs, prev, rng)
            prev = actions
            history[:, t % 16] = actions
            ours.step(_planted_actions(plant, actions), out.obs, out.rewards, out.terminated, out.truncated, out.final)
            ref_obs, ref_rew, ref_term = ref.step(actions)
            t += 1
            steps += live
            div = _compare(ref_obs, out.obs, ref_rew, out.rewards, ref_term, out.terminated, live)
            if div is None:
                res.returns += int(((ref_rew == 1.0) & live).sum())
                res.wins += int(((ref_rew == 10.0) & live).sum())
                res.steps += int(live.sum())
                ended = live & (ref_term == 1)
                res.episodes += int(ended.sum())
                live &= ~ended
        if div is not None:
            i, comp, a, b = div
            k = start + i
            last = [int(x) for x in np.roll(history[i], -(t % 16))[-min(t, 16):]]
            res.divergence = Divergence(k, seeds[i], int(t), comp, a, b, last, dict(ours.get_state(i)), ref.get_state(i))
            break
        res.unfinished += int(live.sum())
        ref.close()
        if progress:
            progress(f"  games {start + n:,}/{episodes:,}: {res.steps:,} steps identical")
    res.seconds = time.perf_counter() - t0
    return res


def _compare(ref_obs, our_obs, ref_rew, our_rew, ref_term, our_term, live) -> Optional[tuple[int, str, Any, Any]]:
    """First (game, component, ours, reference) difference among live games, or None."""
    bad = (ref_obs.view(np.uint32) != our_obs.view(np.uint32)).any(axis=1) & live
    if ref_rew is not None:
        bad_r = (ref_rew.view(np.uint32) != our_rew.view(np.uint32)) & live
        bad_t = (ref_term.astype(bool) != our_term) & live
    else:
        bad_r = bad_t = np.zeros_like(bad)
    anyb = bad | bad_r | bad_t
    if not anyb.any():
        return None
    i = int(np.flatnonzero(anyb)[0])
    if bad_r[i]:
        return i, "reward", float(our_rew[i]), float(ref_rew[i])
    if bad_t[i]:
        return i, "terminal", bool(our_term[i]), bool(ref_term[i])
    j = int(np.flatnonzero(ref_obs[i].view(np.uint32) != our_obs[i].view(np.uint32))[0])
    return i, f"observation[{j}] ({OBS_NAMES[j]})", float(our_obs[i, j]), float(ref_obs[i, j])


# ---------------------------------------------------------------- planted divergences (for the tests)

#: One-line divergences planted on emurust's side to show that the checks catch them.
PLANTS = {
    "paddle_speed": "paddles one unit faster on emurust (paddle_speed 9 instead of 8)",
    "swap_actions": "up and down swapped on emurust (the action passed to the game)",
}


def _check_plant(plant: Optional[str]) -> None:
    if plant is not None and plant not in PLANTS:
        raise ValueError(f"unknown plant {plant!r}; known: {sorted(PLANTS)}")


def _planted_config(plant: Optional[str], config: dict) -> dict:
    _check_plant(plant)
    if plant == "paddle_speed":
        return {**config, "paddle_speed": float(config.get("paddle_speed", DEFAULT_CONFIG["paddle_speed"])) + 1}
    return config


def _planted_actions(plant: Optional[str], actions: np.ndarray) -> np.ndarray:
    if plant == "swap_actions":
        return np.where(actions == 1, 2, np.where(actions == 2, 1, actions))
    return actions


# ---------------------------------------------------------------- L2 interactions


@dataclass
class Interaction:
    name: str
    what: str
    state: dict  # set on both after a reset
    actions: list  # one per step
    sanity: Callable[[list], bool]  # on the reference's (state, reward, terminal) per step
    sanity_text: str
    config: dict = field(default_factory=dict)


def _s(**kw: Any) -> dict:
    return kw


INTERACTIONS = [
    Interaction(
        "wall_and_agent_paddle", "the ball meets the top wall and the agent's paddle in one frame (wall first, then the return's spin and clip)",
        _s(ball_x=460.0, ball_y=605.0, ball_vx=10.0, ball_vy=5.0, paddle_yr=560.0), [1, 0, 0],
        lambda h: h[0][0]["n_bounces"] == 1 and h[0][0]["ball_vy"] == -2.0 and h[0][0]["ball_y"] == 608.0,
        "after step 1: one return, ball_vy -5 + 3 = -2, ball_y clipped to 608"),
    Interaction(
        "paddle_edge_miss", "the ball's top exactly at the agent paddle's bottom: a miss (strict comparison), a point and a serve",
        _s(ball_x=460.0, ball_y=258.0, ball_vx=10.0, ball_vy=0.0, paddle_yr=290.0), [0, 0],
        lambda h: h[0][0]["score_l"] == 1 and h[0][0]["ball_x"] == 100.0, "after step 1: score_l 1, the ball served again"),
    Interaction(
        "paddle_edge_hit", "the ball one unit over the agent paddle's bottom: a return",
        _s(ball_x=460.0, ball_y=259.0, ball_vx=10.0, ball_vy=0.0, paddle_yr=290.0), [0, 0],
        lambda h: h[0][0]["n_bounces"] == 1 and h[0][1] == 1.0, "after step 1: one return, reward 1"),
    Interaction(
        "spin_while_clipped", "the agent pushes up against the top: the paddle is clipped but the spin still counts",
        _s(ball_x=460.0, ball_y=600.0, ball_vx=10.0, ball_vy=0.0, paddle_yr=605.0), [1, 1],
        lambda h: h[0][0]["paddle_yr"] == 605.0 and h[0][0]["ball_vy"] == 3.0, "after step 1: paddle 605, ball_vy 3"),
    Interaction(
        "opponent_return_and_wall", "the opponent returns the ball in the frame it bounces off the bottom wall (no clip on this side)",
        _s(ball_x=5.0, ball_y=2.0, ball_vx=-10.0, ball_vy=-5.0, paddle_yl=0.0), [0, 0, 0],
        lambda h: h[0][0]["n_bounces"] == 1 and h[0][0]["ball_vx"] == 10.0 and h[0][0]["ball_x"] == -5.0,
        "after step 1: one return, ball_vx 10, ball_x still -5"),
    Interaction(
        "winning_point_ends_the_game", "the 21st point: terminal, the game's log kept, scores cleared, a new serve drawn from rand()",
        _s(ball_x=5.0, ball_y=600.0, ball_vx=-10.0, ball_vy=0.0, paddle_yl=-35.0, score_r=20, score_l=7, score=20.0,
           episode_return=200.0),
        [0] * 60, lambda h: h[0][2] and h[0][1] == 10.0 and h[0][0]["score_r"] == 0, "step 1: reward 10, terminal, scores 0"),
    Interaction(
        "stale_observation_after_a_point", "a lost point resets the round but not the observation; the next frame recomputes it",
        _s(ball_x=455.0, ball_y=600.0, ball_vx=10.0, ball_vy=0.0, paddle_yr=-35.0), [0, 0, 0],
        lambda h: h[0][0]["score_l"] == 0 and h[1][0]["score_l"] == 1
        and h[1][0]["observations"][2] == float(np.float32(465) / np.float32(500))
        and h[2][0]["observations"][2] == float(np.float32(110) / np.float32(500)),
        "step 2 loses the point and still shows ball_x 465 of step 1; step 3 shows the new serve (110)"),
    Interaction(
        "serves_in_sequence", "an idle agent loses point after point: every serve draws rand(), 21 of them end the game",
        _s(), [0] * 3000, lambda h: any(t for _, _, t in h), "the game ends (21 points lost) within 3,000 steps"),
    Interaction(
        "frameskip_return_then_point", "frame skip 4 in a narrow court: a return (reward 1) then a point won in the same step (reward 10 replaces it)",
        _s(ball_x=20.0, ball_y=300.0, ball_vx=10.0, ball_vy=0.0, paddle_yr=290.0, paddle_yl=600.0), [0, 0],
        lambda h: h[0][1] == 10.0 and h[0][0]["score_r"] == 1, "step 1: reward 10, score_r 1",
        config=_s(frameskip=4, width=60.0)),
]


@dataclass
class InteractionResult:
    name: str
    what: str
    passed: bool
    detail: str


def run_interaction(check: Interaction, seed: int = 7, plant: Optional[str] = None) -> InteractionResult:
    ours = _ours(1, [seed], 1, **_planted_config(plant, check.config))
    ref = OracleBatch([seed], **check.config)
    out = _OurOutputs(1)
    ours.reset(out.obs)
    ref.reset()
    if check.state:
        ours.set_state(0, dict(check.state))
        ref.set_state(0, dict(check.state))
    history = []
    for t, a in enumerate(check.actions):
        act = np.array([a], np.int64)
        ours.step(_planted_actions(plant, act), out.obs, out.rewards, out.terminated, out.truncated, out.final)
        obs, rew, term = ref.step(act)
        s_ours, s_ref = dict(ours.get_state(0)), ref.get_state(0)
        d = _state_diff(s_ours, s_ref)
        if d is None and np.float32(s_ours["observations"]).tobytes() != np.float32(s_ref["observations"]).tobytes():
            d = ("observations", s_ours["observations"], s_ref["observations"])
        if d is None and (np.float32(out.rewards[0]).tobytes() != np.float32(rew[0]).tobytes() or bool(out.terminated[0]) != bool(term[0])):
            d = ("reward/terminal", (float(out.rewards[0]), bool(out.terminated[0])), (float(rew[0]), bool(term[0])))
        if d is not None:
            return InteractionResult(check.name, check.what, False,
                                     f"step {t + 1}: {d[0]}: emurust {d[1]!r}, reference {d[2]!r}")
        history.append((s_ref, float(rew[0]), bool(term[0])))
    ref.close()
    if not check.sanity(history):
        return InteractionResult(check.name, check.what, False, f"the reference did not show it: {check.sanity_text}")
    return InteractionResult(check.name, check.what, True, f"{len(check.actions)} steps identical; {check.sanity_text}")


def interactions(plant: Optional[str] = None) -> list[InteractionResult]:
    return [run_interaction(c, plant=plant) for c in INTERACTIONS]


# ---------------------------------------------------------------- L4 transfer (and PPO for Pong)


def _vecenv_base():
    from stable_baselines3.common.vec_env.base_vec_env import VecEnv

    return VecEnv


def make_reference_venv(num_envs: int, max_episode_steps: int = 0, **config: Any):
    """The C reference as an SB3 ``VecEnv`` (N oracle games in one ctypes call per step). The
    games reset themselves as the reference does; the terminal observation is the previous
    step's (the buffer the reference leaves, for frameskip 1). ``max_episode_steps`` truncates
    as emurust's ``PongVecEnv`` does (the current observation, then the reference's reset)."""
    VecEnv: Any = _vecenv_base()
    from gymnasium import spaces

    class ReferencePongVecEnv(VecEnv):
        def __init__(self):
            self.render_mode = None
            super().__init__(num_envs, spaces.Box(-np.inf, np.inf, (8,), np.float32), spaces.Discrete(3))
            self.game: Optional[OracleBatch] = None
            self._actions = np.zeros(num_envs, np.int32)
            self._last = np.zeros((num_envs, 8), np.float32)

        def reset(self):
            seeds = [1 + i if s is None else int(s) for i, s in enumerate(self._seeds)]
            self._reset_seeds()
            if self.game is not None:
                self.game.close()
            self.game = OracleBatch(seeds, **config)
            self._last = self.game.reset().copy()
            self._steps = np.zeros(num_envs, np.int64)
            return self._last.copy()

        def step_async(self, actions):
            self._actions[:] = np.asarray(actions).reshape(-1)

        def step_wait(self):
            assert self.game is not None
            obs, rew, term = self.game.step(self._actions)
            obs, term = obs.copy(), term.astype(bool)
            self._steps += 1
            trunc = ~term & (self._steps >= max_episode_steps) if max_episode_steps else np.zeros(num_envs, bool)
            infos: list[dict] = [{} for _ in range(num_envs)]
            for i in np.flatnonzero(term):
                infos[i]["terminal_observation"] = self._last[i].copy()
                infos[i]["TimeLimit.truncated"] = False
            for k in map(int, np.flatnonzero(trunc)):
                infos[k]["terminal_observation"] = obs[k].copy()
                infos[k]["TimeLimit.truncated"] = True
                self.game.lib.oracle_reset(self.game._games[k])
                obs[k] = np.ctypeslib.as_array(self.game.pong(k).observations, (8,))
            done = term | trunc
            self._steps[done] = 0
            self._last = obs.copy()
            return obs, rew.copy(), done, infos

        def close(self):
            if self.game is not None:
                self.game.close()

        def get_attr(self, attr_name, indices=None):
            return [getattr(self, attr_name)] * num_envs

        def set_attr(self, attr_name, value, indices=None):
            raise AttributeError(attr_name)

        def env_method(self, method_name, *a, indices=None, **k):
            raise AttributeError(method_name)

        def env_is_wrapped(self, wrapper_class, indices=None):
            return [False] * num_envs

        def get_images(self):
            return [None] * num_envs

    return ReferencePongVecEnv()


@dataclass
class PPOHyper:
    """Small PPO for Pong (SB3, MlpPolicy 64x64), as examples/train_pong.py, sized for a few
    CPU minutes; one torch thread (more only contend with the environments on a small machine)."""

    envs: int = 32
    n_steps: int = 128
    batch_size: int = 1024
    epochs: int = 4
    lr: float = 1e-3
    gamma: float = 0.99
    gae_lambda: float = 0.95
    ent_coef: float = 0.01
    clip: float = 0.2
    max_episode_steps: int = 3000
    torch_threads: int = 1


def train_ppo(steps: int, seed: int = 0, hp: Optional[PPOHyper] = None, backend: str = "emurust",
              plant: Optional[str] = None, progress: Optional[Callable[[str], None]] = None, **config: Any):
    """Train PPO on ``backend`` (``emurust`` or ``reference``); returns the model."""
    import torch
    from stable_baselines3 import PPO
    from stable_baselines3.common.logger import Logger

    hp = hp or PPOHyper()
    torch.set_num_threads(hp.torch_threads)
    torch.manual_seed(seed)
    if backend == "emurust":
        from ..sb3 import PongVecEnv

        venv: Any = PongVecEnv(hp.envs, max_episode_steps=hp.max_episode_steps, **_planted_config(plant, config))
    elif backend == "reference":
        venv = make_reference_venv(hp.envs, max_episode_steps=hp.max_episode_steps, **config)
    else:
        raise ValueError(f"backend must be 'emurust' or 'reference', got {backend!r}")
    venv.seed(seed)
    model = PPO("MlpPolicy", venv, n_steps=hp.n_steps, batch_size=hp.batch_size, n_epochs=hp.epochs,
                learning_rate=hp.lr, gamma=hp.gamma, gae_lambda=hp.gae_lambda, ent_coef=hp.ent_coef,
                clip_range=hp.clip, seed=seed, verbose=0, device="cpu")
    model.set_logger(Logger(folder=None, output_formats=[]))
    t0 = time.perf_counter()
    model.learn(total_timesteps=steps)
    if progress:
        progress(f"  trained {steps:,} steps on {backend} in {time.perf_counter() - t0:.0f} s")
    venv.close()
    return model


class LinearPolicy:
    """A softmax-linear policy over the 8 observations (NumPy), with ``predict`` as SB3's."""

    def __init__(self, weights: np.ndarray, bias: np.ndarray, seed: int = 0):
        self.weights, self.bias = weights, bias
        self.rng = np.random.default_rng(seed)

    def reseed(self, seed: int) -> None:
        self.rng = np.random.default_rng(seed)

    def predict(self, obs: np.ndarray, deterministic: bool = False):
        logits = obs.astype(np.float64) @ self.weights + self.bias
        if deterministic:
            return logits.argmax(axis=1), None
        p = np.exp(logits - logits.max(axis=1, keepdims=True))
        p /= p.sum(axis=1, keepdims=True)
        u = self.rng.random((len(obs), 1))
        return (u > np.cumsum(p, axis=1)).sum(axis=1).clip(0, 2), None


def train_imitation(samples: int = 20_000, seed: int = 0, plant: Optional[str] = None, epochs: int = 300,
                    **config: Any) -> LinearPolicy:
    """A small policy trained on emurust alone, in about a second: softmax regression of the
    ball tracker's actions on observations of emurust games played by the noisy tracker (the
    fast L4 check; :func:`train_ppo` is the slow, PPO one)."""
    n = 64
    ours = _ours(n, [seed * 1000 + i for i in range(n)], None, **_planted_config(plant, config))
    out = _OurOutputs(n)
    ours.reset(out.obs)
    rng = np.random.default_rng(seed)
    xs, ys = [], []
    kind = np.full(n, 3)
    prev = np.zeros(n, np.int64)
    for _ in range(samples // n):
        obs = out.obs.copy()
        diff = obs[:, 3] + 16 / 640 - obs[:, 1]
        label = np.where(diff > 0.01, 1, np.where(diff < -0.01, 2, 0))
        xs.append(obs)
        ys.append(label)
        actions = _policy_actions(kind, obs, prev, rng)
        prev = actions
        ours.step(_planted_actions(plant, actions), out.obs, out.rewards, out.terminated, out.truncated, out.final)
    raw = np.concatenate(xs).astype(np.float64)
    y = np.concatenate(ys)
    # Standardised inputs (constant ones, the score observations, stay 0) for a well-conditioned
    # gradient descent; the scaling is folded back into the weights.
    mean, std = raw.mean(axis=0), raw.std(axis=0)
    std[std == 0] = 1.0
    x = (raw - mean) / std
    onehot = np.eye(3)[y]
    w = np.zeros((8, 3))
    b = np.zeros(3)
    lr = 5.0
    for _ in range(epochs):
        logits = x @ w + b
        p = np.exp(logits - logits.max(axis=1, keepdims=True))
        p /= p.sum(axis=1, keepdims=True)
        g = (p - onehot) / len(x)
        w -= lr * (x.T @ g)
        b -= lr * g.sum(axis=0)
    weights = w / std[:, None]
    return LinearPolicy(weights, b - mean @ weights, seed)


def same_weights(a, b) -> bool:
    """Whether two SB3 models' policy parameters are bit-identical."""
    import torch

    pa, pb = a.policy.state_dict(), b.policy.state_dict()
    return pa.keys() == pb.keys() and all(torch.equal(pa[k], pb[k]) for k in pa)


def training_identical(steps: int = 2048, seed: int = 3, plant: Optional[str] = None,
                       hp: Optional[PPOHyper] = None, **config: Any) -> bool:
    """L4, training side: PPO trained with the same seed on emurust (with ``plant``) and on the
    reference; True when the two policies are bit-identical."""
    hp = hp or PPOHyper(envs=8, n_steps=64, batch_size=256, max_episode_steps=200)
    a = train_ppo(steps, seed=seed, hp=hp, backend="emurust", plant=plant, **config)
    b = train_ppo(steps, seed=seed, hp=hp, backend="reference", **config)
    return same_weights(a, b)


@dataclass
class Evaluation:
    returns: list  # per game, within max_steps
    points_won: list
    points_lost: list
    games_won: int
    games_lost: int

    @property
    def point_share(self) -> float:
        """Points won / points played."""
        w, lost = sum(self.points_won), sum(self.points_lost)
        return w / max(1, w + lost)


def evaluate(model, backend: str, episodes: int, seed: int, max_steps: int = 3000, plant: Optional[str] = None,
             deterministic: bool = False, **config: Any) -> Evaluation:
    """Play game k seeded ``seed + k`` (k < episodes) until it ends or ``max_steps``; the policy
    samples with torch (or its own generator) seeded by ``seed``, so both backends draw the same
    samples as long as they show the same observations."""
    import torch

    n = episodes
    seeds = [(seed + k) % 2**32 for k in range(n)]
    if backend == "emurust":
        ours = _ours(n, seeds, None, **_planted_config(plant, config))
        out = _OurOutputs(n)
        ours.reset(out.obs)
        obs = out.obs.copy()
        scores = lambda: np.array([ours.scores(i) for i in range(n)])  # noqa: E731
    else:
        ref = OracleBatch(seeds, **config)
        obs = ref.reset().copy()
        scores = lambda: np.array([(ref.pong(i).score_l, ref.pong(i).score_r) for i in range(n)])  # noqa: E731
    torch.manual_seed(seed)
    if hasattr(model, "reseed"):
        model.reseed(seed)
    live = np.ones(n, bool)
    returns = np.zeros(n)
    won = np.zeros(n, int)
    lost = np.zeros(n, int)
    prev = scores()
    for _ in range(max_steps):
        actions, _ = model.predict(obs, deterministic=deterministic)
        actions = np.asarray(actions, np.int64)
        if backend == "emurust":
            ours.step(_planted_actions(plant, actions), out.obs, out.rewards, out.terminated, out.truncated, out.final)
            obs, rew, term = out.obs.copy(), out.rewards, out.terminated
        else:
            o, rew, term = ref.step(actions)
            obs, term = o.copy(), term.astype(bool)
        now = scores()
        # A point lost raises score_l, or ends the game (scores back to 0) without reward 10.
        lost_point = (now[:, 0] > prev[:, 0]) | (term & (rew != 10.0))
        returns += np.where(live, rew, 0)
        won += (live & (rew == 10.0)).astype(int)
        lost += (live & lost_point).astype(int)
        prev = now
        live &= ~term
        if not live.any():
            break
    max_score = int(config.get("max_score", DEFAULT_CONFIG["max_score"]))
    return Evaluation([float(x) for x in returns], [int(x) for x in won], [int(x) for x in lost],
                      int((won == max_score).sum()), int((lost == max_score).sum()))


@dataclass
class TransferResult:
    steps: int
    seeds: list
    episodes: int
    margin: float
    plant: Optional[str]
    evaluations: dict  # "seed/backend" -> Evaluation
    differences: list  # per game: return on emurust - return on the reference (paired)
    tost: Any = None
    seconds: float = 0.0

    @property
    def equivalent(self) -> bool:
        return bool(self.tost is not None and self.tost.equivalent)


def transfer(steps: int = 60_000, seeds: tuple = (1,), episodes: int = 32, margin: float = 5.0,
             plant: Optional[str] = None, max_steps: int = 3000, hp: Optional[PPOHyper] = None,
             progress: Optional[Callable[[str], None]] = None, trainer: str = "ppo", **config: Any) -> TransferResult:
    """Train a policy on emurust (``trainer`` ``ppo``: PPO for ``steps`` steps; ``imitation``:
    :func:`train_imitation` on ``steps`` samples) with ``plant`` if given, evaluate each policy on emurust and on
    the reference over the same seeded games and sampling seed, and test the paired return
    differences for equivalence within ``margin`` (TOST, alpha 0.05)."""
    from .transfer import tost_paired

    _check_plant(plant)
    t0 = time.perf_counter()
    evals: dict = {}
    diffs: list = []
    for s in seeds:
        if trainer == "ppo":
            model: Any = train_ppo(steps, seed=s, hp=hp, plant=plant, progress=progress, **config)
        elif trainer == "imitation":
            model = train_imitation(steps, seed=s, plant=plant, **config)
        else:
            raise ValueError(f"trainer must be 'ppo' or 'imitation', got {trainer!r}")
        for backend in ("emurust", "reference"):
            evals[f"{s}/{backend}"] = evaluate(model, backend, episodes, seed=10_000 + s, max_steps=max_steps,
                                               plant=plant if backend == "emurust" else None, **config)
        a, b = evals[f"{s}/emurust"], evals[f"{s}/reference"]
        diffs += [x - y for x, y in zip(a.returns, b.returns)]
        if progress:
            progress(f"  seed {s}: mean return emurust {np.mean(a.returns):.1f}, reference {np.mean(b.returns):.1f}; "
                     f"points won {a.point_share:.0%} / {b.point_share:.0%}")
    res = TransferResult(steps, list(seeds), episodes, margin, plant, evals, diffs)
    res.tost = tost_paired(diffs, margin)
    res.seconds = time.perf_counter() - t0
    return res


# ---------------------------------------------------------------- repair prompt and command line


def repair_values(res: RolloutResult, reproduce: str) -> dict:
    d = res.divergence
    if d is None:
        raise ValueError("the rollout did not diverge: there is nothing to repair")
    keys = [k for k in d.state_ours if k != "observations"]
    rows = "\n".join(f"| {k} | {d.state_ours[k]!r} | {d.state_reference[k]!r} |" for k in keys)
    return {
        "project": "emurust-pong",
        "reference_name": "PufferLib's Pong (pong.h)",
        "input": f"game {d.episode} of the L3 rollout: srand({d.seed}), the rollout's policy mix",
        "frames_identical": f"{d.step - 1} steps of this game (and {res.steps:,} game-steps in all)",
        "frame": str(d.step),
        "component": d.component,
        "where": d.component,
        "value_ours": repr(d.ours),
        "value_ref": repr(d.reference),
        "trace_title": "The game's last actions before the comparison (oldest first)",
        "trace": f"`{d.actions}` (0 still, 1 up, 2 down)",
        "evidence": "State after the step (emurust | reference):\n\n| field | emurust | reference |\n|---|---|---|\n" + rows,
        "module": "crates/emurust-pong/src/lib.rs",
        "module_reason": "the whole environment is one module; the differing field names the rule (paddles, ball, collisions, serve).",
        "other_modules": "crates/emurust-pong/src/glibc_rand.rs (the serve after a round reset), crates/emurust-py/src/pong.rs (batching, truncation).",
        "minimal_input": "`PongBatch.set_state` / the oracle's `set_state` with the state before the step, then the one action (an L2 check in emurust/verify/pong.py).",
        "reproduce": reproduce,
        "test_command": "cargo test -p emurust-pong && pytest -q tests/test_pong.py",
    }


def _print_rollout(res: RolloutResult) -> None:
    print(f"L3 Pong rollout: {res.episodes:,} games to their end, {res.steps:,} steps "
          f"({res.returns:,} returns, {res.wins:,} points won by the agent), {res.seconds:.1f} s")
    if res.divergence is None and res.unfinished == 0:
        print("identical: every observation (bit for bit), reward and terminal")
    if res.unfinished:
        print(f"{res.unfinished} games did not end within --max-steps")
    d = res.divergence
    if d is not None:
        print(f"DIVERGED: game {d.episode} (srand({d.seed})), step {d.step}: {d.component}: "
              f"emurust {d.ours!r}, reference {d.reference!r}; last actions {d.actions}")


def _main_rollout(args) -> int:
    res = rollout(args.episodes, seed=args.seed, max_steps=args.max_steps, plant=args.plant,
                  progress=None if args.quiet else print)
    _print_rollout(res)
    if args.json:
        out = {k: v for k, v in asdict(res).items()}
        with open(args.json, "w") as f:
            json.dump(out, f, indent=1, default=float)
    if res.divergence is not None and args.repair_prompt:
        from ..prompts import render

        repro = f"emurust verify pong-rollout --episodes {args.episodes} --seed {args.seed}"
        with open(args.repair_prompt, "w") as f:
            f.write(render("repair", repair_values(res, repro)))
        print(f"wrote {args.repair_prompt}")
    return 0 if res.identical else 1


def _main_interactions(args) -> int:
    results = interactions(plant=args.plant)
    for r in results:
        print(f"{'PASS' if r.passed else 'FAIL'}  {r.name}: {r.detail}")
    failed = sum(not r.passed for r in results)
    print(f"L2 Pong interactions: {len(results) - failed}/{len(results)} pass")
    return 1 if failed else 0


def _main_transfer(args) -> int:
    seeds = [int(s) for s in args.seeds.split(",")]
    res = transfer(args.steps, tuple(seeds), args.episodes, args.margin, plant=args.plant,
                   progress=None if args.quiet else print, trainer=args.trainer)
    t = res.tost
    print(f"L4 Pong transfer: {len(res.differences)} paired games, mean difference {t.mean_difference:+.3f} "
          f"(90% CI {t.ci90[0]:+.3f} to {t.ci90[1]:+.3f}), margin {res.margin}, TOST p = {t.p_value:.3g}: "
          f"{'EQUIVALENT' if res.equivalent else 'NOT shown equivalent'} ({res.seconds:.0f} s)")
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"steps": res.steps, "seeds": res.seeds, "episodes": res.episodes, "margin": res.margin,
                       "plant": res.plant, "equivalent": res.equivalent, "tost_p": t.p_value, "mean_difference": t.mean_difference,
                       "evaluations": {k: asdict(v) for k, v in res.evaluations.items()}}, f, indent=1)
    return 0 if res.equivalent else 1


def add_parsers(sub) -> None:
    plants = sorted(PLANTS)
    p = sub.add_parser("pong-rollout", help="L3 (Pong): seeded games played to their end on emurust and on the C reference, every step compared",
                       description="Play --episodes games (game k seeded srand(seed + k)) on emurust-pong and on PufferLib's "
                       "pong.h (compiled from EMURUST_REFERENCES/puffer-pong) under a mix of policies; compare every "
                       "observation bit for bit, every reward and terminal. Exit 1 on the first divergence.")
    p.add_argument("--episodes", type=int, default=10_000, help="games compared to their end (default %(default)s)")
    p.add_argument("--seed", type=int, default=0, help="game k is seeded srand(seed + k)")
    p.add_argument("--max-steps", type=int, default=50_000, help="steps after which an unfinished game counts as a failure")
    p.add_argument("--plant", choices=plants, default=None, help="plant a divergence on emurust's side (to see it caught)")
    p.add_argument("--json", metavar="FILE", help="also write the result here as JSON")
    p.add_argument("--repair-prompt", metavar="FILE", help="on divergence, write the filled repair prompt here")
    p.add_argument("--quiet", action="store_true", help="no progress lines")
    p.set_defaults(func=_main_rollout)
    p = sub.add_parser("pong-interactions", help="L2 (Pong): purpose-built states where two rules meet, emurust vs the C reference")
    p.add_argument("--plant", choices=plants, default=None, help="plant a divergence on emurust's side (to see it caught)")
    p.set_defaults(func=_main_interactions)
    p = sub.add_parser("pong-transfer", help="L4 (Pong): PPO trained on emurust, evaluated on both, TOST equivalence of the returns")
    p.add_argument("--trainer", choices=["ppo", "imitation"], default="ppo",
                   help="ppo (slow) or imitation (softmax regression of a ball tracker, seconds)")
    p.add_argument("--steps", type=int, default=60_000, help="PPO steps, or imitation samples")
    p.add_argument("--seeds", default="1", help="training seeds, comma-separated")
    p.add_argument("--episodes", type=int, default=32, help="evaluation games per backend and seed")
    p.add_argument("--margin", type=float, default=5.0, help="equivalence margin in return units")
    p.add_argument("--plant", choices=plants, default=None, help="plant a divergence on emurust's side: paddle_speed in training and evaluation, swap_actions in evaluation")
    p.add_argument("--json", metavar="FILE", help="also write the results here as JSON")
    p.add_argument("--quiet", action="store_true", help="no progress lines")
    p.set_defaults(func=_main_transfer)
