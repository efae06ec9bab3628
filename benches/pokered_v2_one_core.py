"""PokemonRedExperiments v2 batched (`RedV2Batch`) on one thread: env steps/s from v2's start state
with seeded random actions, printed as one JSON line. The same actions every run, so two builds
(two wheels on PYTHONPATH) stepped side by side, each pinned to its own core, do the same
emulated work: the A/B measure of a core change on v2's play (device-h200-s19/README.md).

    taskset -c 2 python benches/pokered_v2_one_core.py --rom pokered.gb --v2-dir PokemonRedExperiments-v2 [--envs 1] [--seconds 4]
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
import pokered_v2_batch  # noqa: E402  (v2's config, as the batch benchmark uses it)

from emurust.pokered_v2 import RedV2Batch  # noqa: E402

WARMUP_STEPS = 30


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rom", required=True, type=Path)
    ap.add_argument("--v2-dir", required=True, type=Path, help="PokemonRedExperiments' v2 folder")
    ap.add_argument("--state", type=Path, help="start state (default: <v2-dir>/init.state)")
    ap.add_argument("--envs", type=int, default=1)
    ap.add_argument("--seconds", type=float, default=4.0)
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args()
    args.state = args.state or args.v2_dir / "init.state"
    cfg = pokered_v2_batch.v2_config(args, Path(tempfile.mkdtemp()))
    batch = RedV2Batch(cfg, args.envs, num_threads=1)
    batch.reset()
    # Drawn up front: both builds step the same actions, however fast each runs.
    actions = iter(np.random.default_rng(args.seed).integers(0, 7, (1_000_000, args.envs)))
    steps_per_s = pokered_v2_batch.rate(lambda: batch.step(next(actions)), args.envs, args.seconds, WARMUP_STEPS)
    print(json.dumps({"envs": args.envs, "env_steps_per_s": round(steps_per_s, 1)}))


if __name__ == "__main__":
    main()
