"""Two builds of emurust side by side: the same work at the same time on two pinned cores, swapped
every round, so that the machine's drift (turbo, neighbours) falls on both alike. The A/B measure
of a build change (tools/build_pgo_wheel.sh against the plain wheel) or a core change.

    python benches/ab_wheels.py --a SITE_A --b SITE_B --rom pokered.gb --states battle.state,menu.state \
        [--v2-dir PokemonRedExperiments-v2] [--rounds 4] [--cores 2,6] [--out ab.json]

SITE_A and SITE_B are directories with an emurust installed (``pip install --target``). Each round
runs, for every state and both sound modes and each pattern, ``emurust bench``'s worker (``python -m
emurust.bench --worker``: the state loaded, 120 frames of warm-up, then FRAMES frames with no frame
drawn, as an RL env's skipped frames, or one in 24 drawn), frames per CPU second (runs of a fraction
of a second are at the mercy of the machine's clock: use --frames 12000 or more); with
``--v2-dir``, also ``benches/pokered_v2_one_core.py`` (v2's batched task, one env, one thread).
Prints one JSON line per pair and the medians of B / A at the end.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent

def run_pair(cmd: list[str], sites: tuple[str, str], cores: tuple[int, int]) -> tuple[dict, dict]:
    procs = []
    for site, core in zip(sites, cores):
        # The build's site first; the rest of the path (dependencies, stubs) after it.
        rest = os.environ.get("PYTHONPATH", "")
        env = dict(os.environ, PYTHONPATH=site + (os.pathsep + rest if rest else ""))
        procs.append(subprocess.Popen(["taskset", "-c", str(core), *cmd], env=env, stdout=subprocess.PIPE,
                                      stderr=subprocess.PIPE, text=True))
    out = []
    for p, site in zip(procs, sites):
        so, se = p.communicate(timeout=600)
        if p.returncode != 0:
            raise SystemExit(f"{cmd} with {site} failed:\n{se[-2000:]}")
        out.append(json.loads(so.strip().splitlines()[-1]))
    return out[0], out[1]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--a", required=True, help="site directory of build A")
    ap.add_argument("--b", required=True, help="site directory of build B")
    ap.add_argument("--rom", required=True)
    ap.add_argument("--states", required=True, help="comma-separated save states of the ROM")
    ap.add_argument("--v2-dir", help="PokemonRedExperiments v2's folder: also v2's batched task on one core")
    ap.add_argument("--rounds", type=int, default=4)
    ap.add_argument("--cores", default="2,6")
    ap.add_argument("--patterns", default="no_render,skip24")
    ap.add_argument("--sounds", default="off,on")
    ap.add_argument("--frames", type=int, default=12000, help="frames per tick run (at least 24)")
    ap.add_argument("--v2-seconds", type=float, default=5.0)
    ap.add_argument("--out")
    args = ap.parse_args()
    c0, c1 = (int(c) for c in args.cores.split(","))
    jobs: list[tuple[str, list[str], str]] = []
    for state in args.states.split(","):
        for sound in args.sounds.split(","):
            for pattern in args.patterns.split(","):
                name = f"{Path(state).stem}/{sound}/{pattern}"
                jobs.append((name, [sys.executable, "-m", "emurust.bench", "--worker", "emurust", args.rom, pattern,
                                    str(args.frames), "--sound", sound, "--state", state], "fps"))
    if args.v2_dir:
        jobs.append(("v2 one env", [sys.executable, str(HERE / "pokered_v2_one_core.py"), "--rom", args.rom,
                                    "--v2-dir", args.v2_dir, "--envs", "1", "--seconds", str(args.v2_seconds)], "env_steps_per_s"))
    rows = []
    for r in range(args.rounds):
        cores = (c0, c1) if r % 2 == 0 else (c1, c0)
        for name, cmd, key in jobs:
            a, b = run_pair(cmd, (args.a, args.b), cores)
            row = {"round": r + 1, "job": name, "a": a[key], "b": b[key], "b_over_a": b[key] / a[key],
                   "cores_ab": cores}
            rows.append(row)
            print(json.dumps(row), flush=True)
    summary = {}
    for name, _, _ in jobs:
        ratios = [x["b_over_a"] for x in rows if x["job"] == name]
        summary[name] = {"median_b_over_a": round(statistics.median(ratios), 3), "min": round(min(ratios), 3),
                         "max": round(max(ratios), 3), "b_faster_rounds": sum(x > 1 for x in ratios)}
    all_ratios = [x["b_over_a"] for x in rows]
    summary["all"] = {"median_b_over_a": round(statistics.median(all_ratios), 3), "pairs": len(all_ratios),
                      "b_faster": sum(x > 1 for x in all_ratios)}
    print(json.dumps({"summary": summary}, indent=1))
    if args.out:
        Path(args.out).write_text(json.dumps({"rows": rows, "summary": summary}, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
