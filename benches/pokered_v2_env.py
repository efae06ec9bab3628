"""PokemonRedExperiments v2 (``red_gym_env_v2.py``) on PyBoy 2.8.1 and on ``emurust.PyBoy``, the
env's code unchanged: only its ``pyboy`` imports are answered by emurust (a shim module put in
``sys.modules`` before the env is imported; its file is run from where it lies, never copied).

    python benches/pokered_v2_env.py --rom pokered.gb --state init.state
        [--env-dir ../shared/data/clients/PokemonRedExperiments-v2] [--steps 300]
        [--processes 1,16] [--check-steps 500] [--profile-steps 300] [--blas-threads 1]
        [--ratio 1.6] [--vec-rounds 2] [--out pokered_v2_env.json]

Needs ``pip install -e .[bench]`` (scikit-image, mediapy, einops: the env's imports) and
stable-baselines3. Measures, emurust and PyBoy alternating:

- identity: both envs reset from ``--state`` and take the same random actions for
  ``--check-steps`` steps; every observation (all keys) and reward must be equal;
- one process: steps/s of the env itself (no vector env), best of ``--repeat``;
- the cProfile split over ``--profile-steps`` steps: T_emu (time inside PyBoy.tick,
  load_state and the memory/screen calls, i.e. the emulator's API) and T_py (the rest: the env's
  own Python), per step;
- N processes in SB3's SubprocVecEnv for each N of ``--processes``: env steps/s (N per call),
  with each worker's thread count and resident memory after start-up (to see oversubscription:
  threads a process starts beyond its own, e.g. BLAS pools, and memory per process), and the
  split of a call's time: the slowest worker's step (SubprocVecEnv waits for all), the mean
  step's wall and CPU time inside the workers (CPU well under wall: the worker waited for a
  CPU), and the rest (the main process: pipes, pickles); the workers' emulation time per step;
  and the issue's bound per call: emurust's call time <= 1.1 x (PyBoy's call time with its
  emulation on the critical path -- the slowest worker's step at the workers' emulation share
  -- divided by ``--ratio``), the best of ``--vec-rounds`` rounds taking turns.
"""

from __future__ import annotations

import argparse
import cProfile
import json
import os
import pathlib
import platform
import pstats
import sys
import tempfile
import time
import types

import numpy as np

DEFAULT_ENV_DIR = pathlib.Path(__file__).resolve().parents[2] / "shared" / "data" / "clients" / "PokemonRedExperiments-v2"


def import_env(backend: str, env_dir: str):
    """The env's module with ``from pyboy import PyBoy`` / ``from pyboy.utils import
    WindowEvent`` answered by ``backend`` (``emurust``: shim modules in ``sys.modules`` while
    the env's file is imported, then the real ``pyboy`` entries back: emurust itself finds
    PyBoy's boot ROM through the real package, as it would after a user edits the import)."""
    if env_dir not in sys.path:
        sys.path.insert(0, env_dir)
    if backend == "pyboy":
        import red_gym_env_v2
        return red_gym_env_v2
    import emurust
    from emurust.pyboy_api import utils as emurust_utils

    shim = types.ModuleType("pyboy")
    shim.PyBoy = emurust.PyBoy
    shim.WindowEvent = emurust_utils.WindowEvent
    shim.__path__ = []  # a package, for `pyboy.utils`
    utils = types.ModuleType("pyboy.utils")
    utils.WindowEvent = emurust_utils.WindowEvent
    shim.utils = utils
    saved = {k: sys.modules.get(k) for k in ("pyboy", "pyboy.utils")}
    sys.modules.update({"pyboy": shim, "pyboy.utils": utils})
    try:
        import red_gym_env_v2
    finally:
        for k, v in saved.items():
            if v is None:
                sys.modules.pop(k, None)
            else:
                sys.modules[k] = v
    assert red_gym_env_v2.PyBoy is emurust.PyBoy
    return red_gym_env_v2


def env_config(args, session: str) -> dict:
    return {
        "headless": True, "save_final_state": False, "early_stop": False, "action_freq": 24,
        "init_state": str(pathlib.Path(args.state).resolve()), "max_steps": 2048 * 80,
        "print_rewards": False, "save_video": False, "fast_video": True, "session_path": pathlib.Path(session),
        "gb_path": str(pathlib.Path(args.rom).resolve()), "debug": False, "reward_scale": 0.5, "explore_weight": 0.25,
    }


def make_env(backend: str, env_dir: str, config: dict, seed: int):
    """The env on ``backend`` (imported in this process, after the backend is installed)."""
    env = import_env(backend, env_dir).RedGymEnv(config)  # the env's own file, run in place
    env.reset(seed=seed)
    return env


def _env_fn(backend, env_dir, config, rank):
    def build():
        return _TimedSteps(make_env(backend, env_dir, config, rank))
    return build


class _TimedEmulator:
    """An env's emulator with ``tick``, ``load_state`` and ``send_input`` timed into
    ``spent[0]`` (PyBoy's compiled methods are invisible to cProfile); everything else
    forwarded, ``memory`` and ``screen`` as plain attributes (no cost added to their reads)."""

    def __init__(self, pb, spent: list):
        self._pb = pb
        self.memory = pb.memory
        self.screen = pb.screen

        def timed(method):
            def call(*a, **k):
                t = time.perf_counter()
                try:
                    return method(*a, **k)
                finally:
                    spent[0] += time.perf_counter() - t
            return call

        self.tick = timed(pb.tick)
        self.load_state = timed(pb.load_state)
        self.send_input = timed(pb.send_input)

    def __getattr__(self, name):
        return getattr(self._pb, name)


def _timed_steps_class():
    import gymnasium

    class TimedSteps(gymnasium.Wrapper):
        """Records each step's wall and CPU time inside the worker process, and the part of it
        spent in the emulator (T_emu): with the vector env's wall time per call, it splits
        N-process time into the env's own step (and whether the worker had a CPU to itself:
        CPU ~ wall), its emulation, the slowest worker of each call (SubprocVecEnv waits for
        all) and the main process's share (pipes, pickles)."""

        def __init__(self, env):
            super().__init__(env)
            self.step_walls = []
            self.step_cpus = []
            self.step_emus = []
            self._spent = [0.0]
            inner = env.unwrapped
            inner.pyboy = _TimedEmulator(inner.pyboy, self._spent)

        def step(self, action):
            self._spent[0] = 0.0
            w0, c0 = time.perf_counter(), time.process_time()
            out = self.env.step(action)
            self.step_walls.append(time.perf_counter() - w0)
            self.step_cpus.append(time.process_time() - c0)
            self.step_emus.append(self._spent[0])
            return out

    return TimedSteps


def _TimedSteps(env):
    return _timed_steps_class()(env)


def run_isolated(backend: str, task: str, args, extra=None) -> dict:
    """Run ``task`` for ``backend`` in a fresh interpreter (each backend imports the env with
    its own ``pyboy`` module), returning its JSON result."""
    import subprocess

    with tempfile.NamedTemporaryFile("r", suffix=".json") as out:
        cmd = [sys.executable, os.path.abspath(__file__), "--task", task, "--backend", backend, "--task-out", out.name,
               "--rom", args.rom, "--state", args.state, "--env-dir", args.env_dir, "--steps", str(args.steps),
               "--repeat", str(args.repeat), "--check-steps", str(args.check_steps),
               "--profile-steps", str(args.profile_steps)]
        if extra is not None:
            cmd += ["--task-arg", str(extra)]
        env = dict(os.environ)
        if args.blas_threads:
            # Numerical libraries' thread pools (numpy's OpenBLAS starts one per process, as
            # many threads as CPUs): the oversubscription check at N processes.
            for var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
                env[var] = str(args.blas_threads)
        subprocess.run(cmd, check=True, cwd=args.env_dir, env=env)  # the env opens its JSON files from the cwd
        return json.load(open(out.name))


def actions(n: int, seed: int = 0):
    return np.random.default_rng(seed).integers(0, 7, size=n)


def task_single(backend, args) -> dict:
    with tempfile.TemporaryDirectory() as session:
        env = make_env(backend, args.env_dir, env_config(args, session), 0)
        acts = actions(args.steps)
        best = None
        for _ in range(args.repeat):
            env.reset(seed=0)
            t0 = time.perf_counter()
            for a in acts:
                env.step(int(a))
            dt = time.perf_counter() - t0
            best = dt if best is None else min(best, dt)
        return {"steps": args.steps, "wall_s": best, "steps_per_s": args.steps / best}


def task_profile(backend, args) -> dict:
    """T_emu: wall time inside the emulator's frame and state calls (``tick``, ``load_state``,
    ``send_input``; PyBoy's compiled methods are invisible to cProfile, so they are timed by
    wrapping them on the env's instance); T_py: the rest of the step (the env's own Python and
    its ``memory``/``screen`` reads). Then a cProfile run of the same steps: its top functions
    by own time (where the env's Python goes)."""
    with tempfile.TemporaryDirectory() as session:
        env = make_env(backend, args.env_dir, env_config(args, session), 0)
        acts = actions(args.profile_steps, 1)
        spent = [0.0]
        pb = env.pyboy
        env.pyboy = _TimedEmulator(pb, spent)
        env.reset(seed=0)
        spent[0] = 0.0
        t0 = time.perf_counter()
        for a in acts:
            env.step(int(a))
        total = time.perf_counter() - t0
        emu = spent[0]
        env.pyboy = pb

        env.reset(seed=0)
        prof = cProfile.Profile()
        prof.enable()
        for a in acts:
            env.step(int(a))
        prof.disable()
        top = sorted(pstats.Stats(prof).stats.items(), key=lambda kv: -kv[1][2])[:20]
        steps = len(acts)
        return {"steps": steps, "wall_s": total, "t_emu_s": emu, "t_py_s": total - emu,
                "t_emu_us_per_step": emu / steps * 1e6, "t_py_us_per_step": (total - emu) / steps * 1e6,
                "cprofile_top_tottime": [{"function": f"{pathlib.Path(k[0]).name}:{k[1]}:{k[2]}", "calls": v[1],
                                          "tottime_s": v[2], "cumtime_s": v[3]} for k, v in top]}


def task_check(backend, args) -> dict:
    """Observations and rewards for --check-steps steps, digested per step."""
    import hashlib

    with tempfile.TemporaryDirectory() as session:
        env = make_env(backend, args.env_dir, env_config(args, session), 0)
        obs, _ = env.reset(seed=0)
        digests = []
        rewards = []
        for a in actions(args.check_steps, 2):
            obs, reward, term, trunc, _ = env.step(int(a))
            h = hashlib.sha256()
            for k in sorted(obs):
                h.update(k.encode())
                h.update(np.ascontiguousarray(obs[k]).tobytes())
            digests.append(h.hexdigest())
            rewards.append(float(reward))
        return {"digests": digests, "rewards": rewards}


def task_vec(backend, args, n) -> dict:
    from stable_baselines3.common.vec_env import SubprocVecEnv

    with tempfile.TemporaryDirectory() as session:
        config = env_config(args, session)
        t0 = time.perf_counter()
        venv = SubprocVecEnv([_env_fn(backend, args.env_dir, config, i) for i in range(n)])
        venv.reset()
        startup = time.perf_counter() - t0
        threads = [len(os.listdir(f"/proc/{p.pid}/task")) for p in venv.processes]
        rss = []
        for p in venv.processes:
            with open(f"/proc/{p.pid}/status") as f:
                rss += [int(line.split()[1]) / 1024 for line in f if line.startswith("VmRSS:")]
        calls = max(1, args.steps // 2)
        acts = np.random.default_rng(3).integers(0, 7, size=(calls, n))
        for a in acts[:5]:
            venv.step(a)
        t0 = time.perf_counter()
        for a in acts:
            venv.step(a)
        dt = time.perf_counter() - t0
        walls = np.array([w[-calls:] for w in venv.get_attr("step_walls")])  # (workers, calls)
        cpus = np.array([c[-calls:] for c in venv.get_attr("step_cpus")])
        emus = np.array([e[-calls:] for e in venv.get_attr("step_emus")])
        venv.close()
        return {"processes": n, "steps": calls * n, "wall_s": dt, "steps_per_s": calls * n / dt, "startup_s": startup,
                "worker_threads": threads, "worker_rss_mib": rss,
                "vec_call_us": dt / calls * 1e6,
                "worker_step_wall_us": float(walls.mean() * 1e6),
                "worker_step_cpu_us": float(cpus.mean() * 1e6),
                "worker_step_emu_us": float(emus.mean() * 1e6),
                "slowest_worker_step_us": float(walls.max(axis=0).mean() * 1e6)}


def run_task(args) -> int:
    if args.task == "single":
        result = task_single(args.backend, args)
    elif args.task == "profile":
        result = task_profile(args.backend, args)
    elif args.task == "check":
        result = task_check(args.backend, args)
    elif args.task == "vec":
        result = task_vec(args.backend, args, int(args.task_arg))
    else:
        raise SystemExit(f"unknown task {args.task}")
    result["process_threads"] = len(os.listdir("/proc/self/task"))
    with open(args.task_out, "w") as f:
        json.dump(result, f)
    return 0


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--rom", required=True, help="Pokemon Red (built from pret/pokered)")
    ap.add_argument("--state", required=True, help="a start state of the env, e.g. its init.state (version 7)")
    ap.add_argument("--env-dir", default=str(DEFAULT_ENV_DIR))
    ap.add_argument("--steps", type=int, default=300, help="env steps per timing (per process for --processes)")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--processes", default="1,16", help="SubprocVecEnv sizes ('' for none)")
    ap.add_argument("--check-steps", type=int, default=500)
    ap.add_argument("--profile-steps", type=int, default=300)
    ap.add_argument("--blas-threads", type=int, default=0,
                    help="set OMP/OPENBLAS/MKL_NUM_THREADS in every process (0: leave as is)")
    ap.add_argument("--ratio", type=float, default=1.6,
                    help="r of the issue's bound: emurust bench's ratio for this game, state and frame pattern "
                         "(README Speed: Pokemon Red's walk, one frame in 24 drawn, sound off)")
    ap.add_argument("--vec-rounds", type=int, default=2,
                    help="SubprocVecEnv timings per backend and size, taking turns (the best is kept)")
    ap.add_argument("--out", default="pokered_v2_env.json")
    ap.add_argument("--task", help=argparse.SUPPRESS)
    ap.add_argument("--backend", help=argparse.SUPPRESS)
    ap.add_argument("--task-out", help=argparse.SUPPRESS)
    ap.add_argument("--task-arg", help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    args.rom, args.state, args.env_dir = (str(pathlib.Path(x).resolve()) for x in (args.rom, args.state, args.env_dir))
    if args.task:
        return run_task(args)

    out = {"machine": {"cpu": platform.processor() or platform.machine(), "cpus": os.cpu_count(),
                       "python": platform.python_version()}, "args": {k: v for k, v in vars(args).items() if not k.startswith("task")}}
    backends = ("emurust", "pyboy")

    # Identity first: a speed of a different run means nothing.
    check = {b: run_isolated(b, "check", args) for b in backends}
    same_obs = check["emurust"]["digests"] == check["pyboy"]["digests"]
    same_rew = check["emurust"]["rewards"] == check["pyboy"]["rewards"]
    first = next((i for i, (x, y) in enumerate(zip(check["emurust"]["digests"], check["pyboy"]["digests"])) if x != y), None)
    out["identity"] = {"steps": args.check_steps, "observations_equal": same_obs, "rewards_equal": same_rew,
                       "first_different_step": first, "total_reward": check["pyboy"]["rewards"][-1] if check["pyboy"]["rewards"] else None}
    print(f"identity over {args.check_steps} steps: observations {'equal' if same_obs else f'DIFFER from step {first}'}, "
          f"rewards {'equal' if same_rew else 'DIFFER'}", flush=True)

    single = {b: [] for b in backends}
    for r in range(2):
        for b in (backends if r % 2 == 0 else backends[::-1]):
            single[b].append(run_isolated(b, "single", args))
    out["single"] = {b: max(single[b], key=lambda x: x["steps_per_s"]) for b in backends}
    e, p = out["single"]["emurust"]["steps_per_s"], out["single"]["pyboy"]["steps_per_s"]
    print(f"1 process (env only): emurust {e:,.1f} steps/s, PyBoy {p:,.1f} ({e / p:.2f}x)", flush=True)

    out["profile"] = {b: run_isolated(b, "profile", args) for b in backends}
    for b in backends:
        pr = out["profile"][b]
        print(f"split {b}: T_emu {pr['t_emu_us_per_step']:,.0f} us/step, T_py {pr['t_py_us_per_step']:,.0f} us/step", flush=True)
    t_py = out["profile"]["pyboy"]["t_py_us_per_step"]
    t_emu = out["profile"]["pyboy"]["t_emu_us_per_step"]
    out["bound"] = {"t_py_us": t_py, "t_emu_pyboy_us": t_emu,
                    "note": "target: emurust step time <= 1.1 x (T_py + T_emu / r), r = emurust bench's ratio for this game"}

    out["subproc"] = []
    for n in [int(x) for x in args.processes.split(",") if x]:
        runs = {b: [] for b in backends}
        for k in range(args.vec_rounds):
            for b in (backends if k % 2 == 0 else backends[::-1]):
                runs[b].append(run_isolated(b, "vec", args, n))
        row = {b: max(runs[b], key=lambda x: x["steps_per_s"]) for b in backends}
        row["all_rounds_steps_per_s"] = {b: [x["steps_per_s"] for x in runs[b]] for b in backends}
        # The bound at n processes, per vector-env call: PyBoy's call time split into its
        # emulation on the critical path (the slowest worker's step, at the workers' mean
        # share of emulation in a step) and the rest (the env's Python, the vector env).
        pb_row = row["pyboy"]
        emu_share = pb_row["worker_step_emu_us"] / pb_row["worker_step_wall_us"]
        emu_crit = pb_row["slowest_worker_step_us"] * emu_share
        bound = 1.1 * (pb_row["vec_call_us"] - emu_crit + emu_crit / args.ratio)
        row["bound"] = {"ratio": args.ratio, "pyboy_emu_share": emu_share, "pyboy_emu_critical_us": emu_crit,
                        "bound_call_us": bound, "emurust_call_us": row["emurust"]["vec_call_us"],
                        "met": row["emurust"]["vec_call_us"] <= bound}
        out["subproc"].append(row)
        e, p = row["emurust"]["steps_per_s"], row["pyboy"]["steps_per_s"]
        print(f"{n} processes (SubprocVecEnv): emurust {e:,.0f} steps/s, PyBoy {p:,.0f} ({e / p:.2f}x); "
              f"threads per worker emurust {row['emurust']['worker_threads'][0]}, PyBoy {row['pyboy']['worker_threads'][0]}; "
              f"RSS per worker emurust {np.mean(row['emurust']['worker_rss_mib']):.0f} MiB, PyBoy {np.mean(row['pyboy']['worker_rss_mib']):.0f} MiB",
              flush=True)
        for b in backends:
            r = row[b]
            print(f"    {b}: per call {r['vec_call_us']:,.0f} us = slowest worker's step {r['slowest_worker_step_us']:,.0f} us "
                  f"(mean step {r['worker_step_wall_us']:,.0f} us wall, {r['worker_step_cpu_us']:,.0f} us CPU) "
                  f"+ {r['vec_call_us'] - r['slowest_worker_step_us']:,.0f} us outside the steps (main process, pipes); "
                  f"emulation {r['worker_step_emu_us']:,.0f} us of the mean step", flush=True)
        bd = row["bound"]
        print(f"    bound: 1.1 x (PyBoy's call - its emulation on the critical path {bd['pyboy_emu_critical_us']:,.0f} us "
              f"x (1 - 1/{args.ratio})) = {bd['bound_call_us']:,.0f} us per call; emurust {bd['emurust_call_us']:,.0f} us: "
              f"{'met' if bd['met'] else 'NOT met'}; rounds emurust {row['all_rounds_steps_per_s']['emurust']}, "
              f"PyBoy {row['all_rounds_steps_per_s']['pyboy']} steps/s", flush=True)
    with open(args.out, "w") as f:
        json.dump(out, f, indent=1)
    print(f"wrote {args.out}")
    return 0 if (same_obs and same_rew) else 1


if __name__ == "__main__":
    sys.exit(main())
