"""Pong speed: emurust's Pong against PufferLib's C reference (pong.h), in one run.

1. one core: a batch of --games games stepped --steps times with actions from a cached table
   (as the reference's own test_performance), emurust (`PongBatch.run_steps`, 1 thread, and one
   Python call per step) against the C reference's loop (`oracle_run_steps`: the same step()
   over the same games, built with -O3);
2. scaling: the same batch (4,096 games) on 1..16 threads, in --rounds rounds taking the thread
   counts in turn (speedups are medians of each round's ratio), two ways: `run_steps` (each thread
   runs its block of games through all the steps: games are independent, so no per-step
   synchronisation; the engine's throughput) and one Python call per step (`step`, outputs
   into NumPy arrays, all threads joined every step: the RL loop's path);
3. SB3 PPO end to end (MlpPolicy, same hyperparameters): emurust's PongVecEnv against the
   reference wrapped as a Python gymnasium.Env around one game in SB3's SubprocVecEnv (the
   paper's slow baseline), --ppo-envs environments, --ppo-steps steps each;
4. ceiling (not in the default parts): what the machine gives any program on all its cores
   against one, in --rounds rounds seconds apart. Each round times, back to back: emurust's
   batch on one thread and on --ceiling-procs threads (run_steps), --ceiling-procs independent
   emurust processes of games/procs games each (nothing shared: the best any batch can do), and
   the C reference in one process and in --ceiling-procs independent processes. Each round's
   ratios are taken against its own single-process timings, so they show whether the machine
   lets any program reach a given multiple of one core while that core runs at its
   single-core turbo.

The reference is read from EMURUST_REFERENCES/puffer-pong (needs gcc). Usage:

    python benches/pong_speed.py [--parts core,scaling,ppo] [--threads 1,2,4,8,16] [--out pong.json]
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
import time

import numpy as np


def _time(fn, repeat: int) -> float:
    """Median seconds of `repeat` calls (after one warm-up)."""
    fn()
    times = []
    for _ in range(repeat):
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
    return statistics.median(times)


def one_core(games: int, steps: int, repeat: int) -> dict:
    from emurust import _core
    from emurust.verify.pong_oracle import BENCH_CFLAGS, OracleBatch

    acts = np.random.default_rng(0).integers(0, 3, (1024, games)).astype(np.int32)
    ours = _core.PongBatch(games, num_threads=1)
    ours.seed(list(range(games)))
    ours.reset(np.zeros((games, 8), np.float32))
    ref = OracleBatch(list(range(games)), cflags=BENCH_CFLAGS)
    ref.reset()
    t_ours = _time(lambda: ours.run_steps(acts, steps), repeat)
    t_ref = _time(lambda: ref.run_steps(acts, steps), repeat)
    t_call = _time(lambda: _python_loop(ours, acts.astype(np.int64), steps), repeat)
    n = games * steps
    res = {"games": games, "steps": steps, "emurust_sps": n / t_ours, "reference_c_sps": n / t_ref,
           "emurust_python_call_per_step_sps": n / t_call, "ratio": t_ref / t_ours}
    print(f"one core, {games} games x {steps} steps: emurust {res['emurust_sps'] / 1e6:.1f} M steps/s "
          f"(one Python call per step: {res['emurust_python_call_per_step_sps'] / 1e6:.1f} M), "
          f"C reference {res['reference_c_sps'] / 1e6:.1f} M steps/s: emurust / C = {res['ratio']:.2f}")
    return res


def _python_loop(batch, acts: np.ndarray, steps: int) -> None:
    n = batch.num_envs
    obs, fin = np.zeros((n, 8), np.float32), np.zeros((n, 8), np.float32)
    rew, term, trunc = np.zeros(n, np.float32), np.zeros(n, bool), np.zeros(n, bool)
    for t in range(steps):
        batch.step(acts[t % len(acts)], obs, rew, term, trunc, fin)


def _steps_for(run, steps: int, min_seconds: float) -> int:
    """The step count (at least `steps`) for which `run(steps)` lasts about `min_seconds`."""
    t = time.perf_counter()
    run(steps)
    took = time.perf_counter() - t
    return max(steps, int(steps * min_seconds / max(took, 1e-6)))


def scaling(games: int, steps: int, threads: list[int], rounds: int, min_seconds: float = 1.0) -> dict:
    """The batch on each thread count, timed in `rounds` rounds that take the thread counts in
    turn: the single-core figure moves with the machine's turbo state (on the device 29-47 M
    steps/s within one call, lower right after all-core load), so each round's speedup divides
    timings taken seconds apart, and the result is the median over rounds."""
    from emurust import _core

    acts = np.random.default_rng(1).integers(0, 3, (256, games)).astype(np.int32)
    acts64 = acts.astype(np.int64)
    batches, run_steps = {}, {}
    for t in threads:
        b = _core.PongBatch(games, num_threads=t)
        b.seed(list(range(games)))
        b.reset(np.zeros((games, 8), np.float32))
        batches[t] = b
        # run_steps timed over at least --min-seconds: a short timing (4,096 games x 2,000
        # steps is ~16 ms on 16 threads) measures the threads' wake-up and the last chunk's
        # tail, not the throughput the independent processes' ceiling is measured at.
        run_steps[t] = _steps_for(lambda k, b=b: b.run_steps(acts, k), steps, min_seconds)
    sps: dict[int, list[float]] = {t: [] for t in threads}
    call_sps: dict[int, list[float]] = {t: [] for t in threads}
    for _ in range(rounds):
        for t in threads:
            b = batches[t]
            sps[t].append(games * run_steps[t] / _time(lambda b=b, t=t: b.run_steps(acts, run_steps[t]), 1))
            call_sps[t].append(games * steps / _time(lambda b=b: _python_loop(b, acts64, steps), 1))
    base = threads[0]
    rows = []
    for t in threads:
        per_round = [x / y for x, y in zip(sps[t], sps[base])]
        per_round_call = [x / y for x, y in zip(call_sps[t], call_sps[base])]
        rows.append({"threads": t, "sps": statistics.median(sps[t]), "sps_rounds": sps[t],
                     "run_steps_steps": run_steps[t], "speedup": statistics.median(per_round),
                     "speedup_rounds": per_round,
                     "python_call_per_step_sps": statistics.median(call_sps[t]),
                     "python_call_per_step_sps_rounds": call_sps[t],
                     "python_call_per_step_speedup": statistics.median(per_round_call)})
        r = rows[-1]
        print(f"{games} games, {t:>2} threads: {r['sps'] / 1e6:7.1f} M steps/s (rounds "
              f"{', '.join(f'{x / 1e6:.1f}' for x in sps[t])}); x{r['speedup']:.1f} of {base} thread(s) "
              f"(rounds {', '.join(f'{x:.1f}' for x in per_round)}); one Python call per step: "
              f"{r['python_call_per_step_sps'] / 1e6:.1f} M steps/s (x{r['python_call_per_step_speedup']:.1f})")
    return {"games": games, "steps": steps, "rounds": rounds, "rows": rows}


def _ceiling_child(engine: str, games: int, seconds: float, action_rows: int = 256) -> None:
    """One process, one thread: `games` games stepped with run_steps for about `seconds` after
    the parent's go; prints steps/s as JSON."""
    acts = np.random.default_rng(1).integers(0, 3, (action_rows, games)).astype(np.int32)
    if engine == "emurust":
        from emurust import _core

        b = _core.PongBatch(games, num_threads=1)
        b.seed(list(range(games)))
        b.reset(np.zeros((games, 8), np.float32))
    else:
        from emurust.verify.pong_oracle import BENCH_CFLAGS, OracleBatch

        b = OracleBatch(list(range(games)), cflags=BENCH_CFLAGS)
        b.reset()
    steps = max(1, int(2e6 / games))
    b.run_steps(acts, steps)
    print("READY", flush=True)
    sys.stdin.readline()
    done, t0 = 0, time.perf_counter()
    while time.perf_counter() - t0 < seconds:
        b.run_steps(acts, steps)
        done += steps
    print(json.dumps({"sps": games * done / (time.perf_counter() - t0)}), flush=True)


def _processes(engine: str, count: int, games: int, seconds: float, action_rows: int = 256) -> float:
    """Summed steps/s of `count` independent one-thread processes started together (also
    step_overhead.py's pong_procs part)."""
    cmd = [sys.executable, __file__, "--ceiling-child", engine, str(games), str(seconds), str(action_rows)]
    ps = [subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True) for _ in range(count)]
    try:
        for p in ps:
            line = p.stdout.readline().strip()
            if line != "READY":
                raise RuntimeError(f"a {engine} child process did not start: {line!r}")
        for p in ps:
            p.stdin.write("go\n")
            p.stdin.flush()
        return sum(json.loads(p.communicate(timeout=seconds * 10 + 60)[0].strip().splitlines()[-1])["sps"]
                   for p in ps)
    finally:
        for p in ps:
            if p.poll() is None:
                p.kill()


def ceiling(games: int, procs: int, rounds: int, seconds: float) -> dict:
    """See the module's docstring, part 4."""
    from emurust import _core

    acts = np.random.default_rng(1).integers(0, 3, (256, games)).astype(np.int32)
    batch = {}
    for t in (1, procs):
        b = _core.PongBatch(games, num_threads=t)
        b.seed(list(range(games)))
        b.reset(np.zeros((games, 8), np.float32))
        # Calibrated from 2,000 steps, as `scaling` does: a call of 100 steps is mostly the
        # call's own set-up (the action table's copy, the first round's wake-up), and the step
        # count it gives times the 16-thread batch over ~0.2 s instead of `seconds`.
        batch[t] = (b, _steps_for(lambda k, b=b: b.run_steps(acts, k), 2000, seconds))
    names = ("emurust_1_thread", f"emurust_{procs}_threads", f"emurust_{procs}_processes",
             "reference_1_process", f"reference_{procs}_processes")
    sps: dict[str, list[float]] = {n: [] for n in names}
    for r in range(rounds):
        for t, name in ((1, names[0]), (procs, names[1])):
            b, k = batch[t]
            sps[name].append(games * k / _time(lambda b=b, k=k: b.run_steps(acts, k), 1))
        sps[names[2]].append(_processes("emurust", procs, games // procs, seconds))
        sps[names[3]].append(_processes("reference", 1, games, seconds))
        sps[names[4]].append(_processes("reference", procs, games // procs, seconds))
        print(f"round {r + 1}: " + ", ".join(f"{n} {sps[n][-1] / 1e6:.1f} M" for n in names), flush=True)
    ratios = {
        f"emurust_batch_{procs}_threads_over_1_thread": [x / y for x, y in zip(sps[names[1]], sps[names[0]])],
        f"emurust_{procs}_processes_over_1_thread": [x / y for x, y in zip(sps[names[2]], sps[names[0]])],
        f"reference_{procs}_processes_over_1_process": [x / y for x, y in zip(sps[names[4]], sps[names[3]])],
    }
    for n, v in ratios.items():
        print(f"{n}: median x{statistics.median(v):.1f} (rounds {', '.join(f'{x:.1f}' for x in v)})", flush=True)
    return {"games": games, "processes": procs, "rounds": rounds, "seconds": seconds, "steps_per_s": sps,
            "ratios": ratios, "ratio_medians": {n: statistics.median(v) for n, v in ratios.items()}}


def _ppo(venv, steps: int, device: str) -> float:
    import torch
    from stable_baselines3 import PPO
    from stable_baselines3.common.logger import Logger

    torch.manual_seed(0)
    model = PPO("MlpPolicy", venv, n_steps=128, batch_size=512, n_epochs=4, learning_rate=1e-3, gamma=0.95,
                gae_lambda=0.9, ent_coef=0.01, seed=0, verbose=0, device=device)
    model.set_logger(Logger(folder=None, output_formats=[]))
    model.learn(total_timesteps=venv.num_envs * 128)  # warm-up: one rollout and update
    t = time.perf_counter()
    model.learn(total_timesteps=steps, reset_num_timesteps=True)
    return steps / (time.perf_counter() - t)


def _reference_env(seed: int):
    from emurust.verify.pong_oracle import reference_env_class

    return reference_env_class()(seed=seed)


def ppo(envs: int, steps: int, device: str) -> dict:
    from functools import partial

    from stable_baselines3.common.vec_env import SubprocVecEnv

    from emurust.sb3 import PongVecEnv

    ours = PongVecEnv(envs)
    sps_ours = _ppo(ours, steps, device)
    ours.close()
    ref = SubprocVecEnv([partial(_reference_env, 1 + i) for i in range(envs)])
    sps_ref = _ppo(ref, steps, device)
    ref.close()
    res = {"envs": envs, "steps": steps, "device": device, "emurust_sps": sps_ours, "reference_subproc_sps": sps_ref,
           "ratio": sps_ours / sps_ref}
    print(f"SB3 PPO, {envs} envs, {steps} steps ({device}): emurust PongVecEnv {sps_ours:,.0f} steps/s, "
          f"reference gymnasium.Env in SubprocVecEnv {sps_ref:,.0f} steps/s: x{res['ratio']:.1f}")
    return res


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--parts", default="core,scaling,ppo")
    ap.add_argument("--games", type=int, default=4096)
    ap.add_argument("--steps", type=int, default=2000, help="steps of the batch per timing")
    ap.add_argument("--min-seconds", type=float, default=1.0,
                    help="scaling: each run_steps timing lasts at least this long (more steps)")
    ap.add_argument("--threads", default="1,2,4,8,16")
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--rounds", type=int, default=5, help="scaling: rounds taking the thread counts in turn")
    ap.add_argument("--ppo-envs", type=int, default=16)
    ap.add_argument("--ppo-steps", type=int, default=32_768)
    ap.add_argument("--device", default="cpu", help="torch device of the PPO part")
    ap.add_argument("--ceiling-procs", type=int, default=16)
    ap.add_argument("--ceiling-seconds", type=float, default=1.5)
    ap.add_argument("--out", default=None)
    if sys.argv[1:2] == ["--ceiling-child"]:
        _ceiling_child(sys.argv[2], int(sys.argv[3]), float(sys.argv[4]), int(sys.argv[5]))
        return
    args = ap.parse_args()
    parts = args.parts.split(",")
    out: dict = {"machine": {"cpus": os.cpu_count(), "python": platform.python_version(), "processor": platform.processor()}}
    if "core" in parts:
        out["one_core"] = one_core(args.games, args.steps, args.repeat)
    if "scaling" in parts:
        out["scaling"] = scaling(args.games, args.steps, [int(t) for t in args.threads.split(",")], args.rounds,
                                 args.min_seconds)
    if "ceiling" in parts:
        out["ceiling"] = ceiling(args.games, args.ceiling_procs, args.rounds, args.ceiling_seconds)
    if "ppo" in parts:
        out["ppo"] = ppo(args.ppo_envs, args.ppo_steps, args.device)
    if args.out:
        with open(args.out, "w") as f:
            json.dump(out, f, indent=1)


if __name__ == "__main__":
    main()
