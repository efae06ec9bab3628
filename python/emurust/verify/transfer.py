"""L4: cross-backend policy transfer — train on emurust and on PyBoy, evaluate on both.

PPO (the trainer of ``emurust train``: same network, same hyperparameters) is trained over
several seeds on each backend; every policy is then evaluated on both backends with the same
sampling seeds. Equivalence is decided with two one-sided tests (TOST) against a stated margin:

- *transfer*: for every policy and evaluation episode, the return on emurust minus the return
  on PyBoy (paired);
- *training*: the returns of the policy trained on emurust minus those of the policy trained on
  PyBoy with the same seed and hyperparameters, evaluated on the same backend with the same
  sampling seed (paired).

The PyBoy environment below mirrors emurust's game tasks call for call (same actions, frames,
rewards, termination, reset script), driving PyBoy 2.8.1 through its public API only.
"""

from __future__ import annotations

import argparse
import json
import math
import time
from dataclasses import dataclass, field
from statistics import NormalDist
from typing import Any, Optional

import numpy as np

from .._stats import t_quantile, t_sf
from ..command_line import (MAX_ENVS, MAX_EPISODES, MAX_STEPS, MAX_THREADS, UsageError, check_output_file, float_range,
                            int_range, seed_list)
from ..policies import DEFAULT_TORCH_THREADS, set_torch_threads, small_cnn

__all__ = ["Hyper", "Tost", "TransferResult", "run_transfer", "tost_paired", "tost_welch", "tost_power", "t_sf",
           "make_emurust_venv", "make_pyboy_venv", "planted", "format_table"]

# ---------------------------------------------------------------- statistics

@dataclass
class Tost:
    n: int
    mean_difference: float
    margin: float
    p_value: float
    equivalent: bool
    ci90: tuple
    # Probability of showing equivalence if the true difference were 0, at the observed spread
    # (normal approximation; 1.0 when every difference is equal).
    power: float = float("nan")


def tost_power(se: float, margin: float, alpha: float = 0.05) -> float:
    """Power of TOST at a true difference of 0: P(|mean| < margin - z(1-alpha) * se)."""
    if se == 0.0:
        return 1.0
    z = NormalDist().inv_cdf(1 - alpha)
    return max(0.0, 2 * NormalDist().cdf(margin / se - z) - 1)


def tost_paired(differences, margin: float, alpha: float = 0.05) -> Tost:
    """H0: |mean difference| >= margin. Equivalent when both one-sided tests reject at `alpha`."""
    d = np.asarray(differences, dtype=float)
    n = len(d)
    if n < 2:
        raise ValueError("TOST needs at least two differences")
    mean, sd = float(d.mean()), float(d.std(ddof=1))
    se = sd / math.sqrt(n)
    df = n - 1
    if se == 0.0:
        # Every difference equal: the mean is known exactly; equivalent iff inside the margin.
        p = 0.0 if abs(mean) < margin else 1.0
        return Tost(n, mean, margin, p, p < alpha, (mean, mean), tost_power(se, margin, alpha))
    p_lower = t_sf((mean + margin) / se, df)  # H0: mean <= -margin
    p_upper = t_sf((margin - mean) / se, df)  # H0: mean >= +margin
    p = max(p_lower, p_upper)
    tq = t_quantile(1 - alpha, df)
    return Tost(n, mean, margin, p, p < alpha, (mean - tq * se, mean + tq * se), tost_power(se, margin, alpha))


def tost_welch(a, b, margin: float, alpha: float = 0.05) -> Tost:
    """TOST for mean(a) - mean(b) with unequal variances (Welch-Satterthwaite)."""
    a, b = np.asarray(a, float), np.asarray(b, float)
    if len(a) < 2 or len(b) < 2:
        raise ValueError("TOST needs at least two values per group")
    mean = float(a.mean() - b.mean())
    va, vb = float(a.var(ddof=1)) / len(a), float(b.var(ddof=1)) / len(b)
    se = math.sqrt(va + vb)
    if se == 0.0:
        p = 0.0 if abs(mean) < margin else 1.0
        return Tost(len(a) + len(b), mean, margin, p, p < alpha, (mean, mean), tost_power(se, margin, alpha))
    df = (va + vb) ** 2 / ((va**2 / (len(a) - 1) if va else 0) + (vb**2 / (len(b) - 1) if vb else 0))
    p = max(t_sf((mean + margin) / se, df), t_sf((margin - mean) / se, df))
    tq = t_quantile(1 - alpha, df)
    return Tost(len(a) + len(b), mean, margin, p, p < alpha, (mean - tq * se, mean + tq * se),
                tost_power(se, margin, alpha))


# ---------------------------------------------------------------- the PyBoy backend


def _stable_baselines_vecenv():
    from stable_baselines3.common.vec_env.base_vec_env import VecEnv

    return VecEnv


def pyboy_start_state(game: str) -> bytes:
    """PyBoy's state at the end of the frame its boot ROM exits in: where both backends start
    every episode.

    PyBoy restores its states imperfectly (its renderer differs for a while after a load), so an
    environment that resets by loading a state is only mirrored exactly by an emurust emulator that
    loads the same PyBoy state (see :func:`emurust_start_state`)."""
    import io

    from ..games import task_kwargs
    from .compare import make_pyboy
    from .rollout import BOOT_FRAMES

    pb = make_pyboy(task_kwargs(game)["rom"])
    pb.tick(BOOT_FRAMES + 1, False)  # the boot ROM unmaps itself during frame 65
    buf = io.BytesIO()
    pb.save_state(buf)
    pb.stop(save=False)
    return buf.getvalue()


def emurust_start_state(game: str) -> bytes:
    """The emurust state equal to PyBoy's after loading :func:`pyboy_start_state`."""
    from .. import GameBoy
    from ..games import task_kwargs

    gb = GameBoy(task_kwargs(game)["rom"])
    gb.load_pyboy_state(pyboy_start_state(game))
    return gb.save_state()


def make_pyboy_venv(num_envs: int, game: str, **overrides: Any):
    """An SB3 VecEnv of `num_envs` PyBoy 2.8.1 emulators, mirroring ``EmurustVecEnv(game=...)``
    started from :func:`emurust_start_state`."""
    import gymnasium as gym

    from ..games import task_kwargs
    from ..rewards import Condition, Term
    from .compare import make_pyboy

    VecEnv = _stable_baselines_vecenv()
    kw = task_kwargs(game, **overrides)
    if kw.get("noop_max", 0):
        raise ValueError("the PyBoy mirror supports noop_max=0 only (pass noop_max=0 to both backends)")
    if kw.get("obs", "grey_half") != "grey_half":
        raise ValueError("the PyBoy mirror supports obs='grey_half' only")
    names = list(kw["actions"])
    frame_skip, press = int(kw["frame_skip"]), min(int(kw["press_frames"]), int(kw["frame_skip"]))
    terms = [t if isinstance(t, Term) else Term(*t) for t in kw["reward"]]
    conds = [c if isinstance(c, Condition) else Condition(*c) for c in kw["terminate"]]
    script = list(kw["reset_script"])
    max_steps = int(kw.get("max_episode_steps", 0) or 0)
    rom = kw["rom"]

    def read(pb, ty: str, addr: int) -> float:
        m = pb.memory
        if ty == "u8":
            return float(m[addr])
        if ty == "i8":
            v = m[addr]
            return float(v - 256 if v > 127 else v)
        if ty == "u16le":
            return float(m[addr] | m[addr + 1] << 8)
        raise ValueError(f"the PyBoy mirror does not read {ty!r} values")

    def holds(v: float, op: str, x: float) -> bool:
        return {"==": v == x, "!=": v != x, "<": v < x, "<=": v <= x, ">": v > x, ">=": v >= x}[op]

    def observe(pb) -> np.ndarray:
        g = pb.screen.ndarray[..., 0].astype(np.uint16)
        s = g[0::2, 0::2] + g[0::2, 1::2] + g[1::2, 0::2] + g[1::2, 1::2]
        return ((s + 2) // 4).astype(np.uint8)[None]

    class _PyBoyVecEnv(VecEnv):
        def __init__(self):
            self.pbs = [make_pyboy(rom) for _ in range(num_envs)]
            start = pyboy_start_state(game)
            self.start = [start] * num_envs
            self.prev = [[0.0] * len(terms) for _ in range(num_envs)]
            self.steps = [0] * num_envs
            self.actions = None
            space = gym.spaces.Box(0, 255, (1, 72, 80), np.uint8)
            super().__init__(num_envs, space, gym.spaces.Discrete(len(names)))

        def _press(self, pb, name, down: bool):
            for b in [] if name in ("noop", "", None) else str(name).split("+"):
                (pb.button_press if down else pb.button_release)(b)

        def _reset_one(self, i: int) -> np.ndarray:
            import io

            # A fresh PyBoy per episode: PyBoy's load_state keeps parts of the renderer's previous
            # state, so loading into a used instance would not give the same episode start twice.
            self.pbs[i].stop(save=False)
            pb = self.pbs[i] = make_pyboy(rom)
            pb.load_state(io.BytesIO(self.start[i]))
            left = sum(f for _, f in script)
            for mask, frames in script:
                name = mask if isinstance(mask, str) else None
                if name:
                    self._press(pb, name, True)
                left -= frames
                pb.tick(frames, left == 0)
                if name:
                    self._press(pb, name, False)
            self.prev[i] = [read(pb, t.type, t.addr) for t in terms]
            self.steps[i] = 0
            return observe(pb)

        def reset(self):
            return np.stack([self._reset_one(i) for i in range(self.num_envs)])

        def step_async(self, actions):
            self.actions = np.asarray(actions)

        def step_wait(self):
            obs, rews, dones, infos = [], np.zeros(self.num_envs, np.float32), np.zeros(self.num_envs, bool), []
            for i, pb in enumerate(self.pbs):
                name = names[int(self.actions[i])]
                self._press(pb, name, True)
                pb.tick(press, press == frame_skip)
                self._press(pb, name, False)
                if frame_skip > press:
                    pb.tick(frame_skip - press, True)
                r = 0.0
                for k, t in enumerate(terms):
                    v = read(pb, t.type, t.addr)
                    r += t.weight * (v - self.prev[i][k] if t.delta else v)
                    self.prev[i][k] = v
                self.steps[i] += 1
                terminated = any(holds(read(pb, c.type, c.addr), c.op, c.value) for c in conds)
                truncated = bool(max_steps) and self.steps[i] >= max_steps and not terminated
                o = observe(pb)
                info = {}
                if terminated or truncated:
                    info["terminal_observation"] = o
                    info["TimeLimit.truncated"] = truncated
                    o = self._reset_one(i)
                rews[i], dones[i] = r, terminated or truncated
                obs.append(o)
                infos.append(info)
            return np.stack(obs), rews, dones, infos

        def close(self):
            for pb in self.pbs:
                pb.stop(save=False)

        def get_attr(self, attr_name, indices=None):
            return [getattr(self, attr_name)] * self.num_envs

        def set_attr(self, attr_name, value, indices=None):
            setattr(self, attr_name, value)

        def env_method(self, method_name, *args, indices=None, **kwargs):
            return [None] * self.num_envs

        def env_is_wrapped(self, wrapper_class, indices=None):
            return [False] * self.num_envs

        def seed(self, seed=None):
            return [seed] * self.num_envs

    return _PyBoyVecEnv()


def make_emurust_venv(num_envs: int, game: str, **overrides: Any):
    """emurust's SB3 VecEnv for `game`, resetting to the state PyBoy resets to."""
    from ..sb3 import EmurustVecEnv

    overrides.setdefault("start_state", emurust_start_state(game))
    return EmurustVecEnv(num_envs, game=game, num_threads=1, **overrides)


def planted(venv, plant: Optional[str]):
    """`venv` with a divergence planted on purpose (to show that L4 detects one), or as is.
    ``reward_bias=X`` adds X to every reward; ``swap_actions=A,B`` exchanges two actions."""
    if not plant:
        return venv
    from stable_baselines3.common.vec_env import VecEnvWrapper

    kind, arg = parse_plant(plant)
    if kind == "reward_bias":
        bias = float(arg)

        class RewardBias(VecEnvWrapper):
            def reset(self):
                return self.venv.reset()

            def step_wait(self):
                obs, rewards, dones, infos = self.venv.step_wait()
                return obs, rewards + bias, dones, infos

        return RewardBias(venv)
    if kind == "swap_actions":
        a, b = arg

        class SwapActions(VecEnvWrapper):
            def reset(self):
                return self.venv.reset()

            def step_async(self, actions):
                actions = np.array(actions, copy=True)
                ia, ib = actions == a, actions == b
                actions[ia], actions[ib] = b, a
                self.venv.step_async(actions)

            def step_wait(self):
                return self.venv.step_wait()

        return SwapActions(venv)
    raise AssertionError(kind)  # parse_plant knows no other kind


def parse_plant(spec: str) -> tuple[str, Any]:
    """``reward_bias=X`` -> ("reward_bias", X: a finite number), ``swap_actions=A,B`` ->
    ("swap_actions", (A, B): two different action indices >= 0); ValueError otherwise."""
    kind, _, arg = spec.partition("=")
    if kind == "reward_bias":
        try:
            bias = float(arg)
        except ValueError:
            bias = math.nan
        if not math.isfinite(bias):
            raise ValueError(f"reward_bias needs a finite number, got {arg!r}")
        return kind, bias
    if kind == "swap_actions":
        try:
            a, b = (int(x) for x in arg.split(","))
        except ValueError:
            raise ValueError(f"swap_actions needs two action numbers A,B, got {arg!r}") from None
        if a < 0 or b < 0 or a == b:
            raise ValueError(f"swap_actions needs two different action numbers >= 0, got {arg!r}")
        return kind, (a, b)
    raise ValueError(f"unknown planted divergence {spec!r}; expected reward_bias=X or swap_actions=A,B")


def _plant_arg(text: str) -> str:
    try:
        parse_plant(text)
    except ValueError as e:
        raise argparse.ArgumentTypeError(str(e)) from None
    return text


# ---------------------------------------------------------------- training and evaluation


@dataclass
class Hyper:
    steps: int = 20_000
    envs: int = 4
    n_steps: int = 128
    batch_size: int = 128
    epochs: int = 4
    lr: float = 3e-4
    ent_coef: float = 0.01
    frame_stack: int = 4
    life_penalty: float = 10.0


def _wrap(venv, hp: Hyper, norm: bool):
    from stable_baselines3.common.vec_env import VecFrameStack, VecMonitor, VecNormalize

    env = VecMonitor(venv)
    if norm:
        env = VecNormalize(env, norm_obs=False, norm_reward=True, gamma=0.99)
    return VecFrameStack(env, hp.frame_stack) if hp.frame_stack > 1 else env


def train(backend: str, game: str, seed: int, hp: Hyper, plant: Optional[str] = None):
    from stable_baselines3 import PPO
    from stable_baselines3.common.logger import Logger

    make = make_emurust_venv if backend == "emurust" else make_pyboy_venv
    venv = make(hp.envs, game, noop_max=0, life_penalty=hp.life_penalty)
    env = _wrap(planted(venv, plant) if backend == "emurust" else venv, hp, norm=True)
    model = PPO("CnnPolicy", env, n_steps=hp.n_steps, batch_size=hp.batch_size, n_epochs=hp.epochs,
                learning_rate=hp.lr, ent_coef=hp.ent_coef, clip_range=0.1, gamma=0.99, gae_lambda=0.95,
                vf_coef=0.5, seed=seed, policy_kwargs={"features_extractor_class": small_cnn()},
                verbose=0, device="cpu")
    # No log output: SB3's default logger would leave an empty SB3-<time> folder in the
    # temporary directory at every run.
    model.set_logger(Logger(folder=None, output_formats=[]))
    model.learn(total_timesteps=hp.steps)
    env.close()
    if model.num_timesteps < hp.steps:
        raise RuntimeError(f"PPO trained {model.num_timesteps} of {hp.steps} steps")
    return model


def evaluate(model, backend: str, game: str, episodes: int, seed: int, hp: Hyper, max_steps: int = 1000,
             plant: Optional[str] = None) -> list:
    """Returns of `episodes` episodes (game score minus the life penalty), sampling actions with
    torch seeded by `seed`, so both backends see the same action draws for the same observations."""
    import torch

    make = make_emurust_venv if backend == "emurust" else make_pyboy_venv
    venv = make(1, game, noop_max=0, life_penalty=hp.life_penalty, max_episode_steps=max_steps)
    env = _wrap(planted(venv, plant) if backend == "emurust" else venv, hp, norm=False)
    torch.manual_seed(seed)
    returns = []
    obs = env.reset()
    while len(returns) < episodes:
        action, _ = model.predict(obs, deterministic=False)
        obs, _, dones, infos = env.step(action)
        if dones[0]:
            returns.append(float(infos[0]["episode"]["r"]))
    env.close()
    return returns


@dataclass
class TransferResult:
    game: str
    seeds: list
    hyper: dict
    margin: float
    returns: dict = field(default_factory=dict)  # "trained_on->evaluated_on" -> per seed lists
    transfer: Optional[Tost] = None
    training: Optional[Tost] = None
    seconds: float = 0.0
    # Environment steps each policy was trained for, per "backend seed": a check of policies
    # that learnt nothing (identical untrained networks) must never pass.
    trained_steps: dict = field(default_factory=dict)

    @property
    def equivalent(self) -> bool:
        trained = bool(self.trained_steps) and min(self.trained_steps.values()) >= max(1, self.hyper["steps"])
        return bool(trained and self.transfer and self.transfer.equivalent and self.training and self.training.equivalent)


def run_transfer(game: str, seeds: list, hp: Hyper, episodes: int, margin: float, progress=print,
                 plant: Optional[str] = None, torch_threads: int = DEFAULT_TORCH_THREADS) -> TransferResult:
    """`plant`: a divergence planted in the emurust backend on purpose (see `planted`), to show
    that the test detects one. `torch_threads`: PyTorch's thread count for the run (0: as it is)."""
    if hp.steps < 1:
        raise ValueError(f"steps must be at least 1 (got {hp.steps}): untrained policies prove nothing")
    if not seeds:
        raise ValueError("needs at least one seed")
    threads = set_torch_threads(torch_threads)
    progress(f"PyTorch threads: {threads}")
    t0 = time.time()
    res = TransferResult(game, list(seeds), hp.__dict__.copy(), margin)
    res.hyper["plant"] = plant
    for trained in ("emurust", "pyboy"):
        for seed in seeds:
            progress(f"training PPO on {trained}, seed {seed}, {hp.steps} steps")
            model = train(trained, game, seed, hp, plant)
            res.trained_steps[f"{trained} {seed}"] = int(model.num_timesteps)
            for evaluated in ("emurust", "pyboy"):
                r = evaluate(model, evaluated, game, episodes, seed=1000 + seed, hp=hp, plant=plant)
                res.returns.setdefault(f"{trained}->{evaluated}", []).append(r)
                progress(f"  evaluated on {evaluated}: mean return {np.mean(r):.1f} over {len(r)} episodes")
    paired = []
    for trained in ("emurust", "pyboy"):
        for a, b in zip(res.returns[f"{trained}->emurust"], res.returns[f"{trained}->pyboy"]):
            paired += [x - y for x, y in zip(a, b)]
    res.transfer = tost_paired(paired, margin)
    # Same seed and hyperparameters on both backends: pair the policies seed by seed.
    by_seed = []
    for evaluated in ("emurust", "pyboy"):
        for a, b in zip(res.returns[f"emurust->{evaluated}"], res.returns[f"pyboy->{evaluated}"]):
            by_seed += [x - y for x, y in zip(a, b)]
    res.training = tost_paired(by_seed, margin)
    res.seconds = time.time() - t0
    return res


def format_table(res: TransferResult) -> str:
    lines = [f"L4 policy transfer on {res.game}: PPO, {res.hyper['steps']} steps x {len(res.seeds)} seeds per backend, margin {res.margin}"]
    lines.append(f"{'trained on':<12}{'seed':>6}{'return on emurust':>20}{'return on PyBoy':>18}")
    for trained in ("emurust", "pyboy"):
        for i, seed in enumerate(res.seeds):
            a = np.mean(res.returns[f"{trained}->emurust"][i])
            b = np.mean(res.returns[f"{trained}->pyboy"][i])
            lines.append(f"{trained:<12}{seed:>6}{a:>20.2f}{b:>18.2f}")
    for name, t in (("transfer (paired, emurust - PyBoy)", res.transfer), ("training backend (paired by seed)", res.training)):
        lines.append(
            f"TOST {name}: n={t.n}, mean difference {t.mean_difference:+.3f}, 90% CI [{t.ci90[0]:+.3f}, {t.ci90[1]:+.3f}], "
            f"p={t.p_value:.4g} -> {'EQUIVALENT' if t.equivalent else 'not shown equivalent'} within +-{t.margin}; "
            f"power at a true difference of 0: {t.power:.2f}"
        )
    if res.hyper.get("plant"):
        lines.append(f"planted divergence in the emurust backend: {res.hyper['plant']}")
    lines.append(f"verdict: {'EQUIVALENT' if res.equivalent else 'NOT SHOWN EQUIVALENT'} ({res.seconds:.0f} s)")
    return "\n".join(lines)


def _main(args) -> int:
    if args.json:
        check_output_file(args.json, "--json")
    if args.seeds and len(set(args.seeds)) != len(args.seeds):
        raise UsageError(f"--seeds: each seed once, got {','.join(map(str, args.seeds))}")
    hp = Hyper(steps=args.steps, envs=args.envs)
    seeds = args.seeds
    res = run_transfer(args.game, seeds, hp, args.episodes, args.margin, progress=(lambda m: None) if args.quiet else print,
                       plant=args.plant, torch_threads=args.torch_threads)
    print(format_table(res))
    if args.json:
        out = {
            "game": res.game, "seeds": res.seeds, "hyper": res.hyper, "margin": res.margin, "returns": res.returns,
            "transfer": res.transfer.__dict__, "training": res.training.__dict__, "equivalent": res.equivalent,
            "trained_steps": res.trained_steps, "seconds": res.seconds,
        }
        try:
            with open(args.json, "w") as f:
                json.dump(out, f, indent=1)
        except OSError as e:
            raise UsageError(f"cannot write {args.json}: {e.strerror}") from None
    return 0 if res.equivalent else 1


def add_parser(sub) -> None:
    p = sub.add_parser(
        "transfer",
        help="L4: train PPO on emurust and PyBoy, evaluate on both, TOST equivalence",
        description="Train PPO on one of the embedded games on emurust and on PyBoy 2.8.1 (one run per "
        "seed each), evaluate every policy on both, and test equivalence (TOST) within --margin. "
        "Slow: minutes per seed. Needs the [rl] extra and pyboy==2.8.1.",
    )
    p.add_argument("--game", default="dodge", choices=["dodge", "snake", "runner"], help="embedded game (default dodge)")
    p.add_argument("--seeds", type=seed_list, default=[1, 2, 3], help="training seeds, comma-separated (default 1,2,3)")
    p.add_argument("--steps", type=int_range(1, MAX_STEPS), default=20_000,
                   help="PPO steps per training run (default 20000)")
    p.add_argument("--envs", type=int_range(1, MAX_ENVS), default=4, help="emulators per training run (default 4)")
    p.add_argument("--episodes", type=int_range(1, MAX_EPISODES), default=5,
                   help="evaluation episodes per policy and backend (default 5)")
    p.add_argument("--margin", type=float_range(0, 1e9, low_open=True), default=5.0,
                   help="equivalence margin, in return units (game score; default 5)")
    p.add_argument("--torch-threads", type=int_range(0, MAX_THREADS), default=DEFAULT_TORCH_THREADS,
                   help="PyTorch threads (default 1; 0 keeps PyTorch's own default)")
    p.add_argument("--json", metavar="FILE", help="also write the results here as JSON; its directory must exist")
    p.add_argument("--quiet", action="store_true", help="no progress messages")
    p.add_argument("--plant", metavar="SPEC", type=_plant_arg, default=None,
                   help="plant a divergence in the emurust backend to check that it is detected: "
                        "reward_bias=X (X added to every reward) or swap_actions=A,B")
    p.set_defaults(func=_main)
