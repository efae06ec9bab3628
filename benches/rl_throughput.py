"""RL throughput of emurust against PyBoy 2.8.1 at frame skip 24, grey observations.

    python benches/rl_throughput.py [--parts scaling,envs,ppo,share,memory] [--num-envs 16]
        [--threads 16] [--seconds 5] [--ppo-steps 8192] [--sizes 2m,20m,200m] [--device auto]
        [--memory-envs 4096] [--out rl_throughput.json]

Task (the same for both engines): Dodge (games/dodge.gb), 8 actions, one step = the action's
buttons pressed, 24 frames run (only the last drawn), buttons released; observation = the grey
screen (1, 144, 160) uint8; reward = score difference; terminated when the game-over flag is
set; truncated after --max-episode-steps; each reset = power-on state, 0-30 seeded idle frames,
then START (leave the title screen).

Parts (each writes its section of the JSON; the file is rewritten after every part):

``scaling``  emurust ``Batch`` (raw, no Python wrapper) with N = --scaling-envs environments at
             each thread count of --scaling-threads: steps/s and parallel efficiency
             ``steps/s(T) / (T * steps/s(1))``.
``envs``     the environments alone, random actions: emurust's SB3 VecEnv (one Batch of N
             environments, T Rayon threads, GIL released) and the raw Batch, against PyBoy in
             SB3's ``SubprocVecEnv`` (N processes, on the same cores): steps/s and the ratio.
``ppo``      SB3 PPO end to end, the same CnnPolicy (policy --ppo-size) and hyperparameters on
             both: steps/s (after the first rollout) and the ratio.
``share``    PPO on emurust at each policy size of --sizes (exact parameter counts reported):
             the share of the time spent in the environment (``step_wait``), in the policy
             during rollouts, and in training (``--share-engines emurust,pyboy`` for both).
``memory``   RSS growth of a Batch of --memory-envs emulators (in a fresh subprocess), per
             emulator; the same with a 4 MiB ROM to show the ROM is shared (one ``Arc``), and the
             time of one step of that batch.

Environment variables override the defaults of the same-named options (the device script uses
them): RL_NUM_ENVS, RL_THREADS, RL_SECONDS, RL_PPO_STEPS, RL_SIZES, RL_DEVICE, RL_MEMORY_ENVS,
RL_SCALING_ENVS, RL_SCALING_THREADS.
"""

from __future__ import annotations

import argparse
import io
import json
import os
import pathlib
import subprocess
import sys
import time
from typing import Any, Optional

import numpy as np

from emurust.rom_header import header_checksum

ROOT = pathlib.Path(__file__).resolve().parent.parent
FRAME_SKIP = 24
ACTIONS = ["noop", "left", "right", "up", "down", "a", "a+left", "a+right"]
SCORE, GAME_OVER = 0xC000, 0xC003
RESET_SCRIPT = [("noop", 10), ("start", 2), ("noop", 12)]
NOOP_MAX = 30
# PyBoy runs its boot ROM first: emurust's power-on state (no boot ROM) is where PyBoy's
# 64th frame ends (README: an emurust's first tick ends where PyBoy's 65th does).
PYBOY_BOOT_FRAMES = 64

# Policy sizes: NatureCNN-shaped extractor (8x8/4, 4x4/2, 3x3/1 convolutions, then one linear
# layer of `features` units) with the channel widths below; SB3 heads on top (8 logits, 1 value).
# On a (1, 144, 160) observation the last convolution leaves 14 x 16 positions.
POLICY_SIZES = {
    "2m": {"channels": (32, 64, 64), "features": 128},
    "20m": {"channels": (64, 128, 128), "features": 688},
    "200m": {"channels": (128, 256, 256), "features": 3466},
}
PPO_HYPER = dict(n_steps=128, batch_size=256, n_epochs=4, learning_rate=2.5e-4, gamma=0.99, gae_lambda=0.95,
                 clip_range=0.1, ent_coef=0.01, vf_coef=0.5, max_grad_norm=0.5, seed=0)


def rom_path(name: str = "dodge") -> str:
    for p in (ROOT / "games" / f"{name}.gb", pathlib.Path.cwd() / "games" / f"{name}.gb"):
        if p.is_file():
            return str(p)
    from emurust.games import rom_path as rp

    return rp(name)


def machine() -> dict[str, Any]:
    try:
        from emurust.bench import machine_info

        return machine_info()
    except ImportError:  # an older emurust without the bench module
        return {"logical_cpus": os.cpu_count(), "loadavg": list(os.getloadavg())}


# ---------------------------------------------------------------------------- environments


def emurust_kwargs(num_threads: Optional[int], max_steps: int, obs: str = "grey") -> dict[str, Any]:
    from emurust.rewards import Condition, Term

    return dict(
        rom=rom_path(),
        obs=obs,
        actions=list(ACTIONS),
        frame_skip=FRAME_SKIP,
        press_frames=FRAME_SKIP,  # held for the whole step, released at its end (as PyBoy below)
        reward=[Term(SCORE, "u16le", 1.0, True)],
        terminate=[Condition(GAME_OVER, "u8", "==", 1)],
        max_episode_steps=max_steps,
        noop_max=NOOP_MAX,
        reset_script=list(RESET_SCRIPT),
        num_threads=num_threads,
    )


def make_emurust_vec(num_envs: int, threads: Optional[int], max_steps: int):
    from emurust.sb3 import EmurustVecEnv

    return EmurustVecEnv(num_envs, **emurust_kwargs(threads, max_steps))


def make_raw_batch(num_envs: int, threads: Optional[int], obs: str = "grey"):
    from emurust import _core
    from emurust.rewards import parse_reward, parse_terminate

    kw = emurust_kwargs(threads, 1000, obs)
    return _core.Batch(
        kw["rom"], num_envs, actions=kw["actions"], frame_skip=FRAME_SKIP, press_frames=FRAME_SKIP, obs=[obs],
        reward=parse_reward(kw["reward"]), terminate=parse_terminate(kw["terminate"]), max_episode_steps=1000,
        noop_max=NOOP_MAX, reset_script=RESET_SCRIPT, num_threads=threads,
    )


def pyboy_env(rom: str, seed: int, max_steps: int):
    """A minimal Gymnasium env on PyBoy 2.8.1 for the same task (gymnasium imported lazily)."""
    import gymnasium as gym
    from gymnasium import spaces

    class _Env(gym.Env):
        metadata = {"render_modes": []}

        def __init__(self):
            import logging

            from pyboy import PyBoy

            logging.getLogger("pyboy").setLevel(logging.ERROR)
            self.pb = PyBoy(rom, window="null", log_level="ERROR")
            self.pb.set_emulation_speed(0)
            self.pb.tick(PYBOY_BOOT_FRAMES, False)
            buf = io.BytesIO()
            self.pb.save_state(buf)
            self.start = buf.getvalue()
            self.rng = np.random.default_rng(seed)
            self.buttons = [[] if a == "noop" else a.split("+") for a in ACTIONS]
            self.observation_space = spaces.Box(0, 255, (1, 144, 160), np.uint8)
            self.action_space = spaces.Discrete(len(ACTIONS))
            self.steps = 0
            self.score = 0

        def _obs(self):
            # PyBoy's default palette is grey: the R channel is the grey level.
            return self.pb.screen.ndarray[None, :, :, 0].copy()

        def _score(self):
            return self.pb.memory[SCORE] | self.pb.memory[SCORE + 1] << 8

        def reset(self, *, seed=None, options=None):
            if seed is not None:
                self.rng = np.random.default_rng(seed)
            self.pb.load_state(io.BytesIO(self.start))
            idle = int(self.rng.integers(0, NOOP_MAX + 1))
            if idle:
                self.pb.tick(idle, False)
            for i, (b, frames) in enumerate(RESET_SCRIPT):
                if b != "noop":
                    self.pb.button_press(b)
                self.pb.tick(frames, i == len(RESET_SCRIPT) - 1)
                if b != "noop":
                    self.pb.button_release(b)
            self.steps = 0
            self.score = self._score()
            return self._obs(), {}

        def step(self, action):
            names = self.buttons[int(action)]
            for b in names:
                self.pb.button_press(b)
            self.pb.tick(FRAME_SKIP, True)
            for b in names:
                self.pb.button_release(b)
            self.steps += 1
            s = self._score()
            reward, self.score = float(s - self.score), s
            terminated = self.pb.memory[GAME_OVER] == 1
            truncated = self.steps >= max_steps
            return self._obs(), reward, terminated, truncated, {}

        def close(self):
            self.pb.stop(save=False)

    return _Env()


def _pyboy_factory(rom: str, seed: int, max_steps: int):
    def make():
        import torch

        torch.set_num_threads(1)
        return pyboy_env(rom, seed, max_steps)

    return make


def make_pyboy_vec(num_envs: int, max_steps: int):
    from stable_baselines3.common.vec_env import SubprocVecEnv

    return SubprocVecEnv([_pyboy_factory(rom_path(), 1000 + i, max_steps) for i in range(num_envs)])


def make_vec(engine: str, num_envs: int, threads: Optional[int], max_steps: int):
    if engine == "emurust":
        return make_emurust_vec(num_envs, threads, max_steps)
    return make_pyboy_vec(num_envs, max_steps)


def time_vec(venv, seconds: float, seed: int = 0) -> dict[str, Any]:
    """Random actions through the SB3 VecEnv interface until `seconds` have passed."""
    n = venv.num_envs
    venv.seed(seed)
    venv.reset()
    rng = np.random.default_rng(seed)
    acts = rng.integers(0, venv.action_space.n, (256, n))
    venv.step(acts[0])  # warm-up
    calls, t0, c0 = 0, time.perf_counter(), time.process_time()
    while True:
        venv.step(acts[calls % 256])
        calls += 1
        el = time.perf_counter() - t0
        if el >= seconds and calls >= 3:
            break
    return {"num_envs": n, "calls": calls, "seconds": el, "steps_per_s": n * calls / el,
            "main_process_cpu_s": time.process_time() - c0}


def time_raw_batch(batch, seconds: float, seed: int = 0) -> dict[str, Any]:
    n = batch.num_envs
    batch.seed(seed)
    batch.reset()
    buf = batch.buffers
    rng = np.random.default_rng(seed)
    acts = rng.integers(0, batch.num_actions, (256, n))
    batch.step(acts[0])
    calls, t0 = 0, time.perf_counter()
    while True:
        done = buf["terminated"] | buf["truncated"]
        batch.step(acts[calls % 256], done if done.any() else None)
        calls += 1
        el = time.perf_counter() - t0
        if el >= seconds and calls >= 3:
            break
    return {"num_envs": n, "threads": batch.num_threads, "calls": calls, "seconds": el,
            "steps_per_s": n * calls / el}


# ---------------------------------------------------------------------------- parts


def part_scaling(a) -> dict[str, Any]:
    rows: list[dict[str, Any]] = []
    for t in a.scaling_threads:
        b = make_raw_batch(a.scaling_envs, t)
        r = time_raw_batch(b, a.seconds)
        del b
        rows.append(r)
        a.flush({"num_envs": a.scaling_envs, "rows": rows, "partial": True})
        print(f"  scaling: N={a.scaling_envs} threads={t}: {r['steps_per_s']:,.0f} steps/s", flush=True)
    base = next((r["steps_per_s"] for r in rows if r["threads"] == 1), None)
    for r in rows:
        r["speedup"] = r["steps_per_s"] / base if base else None
        r["efficiency"] = r["steps_per_s"] / (r["threads"] * base) if base else None
    return {"num_envs": a.scaling_envs, "rows": rows}


def part_envs(a) -> dict[str, Any]:
    out: dict[str, Any] = {"num_envs": a.num_envs, "threads": a.threads}
    b = make_raw_batch(a.num_envs, a.threads)
    out["emurust_raw_batch"] = time_raw_batch(b, a.seconds)
    del b
    print(f"  envs: emurust raw Batch {out['emurust_raw_batch']['steps_per_s']:,.0f} steps/s", flush=True)
    v = make_emurust_vec(a.num_envs, a.threads, a.max_episode_steps)
    out["emurust_sb3"] = time_vec(v, a.seconds)
    v.close()
    print(f"  envs: emurust SB3 VecEnv {out['emurust_sb3']['steps_per_s']:,.0f} steps/s", flush=True)
    if "pyboy" in a.engines:
        t0 = time.perf_counter()
        v = make_pyboy_vec(a.num_envs, a.max_episode_steps)
        out["pyboy_subproc_startup_s"] = time.perf_counter() - t0
        out["pyboy_subproc"] = time_vec(v, a.seconds)
        v.close()
        p = out["pyboy_subproc"]["steps_per_s"]
        print(f"  envs: PyBoy SubprocVecEnv {p:,.0f} steps/s", flush=True)
        out["ratio_sb3_vs_pyboy"] = out["emurust_sb3"]["steps_per_s"] / p
        out["ratio_raw_vs_pyboy"] = out["emurust_raw_batch"]["steps_per_s"] / p
    return out


def policy_kwargs(size: str) -> dict[str, Any]:
    import torch
    from torch import nn
    from stable_baselines3.common.torch_layers import BaseFeaturesExtractor

    spec = POLICY_SIZES[size]

    class SizedCNN(BaseFeaturesExtractor):
        def __init__(self, observation_space, channels=(32, 64, 64), features=128):
            super().__init__(observation_space, features)
            c0 = observation_space.shape[0]
            c1, c2, c3 = channels
            self.cnn = nn.Sequential(
                nn.Conv2d(c0, c1, 8, 4), nn.ReLU(), nn.Conv2d(c1, c2, 4, 2), nn.ReLU(),
                nn.Conv2d(c2, c3, 3, 1), nn.ReLU(), nn.Flatten(),
            )
            with torch.no_grad():
                n = self.cnn(torch.zeros(1, *observation_space.shape)).shape[1]
            self.linear = nn.Sequential(nn.Linear(n, features), nn.ReLU())

        def forward(self, x):
            return self.linear(self.cnn(x))

    return dict(features_extractor_class=SizedCNN,
                features_extractor_kwargs=dict(channels=spec["channels"], features=spec["features"]),
                net_arch=[])


def run_ppo(engine: str, a, size: str, total_steps: int) -> dict[str, Any]:
    """PPO.learn on `engine`; times the environment (step_wait/reset), the rollouts and the total."""
    import torch
    from stable_baselines3 import PPO
    from stable_baselines3.common.callbacks import BaseCallback
    from stable_baselines3.common.vec_env import VecEnvWrapper

    class TimedVecEnv(VecEnvWrapper):
        def __init__(self, venv):
            super().__init__(venv)
            self.env_s = 0.0

        def reset(self):
            t = time.perf_counter()
            obs = self.venv.reset()
            self.env_s += time.perf_counter() - t
            return obs

        def step_async(self, actions):
            t = time.perf_counter()
            self.venv.step_async(actions)
            self.env_s += time.perf_counter() - t

        def step_wait(self):
            t = time.perf_counter()
            r = self.venv.step_wait()
            self.env_s += time.perf_counter() - t
            return r

    class Clock(BaseCallback):
        def __init__(self, venv):
            super().__init__()
            self.venv = venv
            self.marks: list[tuple[float, float, float]] = []  # (rollout start, rollout end, env_s)
            self._start = 0.0

        def _on_rollout_start(self):
            self._start = time.perf_counter()

        def _on_rollout_end(self):
            self.marks.append((self._start, time.perf_counter(), self.venv.env_s))

        def _on_step(self):
            return True

    device = a.device
    if device == "auto":
        device = "cuda" if torch.cuda.is_available() else "cpu"
    venv = TimedVecEnv(make_vec(engine, a.num_envs, a.threads, a.max_episode_steps))
    hyper = dict(PPO_HYPER)
    hyper["batch_size"] = min(hyper["batch_size"], hyper["n_steps"] * a.num_envs)
    model = PPO("CnnPolicy", venv, policy_kwargs=policy_kwargs(size), device=device, verbose=0, **hyper)
    params = sum(p.numel() for p in model.policy.parameters())
    clock = Clock(venv)
    per_rollout = hyper["n_steps"] * a.num_envs
    total_steps = max(total_steps, 2 * per_rollout)
    t0 = time.perf_counter()
    model.learn(total_timesteps=total_steps, callback=clock, progress_bar=False)
    total = time.perf_counter() - t0
    steps = model.num_timesteps
    venv.close()
    m = clock.marks
    # Steady state: from the end of the first rollout (+ its training) to the end of learn().
    rollouts = len(m)
    env_s = venv.env_s
    rollout_s = sum(e - s for s, e, _ in m)
    out = {
        "engine": engine, "policy": size, "params": params, "device": device, "num_envs": a.num_envs,
        "threads": a.threads, "hyper": hyper, "timesteps": steps, "rollouts": rollouts, "seconds": total,
        "steps_per_s": steps / total, "env_s": env_s, "rollout_s": rollout_s,
        "policy_in_rollout_s": rollout_s - env_s, "train_s": total - rollout_s,
        "env_share": env_s / total, "torch_threads": torch.get_num_threads(),
    }
    if rollouts >= 2:
        # Time from the start of the 2nd rollout to the end, steps in those rollouts.
        t_from = m[1][0]
        out["steady_steps_per_s"] = (rollouts - 1) * per_rollout / (t0 + total - t_from)
        out["steady_env_share"] = (env_s - m[0][2]) / (t0 + total - t_from)
    print(f"  ppo {engine} {size} ({params:,} params, {device}): {out['steps_per_s']:,.0f} steps/s, "
          f"env {100 * out['env_share']:.0f}% of the time", flush=True)
    return out


def part_ppo(a) -> dict[str, Any]:
    rows: dict[str, Any] = {}
    for e in a.engines:
        rows[e] = run_ppo(e, a, a.ppo_size, a.ppo_steps)
        a.flush({"policy": a.ppo_size, "runs": rows, "partial": True})
    out: dict[str, Any] = {"policy": a.ppo_size, "runs": rows}
    if "pyboy" in rows and "emurust" in rows:
        key = "steady_steps_per_s" if "steady_steps_per_s" in rows["pyboy"] else "steps_per_s"
        out["ratio"] = rows["emurust"][key] / rows["pyboy"][key]
        out["ratio_of"] = key
    return out


def part_share(a) -> dict[str, Any]:
    runs: list[dict[str, Any]] = []
    for s in a.sizes:
        for e in a.share_engines:
            runs.append(run_ppo(e, a, s, a.ppo_steps))
            a.flush({"runs": runs, "partial": True})
    return {"runs": runs}


MEMORY_CHILD = r"""
import json, sys, time, pathlib
import numpy as np
from emurust import _core
def rss():
    for l in pathlib.Path('/proc/self/status').read_text().splitlines():
        if l.startswith('VmRSS:'): return int(l.split()[1])
rom, n, obs = sys.argv[1], int(sys.argv[2]), sys.argv[3]
data = open(rom, 'rb').read()
r0 = rss()
b = _core.Batch(data, n, obs=[obs], ram=[(0xC000, 16)], frame_skip=24, press_frames=24, num_threads=None)
r1 = rss()
b.reset()
r2 = rss()
t = time.perf_counter(); b.step(np.zeros(n, np.int64)); dt = time.perf_counter() - t
r3 = rss()
buf = sum(v.nbytes for v in b.buffers.values())
print(json.dumps({'rom': rom, 'rom_bytes': len(data), 'num_envs': n, 'obs': obs, 'threads': b.num_threads,
  'rss_before_kb': r0, 'rss_built_kb': r1, 'rss_reset_kb': r2, 'rss_stepped_kb': r3,
  'output_buffers_bytes': buf, 'one_step_s': dt, 'steps_per_s': n / dt,
  'per_emulator_kb': (r3 - r0 - buf / 1024) / n}))
"""


def big_rom(path: str, out: pathlib.Path, size_code: int = 0x07) -> str:
    """The ROM padded to 4 MiB (header ROM size 0x07 = 256 banks, checksum fixed): an emulator
    that copied its ROM would grow by 4 MiB per emulator."""
    rom = bytearray(open(path, "rb").read())
    size = 32768 << size_code
    rom += b"\xff" * (size - len(rom))
    rom[0x148] = size_code
    rom[0x14D] = header_checksum(rom)
    out.write_bytes(bytes(rom))
    return str(out)


def part_memory(a) -> dict[str, Any]:
    import tempfile

    rows = []
    tmp = pathlib.Path(tempfile.mkdtemp(prefix="emurust-mem-"))
    runner = rom_path("runner")  # MBC5: a 4 MiB image is a valid cartridge
    cases = [(rom_path("dodge"), "ram"), (rom_path("dodge"), "grey"), (runner, "ram"),
             (big_rom(runner, tmp / "runner-4MiB.gb"), "ram")]
    for rom, obs in cases:
        r = subprocess.run([sys.executable, "-c", MEMORY_CHILD, rom, str(a.memory_envs), obs],
                           capture_output=True, text=True)
        if r.returncode != 0:
            rows.append({"rom": rom, "obs": obs, "error": (r.stderr.strip().splitlines() or ["?"])[-1]})
            print(f"  memory: {rom} {obs}: ERROR {rows[-1]['error']}", flush=True)
            continue
        row = json.loads(r.stdout.strip().splitlines()[-1])
        rows.append(row)
        print(f"  memory: {pathlib.Path(rom).name} ({row['rom_bytes'] // 1024} KiB) obs={obs} N={row['num_envs']}: "
              f"{row['per_emulator_kb']:.1f} KiB per emulator, one step {row['one_step_s']:.2f} s", flush=True)
    out: dict[str, Any] = {"rows": rows}
    ok = [r for r in rows if "error" not in r and r["obs"] == "ram"]
    small = next((r for r in ok if "4MiB" not in r["rom"] and "runner" in r["rom"]), None)
    big = next((r for r in ok if "4MiB" in r["rom"]), None)
    if small and big:
        growth = big["per_emulator_kb"] - small["per_emulator_kb"]
        # How many copies of the extra 4 MiB the batch holds: ~1 when the ROM is shared (the
        # batch's one Arc), ~N if every emulator had its own.
        copies = growth * big["num_envs"] / ((big["rom_bytes"] - small["rom_bytes"]) / 1024)
        out["rom_copies_in_batch"] = copies
        out["rom_shared"] = copies < max(2.0, big["num_envs"] / 2)
        out["per_emulator_growth_kb_for_4MiB_rom"] = growth
    return out


PARTS = {"scaling": part_scaling, "envs": part_envs, "ppo": part_ppo, "share": part_share, "memory": part_memory}


def _env(name: str, default: Any) -> Any:
    return os.environ.get(name, default)


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    cpus = os.cpu_count() or 1
    p.add_argument("--parts", default="scaling,envs,ppo,share,memory")
    p.add_argument("--num-envs", type=int, default=int(_env("RL_NUM_ENVS", cpus)))
    p.add_argument("--threads", type=int, default=int(_env("RL_THREADS", cpus)))
    p.add_argument("--seconds", type=float, default=float(_env("RL_SECONDS", 5)))
    p.add_argument("--max-episode-steps", type=int, default=1000)
    p.add_argument("--engines", default="emurust,pyboy", help="for envs and ppo")
    p.add_argument("--ppo-size", default=_env("RL_PPO_SIZE", "2m"), choices=sorted(POLICY_SIZES))
    p.add_argument("--ppo-steps", type=int, default=int(_env("RL_PPO_STEPS", 8192)))
    p.add_argument("--sizes", default=_env("RL_SIZES", "2m,20m,200m"))
    p.add_argument("--share-engines", default=_env("RL_SHARE_ENGINES", "emurust"))
    p.add_argument("--device", default=_env("RL_DEVICE", "auto"))
    p.add_argument("--memory-envs", type=int, default=int(_env("RL_MEMORY_ENVS", 4096)))
    p.add_argument("--scaling-envs", type=int, default=int(_env("RL_SCALING_ENVS", 256)))
    p.add_argument("--scaling-threads", default=_env("RL_SCALING_THREADS", ",".join(
        str(t) for t in (1, 2, 4, 8, 16, 32) if t <= cpus)))
    p.add_argument("--out", default="rl_throughput.json")
    a = p.parse_args(argv)
    a.engines = [e for e in a.engines.split(",") if e]
    a.sizes = [s for s in a.sizes.split(",") if s]
    a.share_engines = [e for e in a.share_engines.split(",") if e]
    a.scaling_threads = [int(t) for t in a.scaling_threads.split(",") if t]
    for s in a.sizes + [a.ppo_size]:
        if s not in POLICY_SIZES:
            raise SystemExit(f"unknown policy size {s!r}; expected one of {sorted(POLICY_SIZES)}")
    result: dict[str, Any] = {
        "task": {"rom": "games/dodge.gb", "frame_skip": FRAME_SKIP, "obs": "grey (1,144,160) uint8",
                 "actions": ACTIONS, "max_episode_steps": a.max_episode_steps},
        "machine": machine(),
        "args": dict(vars(a)),
    }
    try:
        import torch

        result["torch"] = {"version": torch.__version__, "cuda": torch.cuda.is_available(),
                           "gpu": torch.cuda.get_device_name(0) if torch.cuda.is_available() else None}
    except ImportError:
        pass
    def write() -> None:
        result["machine"]["loadavg_end"] = list(os.getloadavg())
        with open(a.out, "w") as f:
            json.dump(result, f, indent=1, default=str)

    for part in [x for x in a.parts.split(",") if x]:
        if part not in PARTS:
            raise SystemExit(f"unknown part {part!r}; expected some of {','.join(PARTS)}")
    for part in [x for x in a.parts.split(",") if x]:
        print(f"[{part}]", flush=True)
        t0 = time.perf_counter()

        def flush(section: dict[str, Any], part: str = part) -> None:
            # Partial results survive a time limit that kills the script mid-part.
            result[part] = section
            write()

        a.flush = flush
        try:
            result[part] = PARTS[part](a)
        except Exception as e:  # keep the other parts' results
            import traceback

            traceback.print_exc()
            result[part] = {"error": f"{type(e).__name__}: {e}"}
        result[part]["part_seconds"] = time.perf_counter() - t0
        write()
    print(f"wrote {a.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
