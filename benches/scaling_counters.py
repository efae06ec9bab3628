"""Steps/s of one emurust Batch for a fixed time: the unit of `benches/scaling_counters.sh`.

    python benches/scaling_counters.py --envs 256 --threads 16 --seconds 8

Dodge, frame skip 24, grey observations, random actions (as `rl_throughput.py --parts
scaling`). Prints one JSON line: envs, threads, calls, seconds, steps_per_s, and the process's
CPU time, voluntary and involuntary context switches (getrusage).
"""

from __future__ import annotations

import argparse
import json
import resource
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from rl_throughput import make_raw_batch, time_raw_batch  # noqa: E402


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--envs", type=int, default=16)
    p.add_argument("--threads", type=int, default=1)
    p.add_argument("--seconds", type=float, default=8.0)
    p.add_argument("--seed", type=int, default=0)
    a = p.parse_args()
    batch = make_raw_batch(a.envs, a.threads)
    r0 = resource.getrusage(resource.RUSAGE_SELF)
    t0 = time.process_time()
    r = time_raw_batch(batch, a.seconds, a.seed)
    r1 = resource.getrusage(resource.RUSAGE_SELF)
    r.update(
        cpu_s=time.process_time() - t0,
        voluntary_switches=r1.ru_nvcsw - r0.ru_nvcsw,
        involuntary_switches=r1.ru_nivcsw - r0.ru_nivcsw,
    )
    print(json.dumps(r), flush=True)


if __name__ == "__main__":
    main()
