"""RLlib PPO training throughput: emurust batches against PyBoy 2.8.1 environments, same task,
same PPO settings, same CPUs.

    python benches/rllib_throughput.py [--engines emurust,pyboy] [--emurust-configs 4x64x4,2x128x8]
        [--pyboy-configs 16x16] [--iterations 5] [--batch 8192] [--minibatch 1024] [--epochs 4]
        [--num-cpus 16] [--learner-device auto] [--budget-s 420] [--out rllib_throughput.json]
    python benches/rllib_throughput.py --quick        # tiny sizes, CPU learner (a smoke test)

Task (both engines): benches/rl_throughput.py's Dodge task (8 actions held for the whole step,
frame skip 24, reward = score difference, terminated at game over, truncated after 2,000 steps,
each reset = power-on, 0-30 seeded idle frames, START) with the 72x80 ``grey_half`` observation:
emurust's own (the grey screen averaged over 2x2 blocks, rounded), PyBoy's computed the same way
from its grey screen (:func:`grey_half`, equal to emurust's byte for byte on the same screen).
RLlib gets float32 images in [0, 1], channel-last (emurust.ray's ``_scaled``, both engines).

Engines (new API stack, Ray 2.60):

``emurust``  ``register_rllib_env`` + ``rllib_ppo_config``: each env runner's vector env is one
             emurust batch of M environments stepped on T Rayon threads, the runner declaring T
             CPUs. Configurations ``RxMxT`` (runners x environments x threads).
``pyboy``    one PyBoy (``window="null"``) per environment, vectorised by RLlib in each runner
             (``gym_env_vectorize_mode="sync"``), one CPU per runner. Configurations ``RxM``.

PPO (the same for all): train batch --batch per iteration, minibatch --minibatch, --epochs epochs,
rl_throughput.py's hyperparameters (lr 2.5e-4, gamma 0.99, lambda 0.95, clip 0.1, entropy 0.01,
vf 0.5, grad clip 0.5), conv filters [[16, 8, 4], [32, 4, 2], [32, 3, 1]] + 256 units (as
examples/ray_ppo.py), one local learner (``num_learners=0``) on the GPU (``num_gpus_per_learner=1``)
if CUDA is available (--learner-device auto), else on the CPU; Ray gets --num-cpus CPUs.

Measured per configuration: one warm-up iteration, then --iterations timed ones: environment steps
sampled per wall second (``num_env_steps_sampled_lifetime`` difference / wall time of the
``algo.train()`` calls), and the split of that wall time into sampling (RLlib's
``synchronous_parallel_sample``: the env runners stepping their envs and running the policy),
the learner update and the weight sync, timed here around those calls (RLlib's own ``timers``,
exponential moving averages, are reported too). The JSON is rewritten after every configuration.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import pathlib
import platform
import subprocess
import sys
import time
from typing import Any, Optional

import numpy as np

HERE = pathlib.Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
import rl_throughput as rt  # noqa: E402  (the task both engines share)

MAX_STEPS = 2000
CONV_FILTERS = [[16, 8, 4], [32, 4, 2], [32, 3, 1]]
FCNET_HIDDENS = [256]
PPO_TRAINING = dict(lr=2.5e-4, gamma=0.99, lambda_=0.95, clip_param=0.1, entropy_coeff=0.01, vf_loss_coeff=0.5,
                    grad_clip=0.5)
# Ray workers keep PyTorch from loading Triton, as emurust's tests do (see emurust._triton).
WORKER_ENV = {"worker_process_setup_hook": "emurust._triton.keep_triton_unloaded"}


def grey_half(grey: np.ndarray) -> np.ndarray:
    """(1, 144, 160) or (144, 160) uint8 grey screen -> (1, 72, 80): each 2x2 block's mean,
    rounded half up, as emurust's ``grey_half`` (``(a + b + c + d + 2) // 4``)."""
    g = np.asarray(grey, dtype=np.uint16).reshape(72, 2, 80, 2)
    return ((g.sum(axis=(1, 3)) + 2) >> 2).astype(np.uint8)[None]


def pyboy_grey_half_env(rom: str, seed: int, max_steps: int = MAX_STEPS):
    """rl_throughput.py's PyBoy env with the ``grey_half`` observation (uint8, (1, 72, 80))."""
    from gymnasium import spaces
    from gymnasium.wrappers import TransformObservation

    return TransformObservation(rt.pyboy_env(rom, seed, max_steps), grey_half, spaces.Box(0, 255, (1, 72, 80), np.uint8))


def _parse(configs: str, parts: int) -> list[tuple[int, ...]]:
    out = []
    for c in filter(None, (s.strip() for s in configs.split(","))):
        v = tuple(int(x) for x in c.lower().split("x"))
        if len(v) != parts or min(v) < 1:
            raise SystemExit(f"bad configuration {c!r}: expected {'x'.join('N' * parts)}")
        out.append(v)
    return out


def _versions() -> dict[str, Any]:
    out: dict[str, Any] = {"python": platform.python_version()}
    for name in ("ray", "torch", "numpy", "gymnasium", "pyboy", "emurust", "pyarrow", "pandas", "scipy"):
        try:
            mod = __import__(name)
            out[name] = getattr(mod, "__version__", "?")
        except Exception as e:  # noqa: BLE001 - recorded, not fatal
            out[name] = f"missing ({type(e).__name__})"
    try:
        import torch

        out["cuda"] = torch.version.cuda
        out["gpu"] = torch.cuda.get_device_name(0) if torch.cuda.is_available() else None
    except Exception:  # noqa: BLE001
        pass
    return out


def _git_head() -> Optional[str]:
    try:
        return subprocess.run(["git", "rev-parse", "HEAD"], cwd=HERE, capture_output=True, text=True,
                              timeout=5).stdout.strip() or None
    except (OSError, subprocess.SubprocessError):
        return None


def _register(engine: str) -> str:
    """Registers the engine's env creator with RLlib; returns its name."""
    from emurust.ray import _scaled, register_rllib_env

    if engine == "emurust":
        kw = rt.emurust_kwargs(None, MAX_STEPS, obs="grey_half")
        kw.pop("num_threads")  # rllib_ppo_config passes the runner's threads in env_config
        return register_rllib_env("emurust-rllib-bench", **kw)

    from ray import cloudpickle
    from ray.tune.registry import register_env

    cloudpickle.register_pickle_by_value(rt)  # the env runners have no benches/ on their path
    if __name__ != "__main__":  # imported (a test): this module travels by value too
        cloudpickle.register_pickle_by_value(sys.modules[__name__])
    rom = rt.rom_path()
    made = [0]

    def create(ctx: Any):
        made[0] += 1  # seeds differ per runner and per environment (RLlib reseeds with debugging(seed=))
        seed = 1000 * int(getattr(ctx, "worker_index", 0)) + made[0]
        return _scaled(pyboy_grey_half_env(rom, seed, MAX_STEPS), False)

    register_env("pyboy-rllib-bench", create)
    return "pyboy-rllib-bench"


def _config(engine: str, name: str, runners: int, envs: int, threads: int, a, gpu: bool):
    from emurust.ray import rllib_ppo_config

    config = (
        rllib_ppo_config(name, num_env_runners=runners, envs_per_runner=envs, threads_per_runner=threads)
        .training(train_batch_size_per_learner=a.batch, minibatch_size=a.minibatch, num_epochs=a.epochs,
                  **PPO_TRAINING)
        .rl_module(model_config={"conv_filters": CONV_FILTERS, "fcnet_hiddens": FCNET_HIDDENS})
        .learners(num_learners=0, num_gpus_per_learner=1 if gpu else 0)
        .env_runners(sample_timeout_s=float(a.sample_timeout))
        .debugging(seed=a.seed)
    )
    if engine == "pyboy":  # one PyBoy per environment, vectorised by RLlib in the runner
        config = config.env_runners(gym_env_vectorize_mode="sync").environment(env_config={})
    return config


@contextlib.contextmanager
def _timed_calls(algo, acc: dict[str, float]):
    """Adds the wall time of the three parts of PPO's training_step to ``acc``."""
    import ray.rllib.algorithms.ppo.ppo as ppo_mod

    def wrap(f, key):
        def inner(*args, **kwargs):
            t = time.perf_counter()
            try:
                return f(*args, **kwargs)
            finally:
                acc[key] += time.perf_counter() - t

        return inner

    sample = ppo_mod.synchronous_parallel_sample
    ppo_mod.synchronous_parallel_sample = wrap(sample, "sample_s")
    algo.learner_group.update = wrap(algo.learner_group.update, "learner_s")
    algo.env_runner_group.sync_weights = wrap(algo.env_runner_group.sync_weights, "sync_weights_s")
    try:
        yield
    finally:
        ppo_mod.synchronous_parallel_sample = sample


def _scalars(d: Any, keep) -> dict[str, float]:
    out: dict[str, float] = {}

    def walk(x, prefix):
        if isinstance(x, dict):
            for k, v in x.items():
                walk(v, f"{prefix}/{k}" if prefix else str(k))
        elif isinstance(x, (int, float, np.integer, np.floating)) and not isinstance(x, bool) and keep(prefix):
            out[prefix] = round(float(x), 6)

    walk(d, "")
    return out


def run_config(engine: str, name: str, cfg: tuple[int, ...], a, gpu: bool, deadline: float) -> dict[str, Any]:
    runners, envs = cfg[0], cfg[1]
    threads = cfg[2] if engine == "emurust" else 1
    rec: dict[str, Any] = {"engine": engine, "env_runners": runners, "envs_per_runner": envs,
                           "threads_per_runner": threads, "cpus_declared": runners * threads,
                           "num_envs": runners * envs, "learner": "cuda" if gpu else "cpu"}
    label = f"{engine} {runners}x{envs}" + (f"x{threads}" if engine == "emurust" else "")
    t0 = time.perf_counter()
    algo = _config(engine, name, runners, envs, threads, a, gpu).build_algo()
    rec["build_s"] = round(time.perf_counter() - t0, 2)
    print(f"[{label}] built in {rec['build_s']} s", flush=True)
    try:
        iters = []
        acc = {"sample_s": 0.0, "learner_s": 0.0, "sync_weights_s": 0.0}
        with _timed_calls(algo, acc):
            prev = 0
            for i in range(1 + a.iterations):
                for k in acc:
                    acc[k] = 0.0
                t = time.perf_counter()
                res = algo.train()
                wall = time.perf_counter() - t
                total = int(res["env_runners"]["num_env_steps_sampled_lifetime"])
                it = {"iteration": i, "warmup": i == 0, "wall_s": round(wall, 4), "env_steps": total - prev,
                      **{k: round(v, 4) for k, v in acc.items()},
                      "episode_return_mean": res["env_runners"].get("episode_return_mean")}
                prev = total
                iters.append(it)
                print(f"[{label}] iteration {i}{' (warm-up)' if i == 0 else ''}: {it['env_steps']} steps in "
                      f"{wall:.2f} s ({it['env_steps'] / wall:.0f}/s; sample {acc['sample_s']:.2f} s, learner "
                      f"{acc['learner_s']:.2f} s), return {it['episode_return_mean']}", flush=True)
                if time.perf_counter() > deadline and i >= 1:
                    rec["stopped_early"] = f"time budget: {i} timed iterations"
                    break
        rec["iterations"] = iters
        timed = [x for x in iters if not x["warmup"]]
        if timed:
            wall = sum(x["wall_s"] for x in timed)
            steps = sum(x["env_steps"] for x in timed)
            rec["timed_iterations"] = len(timed)
            rec["env_steps"] = steps
            rec["wall_s"] = round(wall, 3)
            rec["env_steps_per_s"] = round(steps / wall, 1)
            for k in ("sample_s", "learner_s", "sync_weights_s"):
                rec[k] = round(sum(x[k] for x in timed), 3)
            rec["other_s"] = round(wall - rec["sample_s"] - rec["learner_s"] - rec["sync_weights_s"], 3)
            rec["sampling_env_steps_per_s"] = round(steps / rec["sample_s"], 1) if rec["sample_s"] else None
            rec["share_sampling"] = round(rec["sample_s"] / wall, 3)
            rec["share_learner"] = round(rec["learner_s"] / wall, 3)
        # RLlib's own timers (exponential moving averages over the iterations) and the env
        # runners' per-call timers, as of the last iteration.
        rec["rllib_timers"] = _scalars(res.get("timers", {}), lambda k: True)
        rec["rllib_env_runner_timers"] = _scalars(
            res.get("env_runners", {}), lambda k: "timer" in k or k in ("sample", "time_between_sampling"))
        print(f"[{label}] {rec.get('env_steps_per_s')} env steps/s (sampling {rec.get('share_sampling')}, learner "
              f"{rec.get('share_learner')} of the wall time)", flush=True)
    finally:
        algo.stop()
    return rec


def main(argv: Optional[list[str]] = None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--engines", default="emurust,pyboy")
    p.add_argument("--emurust-configs", default="4x64x4,2x128x8", help="RxMxT: runners x envs x threads")
    p.add_argument("--pyboy-configs", default="16x16", help="RxM: runners (1 CPU each) x envs")
    p.add_argument("--iterations", type=int, default=5, help="timed iterations after one warm-up iteration")
    p.add_argument("--batch", type=int, default=8192, help="train_batch_size_per_learner")
    p.add_argument("--minibatch", type=int, default=1024)
    p.add_argument("--epochs", type=int, default=4)
    p.add_argument("--num-cpus", type=int, default=None, help="CPUs given to Ray (default: all)")
    p.add_argument("--learner-device", choices=["auto", "cuda", "cpu"], default="auto")
    p.add_argument("--sample-timeout", type=float, default=120.0)
    p.add_argument("--budget-s", type=float, default=1e9,
                   help="start no configuration after this many seconds; cut a running one to what it has")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--quick", action="store_true", help="tiny sizes: 1x4x1 and 1x4, batch 128, 2 CPUs, CPU learner")
    p.add_argument("--out", default="rllib_throughput.json")
    a = p.parse_args(argv)
    if a.quick:
        a.emurust_configs, a.pyboy_configs = "1x4x1", "1x4"
        a.batch, a.minibatch, a.epochs, a.iterations = 128, 64, 1, 2
        a.num_cpus = a.num_cpus or 2
        a.learner_device = "cpu" if a.learner_device == "auto" else a.learner_device
    t_start = time.perf_counter()
    deadline = t_start + a.budget_s

    from emurust._triton import keep_triton_unloaded

    keep_triton_unloaded()
    import ray
    import torch

    gpu = a.learner_device == "cuda" or (a.learner_device == "auto" and torch.cuda.is_available())
    num_cpus = a.num_cpus or os.cpu_count()
    engines = [e.strip() for e in a.engines.split(",") if e.strip()]
    lists = {e: _parse(a.emurust_configs if e == "emurust" else a.pyboy_configs, 3 if e == "emurust" else 2)
             for e in engines}
    # Interleaved (each engine's first configuration, then the second ...): a time budget that cuts
    # the run still leaves one measurement of every engine.
    plan = [(e, lists[e][i]) for i in range(max(map(len, lists.values()), default=0)) for e in engines
            if i < len(lists[e])]
    out: dict[str, Any] = {
        "benchmark": "rllib_throughput", "git_head": _git_head(), "machine": rt.machine(), "versions": _versions(),
        "argv": sys.argv[1:],
        "settings": {"game": "dodge", "obs": "grey_half (72x80, float32 [0,1] channel-last to RLlib)",
                     "frame_skip": rt.FRAME_SKIP, "actions": rt.ACTIONS, "max_episode_steps": MAX_STEPS,
                     "train_batch_size_per_learner": a.batch, "minibatch_size": a.minibatch, "num_epochs": a.epochs,
                     **{k.rstrip("_"): v for k, v in PPO_TRAINING.items()},
                     "conv_filters": CONV_FILTERS, "fcnet_hiddens": FCNET_HIDDENS, "num_learners": 0,
                     "learner": "cuda" if gpu else "cpu", "ray_num_cpus": num_cpus,
                     "warmup_iterations": 1, "timed_iterations": a.iterations, "seed": a.seed},
        "results": [],
    }
    path = pathlib.Path(a.out)

    def write() -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(out, indent=1, default=str) + "\n")

    ray.init(num_cpus=num_cpus, num_gpus=1 if gpu else 0, include_dashboard=False, logging_level="ERROR",
             log_to_driver=True, runtime_env=WORKER_ENV)
    try:
        names = {e: _register(e) for e in engines}
        for engine, cfg in plan:
            if time.perf_counter() > deadline:
                out["results"].append({"engine": engine, "config": "x".join(map(str, cfg)),
                                       "skipped": "time budget"})
                write()
                continue
            try:
                out["results"].append(run_config(engine, names[engine], cfg, a, gpu, deadline))
            except Exception as e:  # noqa: BLE001 - one failing configuration keeps the others
                import traceback

                traceback.print_exc()
                out["results"].append({"engine": engine, "config": "x".join(map(str, cfg)),
                                       "error": f"{type(e).__name__}: {e}"[:2000]})
            write()
    finally:
        ray.shutdown()
    best = {}
    for r in out["results"]:
        if r.get("env_steps_per_s"):
            best[r["engine"]] = max(best.get(r["engine"], 0), r["env_steps_per_s"])
    out["best_env_steps_per_s"] = best
    if best.get("emurust") and best.get("pyboy"):
        out["ratio_emurust_over_pyboy"] = round(best["emurust"] / best["pyboy"], 2)
    out["total_s"] = round(time.perf_counter() - t_start, 1)
    write()
    print(json.dumps({"best_env_steps_per_s": best, "ratio": out.get("ratio_emurust_over_pyboy")}), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
