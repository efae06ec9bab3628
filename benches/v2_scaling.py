"""How PokemonRedExperiments v2's step rate scales with processes on this machine: N independent
processes (N = 1, 2, 4, 8, 16 by default), each stepping one environment on one thread, for
emurust's RedV2Batch and for v2's RedGymEnv on PyBoy 2.8.1; the aggregate steps/s and the
per-process rate against one process alone. Says whether a shortfall at 16 processes is the
machine's (shared cores, clocks: both engines lose alike) or ours.

    python benches/v2_scaling.py --rom PokemonRed.gb --v2-dir PokemonRedExperiments-v2 \
        [--procs 1,2,4,8,16] [--seconds 5] [--skip-pyboy] [--v2-shims] [--out r.json]
"""

from __future__ import annotations

import argparse
import json
import multiprocessing as mp
import os
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
import pokered_v2_batch as v2b  # noqa: E402


def _pyboy_one(cfg: dict, v2_dir: str, shims: bool, seconds: float, seed: int) -> float:
    env = v2b.make_v2(cfg, v2_dir, swap=False, shims=shims)
    rng = np.random.default_rng(seed)
    return v2b.rate(lambda: env.step(int(rng.integers(0, 7))), 1, seconds, warmup=3)


def pyboy_aggregate(cfg: dict, v2_dir: str, shims: bool, procs: int, seconds: float) -> float:
    """v2 on PyBoy in `procs` independent processes (pokered_v2_batch.independent_aggregate's
    counterpart; each PyBoy env gets its own session folder)."""
    args = [(dict(cfg, instance_id=f"p{i}"), v2_dir, shims, seconds, i) for i in range(procs)]
    with mp.get_context("spawn").Pool(procs) as pool:
        return sum(pool.starmap(_pyboy_one, args))


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--rom", type=Path, required=True)
    p.add_argument("--v2-dir", type=Path, required=True)
    p.add_argument("--procs", default="1,2,4,8,16")
    p.add_argument("--seconds", type=float, default=5.0)
    p.add_argument("--skip-pyboy", action="store_true")
    p.add_argument("--v2-shims", action="store_true")
    p.add_argument("--out", type=Path, default=None)
    a = p.parse_args()
    a.rom, a.v2_dir = a.rom.resolve(), a.v2_dir.resolve()
    a.state = a.v2_dir / "init.state"
    session = Path(tempfile.mkdtemp())
    cfg = v2b.v2_config(a, session)
    counts = [int(x) for x in a.procs.split(",")]
    res: dict = {"cpus": os.cpu_count(), "rows": []}
    for engine in ["emurust"] + ([] if a.skip_pyboy else ["pyboy"]):
        base = None
        for n in counts:
            if engine == "emurust":
                rate = v2b.independent_aggregate(cfg, str(a.v2_dir), n, a.seconds)
            else:
                rate = pyboy_aggregate(cfg, str(a.v2_dir), a.v2_shims, n, a.seconds)
            base = base or rate / n
            row = {"engine": engine, "procs": n, "steps_per_s": round(rate, 1),
                   "per_proc_vs_one": round(rate / n / base, 3)}
            res["rows"].append(row)
            print(json.dumps(row), flush=True)
    if a.out:
        a.out.write_text(json.dumps(res, indent=1))
    return 0


if __name__ == "__main__":
    t = time.time()
    rc = main()
    print(f"done in {time.time() - t:.0f} s")
    sys.exit(rc)
