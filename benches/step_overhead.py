"""Per-call cost of stepping a batch in parallel: the gang (default) against Rayon's own
scheduling (``scheduler="rayon"``, the path before), in one run on one machine.

    python benches/step_overhead.py [--parts pong,pong_procs,gb,redv2] [--threads 1,2,4,8,16]
        [--pong-envs 16,64,256,1024,4096] [--gb-envs 16,64,256] [--redv2-envs 16,64,256]
        [--rom pokered.gb --v2-dir PokemonRedExperiments-v2] [--out step_overhead.json]

Parts:
  pong        PongBatch.step, one Python call per step, for each batch size, thread count and
              scheduler: microseconds per call (the median call, each timed alone; also the
              mean wall time per loop iteration, gap included, and the 90th percentile), the process's CPU time per call (what spinning threads
              burn), and the overhead: the median call minus the work per thread (the 1-thread
              median / threads); --gap-us leaves busy time between calls, as a policy
              would (the gang's threads then spin at most EMURUST_SPIN_US). Also run_steps
              (each thread its block through all the steps, no per-step join) for the largest
              size: the engine's own scaling.
  pong_procs  the ceiling without any sharing: as many processes as the largest thread count,
              each one PongBatch of (largest size / processes) games on one thread (run_steps),
              started together; their summed steps/s against one process on one thread.
  gb          the Game Boy Batch (Dodge, frame skip 24, grey observations; rl_throughput.py's
              scaling task) at --gb-envs on 1 and the largest thread count, both schedulers.
  redv2       RedV2Batch (Pokémon Red, v2's config) at --redv2-envs, both schedulers, and
              RedV2AsyncPool (batches of 3/4 of the envs); against one thread. Plus the "join
              bound": 16 environments stepped one by one and timed; the mean step over the mean
              of the slowest of each step's 16 is what one join per step can reach at 16 envs on
              16 threads, whatever the scheduler (needs --rom and --v2-dir).
Timings compare within one run only (same machine, same load).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
SCHEDULERS = ("rayon", "gang")


def _cpu_info() -> dict:
    info = {"cpus": os.cpu_count(), "python": platform.python_version(), "machine": platform.machine()}
    try:
        info["usable_cpus"] = len(os.sched_getaffinity(0))
        info["loadavg"] = os.getloadavg()
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                info["cpu_model"] = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    for k in ("EMURUST_SPIN_US", "EMURUST_PIN_THREADS", "EMURUST_SLOW_FIRST"):
        if k in os.environ:
            info[k] = os.environ[k]
    return info


# ---------------------------------------------------------------------------- Pong


def _pong_buffers(n: int):
    return (np.zeros((n, 8), np.float32), np.zeros(n, np.float32), np.zeros(n, bool), np.zeros(n, bool),
            np.zeros((n, 8), np.float32))


def pong_call_us(n: int, threads: int, scheduler: str, calls: int, repeat: int, gap_us: float = 0.0) -> dict:
    """One PongBatch.step call: the median of every call timed alone (robust to the OS taking
    the CPU now and then, as on a shared machine), the mean (throughput), the 90th percentile,
    and the process's CPU time per call (what spinning threads burn)."""
    from emurust import _core

    b = _core.PongBatch(n, num_threads=threads, scheduler=scheduler)
    b.seed(list(range(n)))
    obs, rew, term, trunc, fin = _pong_buffers(n)
    b.reset(obs)
    acts = np.random.default_rng(0).integers(0, 3, (64, n))
    for t in range(max(50, calls // 10)):  # warm-up: caches, the threads' first launch
        b.step(acts[t % 64], obs, rew, term, trunc, fin)
    each = np.zeros(calls * repeat)
    clock = time.perf_counter_ns
    gap_ns = int(gap_us * 1e3)
    t0, c0 = time.perf_counter(), time.process_time()
    for t in range(calls * repeat):
        a = acts[t % 64]
        s = clock()
        b.step(a, obs, rew, term, trunc, fin)
        e = clock()
        each[t] = e - s
        while gap_ns and clock() - e < gap_ns:  # the policy's time between steps, busy
            pass
    wall, cpu = time.perf_counter() - t0, time.process_time() - c0
    each /= 1e3
    return {"envs": n, "threads": threads, "scheduler": scheduler, "gap_us": gap_us, "us_per_call": float(np.median(each)),
            "mean_us_per_call": wall / (calls * repeat) * 1e6, "p90_us_per_call": float(np.percentile(each, 90)),
            "cpu_us_per_call": cpu / (calls * repeat) * 1e6}


#: Rows of run_steps' cycled action table (--pong-action-rows).
ACTION_ROWS = 256


def pong_run_steps_sps(n: int, threads: int, scheduler: str, steps: int, repeat: int) -> float:
    from emurust import _core

    b = _core.PongBatch(n, num_threads=threads, scheduler=scheduler)
    b.seed(list(range(n)))
    b.reset(np.zeros((n, 8), np.float32))
    acts = np.random.default_rng(1).integers(0, 3, (ACTION_ROWS, n)).astype(np.int32)
    # At least ~1 s per timing, as the independent processes run (a 2,000-step timing of 4,096
    # games is ~16 ms on 16 threads: the threads' wake-up and the last chunk's tail).
    t = time.perf_counter()
    b.run_steps(acts, steps)
    steps = max(steps, int(steps / max(time.perf_counter() - t, 1e-6)))
    b.run_steps(acts, steps)
    times = []
    for _ in range(repeat):
        t = time.perf_counter()
        b.run_steps(acts, steps)
        times.append(time.perf_counter() - t)
    return n * steps / statistics.median(times)


def part_pong(a) -> dict:
    rows = []
    for n in a.pong_envs:
        calls = max(200, min(4000, int(4e5 / n)))
        one = pong_call_us(n, 1, "gang", calls, a.repeat, a.gap_us)  # 1 thread: both schedulers run serially
        one["scheduler"] = "serial"
        rows.append(one)
        print(f"pong {n:5d} games, 1 thread: {one['us_per_call']:8.2f} us/call (work per call)", flush=True)
        for t in a.threads:
            if t == 1:
                continue
            for s in SCHEDULERS:
                r = pong_call_us(n, t, s, calls, a.repeat, a.gap_us)
                r["work_per_thread_us"] = one["us_per_call"] / t
                r["overhead_us"] = r["us_per_call"] - r["work_per_thread_us"]
                r["speedup"] = one["us_per_call"] / r["us_per_call"]
                rows.append(r)
                print(f"pong {n:5d} games, {t:2d} threads, {s:5s}: {r['us_per_call']:8.2f} us/call "
                      f"(work/thread {r['work_per_thread_us']:7.2f}, overhead {r['overhead_us']:7.2f} us), "
                      f"x{r['speedup']:.2f}; mean/iteration {r['mean_us_per_call']:8.2f}, p90 {r['p90_us_per_call']:8.2f}, "
                      f"CPU {r['cpu_us_per_call']:8.2f} us/call", flush=True)
    n = max(a.pong_envs)
    run = []
    base = pong_run_steps_sps(n, 1, "gang", a.run_steps, a.repeat)
    run.append({"envs": n, "threads": 1, "scheduler": "serial", "sps": base, "speedup": 1.0})
    print(f"pong run_steps {n} games, 1 thread: {base / 1e6:.1f} M steps/s", flush=True)
    for t in a.threads:
        if t == 1:
            continue
        for s in SCHEDULERS:
            sps = pong_run_steps_sps(n, t, s, a.run_steps, a.repeat)
            run.append({"envs": n, "threads": t, "scheduler": s, "sps": sps, "speedup": sps / base})
            print(f"pong run_steps {n} games, {t:2d} threads, {s:5s}: {sps / 1e6:.1f} M steps/s (x{sps / base:.2f})",
                  flush=True)
    return {"step": rows, "run_steps": run}


def _procs(count: int, n: int, seconds: float) -> float:
    """Summed steps/s of `count` one-thread processes of `n` games each (pong_speed.py's)."""
    from pong_speed import _processes

    return _processes("emurust", count, n, seconds, ACTION_ROWS)


def part_pong_procs(a) -> dict:
    n, t = max(a.pong_envs), max(a.threads)
    one = _procs(1, n, a.seconds)
    many = _procs(t, n // t, a.seconds)
    res = {"envs": n, "processes": t, "one_process_sps": one, "processes_sps": many, "speedup": many / one}
    print(f"pong, independent processes: 1 x {n} games {one / 1e6:.1f} M steps/s; {t} x {n // t} games "
          f"{many / 1e6:.1f} M steps/s: x{many / one:.2f} (the ceiling of one batch on {t} threads)", flush=True)
    return res


# ---------------------------------------------------------------------------- Game Boy batch


def _rate(step, n: int, seconds: float) -> float:
    step()
    calls, t0 = 0, time.perf_counter()
    while True:
        step()
        calls += 1
        el = time.perf_counter() - t0
        if el >= seconds and calls >= 3:
            return n * calls / el


def part_gb(a) -> dict:
    from emurust import _core
    from emurust.rewards import parse_reward, parse_terminate
    from rl_throughput import FRAME_SKIP, NOOP_MAX, RESET_SCRIPT, emurust_kwargs

    def make(n: int, threads: int, scheduler: str):
        kw = emurust_kwargs(threads, 1000, "grey")
        return _core.Batch(kw["rom"], n, actions=kw["actions"], frame_skip=FRAME_SKIP, press_frames=FRAME_SKIP,
                           obs=["grey"], reward=parse_reward(kw["reward"]), terminate=parse_terminate(kw["terminate"]),
                           max_episode_steps=1000, noop_max=NOOP_MAX, reset_script=RESET_SCRIPT, num_threads=threads,
                           scheduler=scheduler)

    def rate(b) -> float:
        n = b.num_envs
        b.seed(0)
        b.reset()
        buf = b.buffers
        acts = np.random.default_rng(0).integers(0, b.num_actions, (256, n))
        k = [0]

        def step():
            done = buf["terminated"] | buf["truncated"]
            b.step(acts[k[0] % 256], done if done.any() else None)
            k[0] += 1

        return _rate(step, n, a.seconds)

    t = max(a.threads)
    rows = []
    for n in a.gb_envs:
        one = rate(make(n, 1, "gang"))
        rows.append({"envs": n, "threads": 1, "scheduler": "serial", "sps": one, "efficiency": 1.0})
        print(f"gb {n:4d} envs,  1 thread: {one:8.0f} steps/s", flush=True)
        for s in SCHEDULERS:
            r = rate(make(n, t, s))
            rows.append({"envs": n, "threads": t, "scheduler": s, "sps": r, "efficiency": r / (t * one)})
            print(f"gb {n:4d} envs, {t:2d} threads, {s:5s}: {r:8.0f} steps/s ({r / (t * one):.0%} of {t} x 1 thread)",
                  flush=True)
    return {"rows": rows}


# ---------------------------------------------------------------------------- Pokémon Red v2


def part_redv2(a) -> dict:
    if not a.rom or not a.v2_dir:
        print("redv2: skipped (needs --rom and --v2-dir)", flush=True)
        return {"skipped": "no --rom/--v2-dir"}
    from emurust import pokered_v2

    cfg = {"headless": True, "save_final_state": False, "early_stop": False, "action_freq": 24,
           "init_state": str(a.state or Path(a.v2_dir) / "init.state"), "max_steps": 2048 * 80,
           "print_rewards": False, "save_video": False, "fast_video": True, "session_path": Path("/tmp/redv2-session"),
           "gb_path": str(a.rom), "debug": False, "reward_scale": 0.5, "explore_weight": 0.25,
           "map_data_path": str(Path(a.v2_dir) / "map_data.json"),
           "events_path": str(Path(a.v2_dir) / "events.json")}  # fmt: skip
    rng = np.random.default_rng(0)
    t = max(a.threads)

    def sync_rate(n: int, threads: int, scheduler: str) -> float:
        b = pokered_v2.RedV2Batch(cfg, n, num_threads=threads, scheduler=scheduler)
        b.reset()
        return _rate(lambda: b.step(rng.integers(0, 7, n)), n, a.seconds)

    def async_rate(n: int, threads: int) -> float:
        k = max(1, 3 * n // 4)
        pool = pokered_v2.RedV2AsyncPool(cfg, n, batch_size=k, num_threads=threads)
        pool.async_reset()
        ids = pool.recv(k)[3]

        def step():
            nonlocal ids
            pool.send(rng.integers(0, 7, len(ids)), ids)
            ids = pool.recv(k)[3]

        return _rate(step, k, a.seconds)

    # The join bound: 16 environments stepped one after the other, each timed.
    m = 16
    singles = [pokered_v2.RedV2Batch(cfg, 1, num_threads=1) for _ in range(m)]
    for s in singles:
        s.reset()
    durations = []
    t_end = time.perf_counter() + a.seconds
    while time.perf_counter() < t_end:
        row = []
        for s in singles:
            t0 = time.perf_counter()
            s.step(rng.integers(0, 7, 1))
            row.append(time.perf_counter() - t0)
        durations.append(row)
    d = np.array(durations)
    bound = float(d.mean() / d.max(axis=1).mean())
    one = m / float(d.sum(axis=1).mean())  # steps/s of one thread over 16 envs
    # Is an env's last step time a predictor of its next (would stepping the predicted-slow
    # ones first shorten the tail at 64-256 envs)? The lag-1 correlation of each env's series.
    lag1 = float(np.corrcoef(d[1:].ravel(), d[:-1].ravel())[0, 1]) if len(d) > 2 else float("nan")
    res: dict = {"join_bound_16": bound, "one_thread_sps": one, "step_ms_mean": float(d.mean() * 1e3),
                 "step_ms_p99": float(np.percentile(d, 99) * 1e3), "step_time_lag1_corr": lag1,
                 "steps_timed": len(d), "rows": []}
    print(f"redv2: one env step {d.mean() * 1e3:.2f} ms mean, {np.percentile(d, 99) * 1e3:.2f} ms p99 "
          f"(lag-1 correlation {lag1:.2f}); one thread {one:.0f} steps/s; a join per step at 16 envs on 16 threads "
          f"reaches at most {bound:.0%} (mean step / mean slowest of 16)", flush=True)
    for n in a.redv2_envs:
        for s in SCHEDULERS:
            r = sync_rate(n, t, s)
            res["rows"].append({"envs": n, "threads": t, "scheduler": s, "sps": r, "efficiency": r / (t * one)})
            print(f"redv2 RedV2Batch {n:4d} envs, {t:2d} threads, {s:5s}: {r:7.0f} steps/s "
                  f"({r / (t * one):.0%} of {t} x 1 thread)", flush=True)
        r = async_rate(n, t)
        res["rows"].append({"envs": n, "threads": t, "scheduler": "async_pool", "sps": r, "efficiency": r / (t * one)})
        print(f"redv2 RedV2AsyncPool {n:4d} envs, batches of {max(1, 3 * n // 4)}: {r:7.0f} steps/s "
              f"({r / (t * one):.0%} of {t} x 1 thread)", flush=True)
    return res


def main() -> None:
    global ACTION_ROWS
    ints = lambda s: [int(x) for x in s.split(",")]  # noqa: E731
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--parts", default="pong,pong_procs,gb")
    ap.add_argument("--threads", type=ints, default=[1, 2, 4, 8, 16])
    ap.add_argument("--pong-envs", type=ints, default=[16, 64, 256, 1024, 4096])
    ap.add_argument("--gb-envs", type=ints, default=[16, 64, 256])
    ap.add_argument("--redv2-envs", type=ints, default=[16, 64, 256])
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--run-steps", type=int, default=2000, help="steps of one run_steps timing")
    ap.add_argument("--pong-action-rows", type=int, default=256,
                    help="rows of run_steps' cycled action table (256 x 4,096 games is 4 MiB, in L3; "
                         "each of 16 processes' 256 x 256 fits its L2)")
    ap.add_argument("--gap-us", type=float, default=0.0,
                    help="pong: busy time between calls (a policy's), which sets how long the gang's threads spin")
    ap.add_argument("--seconds", type=float, default=3.0, help="per timed rate (gb, redv2, processes)")
    ap.add_argument("--rom", default=None)
    ap.add_argument("--v2-dir", default=None)
    ap.add_argument("--state", default=None)
    ap.add_argument("--out", default=None)
    a = ap.parse_args()
    ACTION_ROWS = a.pong_action_rows
    out: dict = {"machine": _cpu_info(), "args": {k: v for k, v in vars(a).items()}}
    for part in a.parts.split(","):
        out[part] = {"pong": part_pong, "pong_procs": part_pong_procs, "gb": part_gb, "redv2": part_redv2}[part](a)
    if a.out:
        Path(a.out).write_text(json.dumps(out, indent=1, default=str))


if __name__ == "__main__":
    main()
