"""PPO training speed of `emurust train` with 1 PyTorch thread (its default) against PyTorch's
own default (one thread per core), measured in the same run, turns alternating.

    python benches/torch_threads.py [--steps 20000] [--envs 16] [--repeat 2] [--json OUT]

Each run is `emurust train --steps N --envs E --torch-threads T` in its own process (Dodge, RAM
features, SB3's MLP policy); the figure is its own "steps/s" line (training only, not the
evaluation). Issue 26 measured 118 steps/s with PyTorch's default and 2,529 with 1 thread on a
2-core machine.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile


def one_run(steps: int, envs: int, torch_threads: int) -> float:
    with tempfile.TemporaryDirectory(prefix="emurust-torch-threads-") as logdir:
        cmd = [sys.executable, "-m", "emurust", "train", "--steps", str(steps), "--envs", str(envs),
               "--torch-threads", str(torch_threads), "--eval-episodes", "2", "--no-progress", "--logdir", logdir]
        out = subprocess.run(cmd, capture_output=True, text=True, check=True).stdout
    m = re.search(r"\(([\d,]+) steps/s", out)
    if m is None:
        raise RuntimeError(f"no steps/s in the output of {' '.join(cmd)}:\n{out}")
    return float(m.group(1).replace(",", ""))


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--steps", type=int, default=20_000, help="training steps per run (default 20000)")
    ap.add_argument("--envs", type=int, default=16, help="emulators (default 16)")
    ap.add_argument("--repeat", type=int, default=2, help="runs per setting, alternating (default 2)")
    ap.add_argument("--json", help="also write the results here")
    a = ap.parse_args()
    settings = {"1 thread (emurust's default)": 1, "PyTorch's default": 0}
    got: dict[str, list[float]] = {k: [] for k in settings}
    for _ in range(a.repeat):
        for name, threads in settings.items():
            got[name].append(one_run(a.steps, a.envs, threads))
            print(f"{name:<30} {got[name][-1]:>8,.0f} steps/s", flush=True)
    summary = {name: statistics.median(v) for name, v in got.items()}
    print(f"\nmedian of {a.repeat}, {a.steps:,} steps, {a.envs} emulators, {os.cpu_count()} CPUs:")
    for name, v in summary.items():
        print(f"  {name:<30} {v:>8,.0f} steps/s")
    if a.json:
        with open(a.json, "w") as f:
            json.dump({"steps": a.steps, "envs": a.envs, "cpus": os.cpu_count(), "runs": got, "median": summary}, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
