#!/usr/bin/env python3
"""A/B digests: prove that a change to the core left every run bit-identical.

For a list of runs (our ROMs ``roms/*.gb`` and ``games/*.gb``, the community corpus under
``$EMURUST_TEST_ROMS``, gameplay states of our games, the corpus's games and, when present,
Pokemon Red), each in several sound modes (``off``: created without sound emulation; ``quiet``:
emulated, not sampled; ``sampled``: sampled every frame) and drawing patterns (every frame, one in
24, none), run N frames with seeded buttons and fold into one digest per run: every drawn frame's
screen, every frame's sound samples, instruction and cycle counts, and the save state every 64
frames and at the end. The digests go to a JSON file; ``compare A.json B.json`` names the runs that
differ (the first one first) and exits 1 if any does.

Typical use: build the code before the change into one virtual environment and the change into
another, run both, compare::

    .venv-base/bin/python tools/ab_digests.py run --out /tmp/a.json
    .venv/bin/python tools/ab_digests.py run --out /tmp/b.json
    python3 tools/ab_digests.py compare /tmp/a.json /tmp/b.json

Gameplay states of our games and the corpus's are made once with PyBoy 2.8.1 (the oracle, so
they do not depend on the code under test) into ``--states-dir``. Pokemon Red: ``--pokered ROM``
(default ``$EMURUST_POKERED_ROM`` or ``/work/private-roms/pokered.gb``) with every ``*.state``
of ``--pokered-states`` (default: ``states/`` beside the ROM).
"""

from __future__ import annotations

import argparse
import glob
import hashlib
import json
import os
import sys
import time
from concurrent.futures import ProcessPoolExecutor

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SOUND_MODES = ("off", "quiet", "sampled")
DRAW_PATTERNS = {"every": 1, "24": 24, "none": 0}


def corpus_root() -> str:
    return os.environ.get("EMURUST_TEST_ROMS") or os.path.join(ROOT, "..", "shared", "data", "roms-dev")


def default_pokered() -> str:
    return os.environ.get("EMURUST_POKERED_ROM") or "/work/private-roms/pokered.gb"


def buttons_at(frame: int, seed: int) -> int:
    """Seeded buttons that change every 8 frames (xorshift64 of the 8-frame block)."""
    x = ((frame // 8) ^ (seed * 0x2545F4914F6CDD1D) ^ 0x9E3779B97F4A7C15) & 0xFFFFFFFFFFFFFFFF
    x ^= (x << 13) & 0xFFFFFFFFFFFFFFFF
    x ^= x >> 7
    x ^= (x << 17) & 0xFFFFFFFFFFFFFFFF
    return x & 0xFF


def run_one(run: dict) -> dict:
    """One run's digest (see the module docs)."""
    import emurust

    t0 = time.process_time()
    sound = run["sound"]
    kwargs = {"sound_emulated": sound != "off"}
    if run.get("state"):
        gb = emurust.GameBoy.from_pyboy_state(run["rom"], run["state"], **kwargs)
    else:
        gb = emurust.GameBoy(run["rom"], **kwargs)
    every = DRAW_PATTERNS[run["draw"]]
    h = hashlib.blake2b(digest_size=16)
    for i in range(run["frames"]):
        if run.get("buttons", True):
            gb.buttons = buttons_at(i, run.get("seed", 0))
        draw = every != 0 and i % every == every - 1
        gb.tick(1, draw, sound == "sampled")
        if draw:
            h.update(gb.screen_rgba().tobytes())
        if sound == "sampled":
            h.update(gb.sound_samples().tobytes())
        h.update(gb.instructions.to_bytes(8, "little"))
        h.update(gb.cycles.to_bytes(8, "little"))
        if i % 64 == 63 or i + 1 == run["frames"]:
            h.update(gb.save_state())
    return {"name": run["name"], "digest": h.hexdigest(), "instructions": gb.instructions, "cpu_s": round(time.process_time() - t0, 3)}


def runs_for(args) -> list[dict]:
    """The run list: names are stable across versions of the code (they key the comparison)."""
    runs: list[dict] = []
    groups = set(args.groups.split(","))

    def add(name, rom, frames, sound, draw, state=None):
        runs.append({"name": f"{name} {sound} {draw}", "rom": rom, "state": state, "frames": frames, "sound": sound, "draw": draw})

    if "ours" in groups:
        for rom in sorted(glob.glob(os.path.join(ROOT, "roms", "*.gb")) + glob.glob(os.path.join(ROOT, "games", "*.gb"))):
            rel = os.path.relpath(rom, ROOT)
            add(rel, rom, args.frames_ours, "sampled", "24")
            add(rel, rom, args.frames_ours, "off", "every")
    corpus = corpus_root()
    if "corpus" in groups and os.path.isdir(corpus):
        for rom in sorted(glob.glob(os.path.join(corpus, "**", "*.gb*"), recursive=True)):
            if not rom.endswith((".gb", ".gbc")):
                continue
            add(os.path.relpath(rom, corpus), rom, args.frames_corpus, "quiet", "every")
    if "states" in groups:
        games = [os.path.join(ROOT, "games", g) for g in ("dodge.gb", "runner.gb", "snake.gb")]
        games += [os.path.join(corpus, "games", g) for g in ("libbet.gb", "shock-lobster.gb")]
        starts = []
        for rom in games:
            if os.path.exists(rom):
                starts.append((os.path.basename(rom), rom, game_state(rom, args.states_dir)))
        pokered = args.pokered
        if pokered and os.path.exists(pokered):
            sdir = args.pokered_states or os.path.join(os.path.dirname(pokered), "states")
            for st in sorted(glob.glob(os.path.join(sdir, "*.state"))):
                starts.append((f"pokered/{os.path.basename(st)}", pokered, st))
        for name, rom, state in starts:
            for sound, draw in (("off", "none"), ("off", "every"), ("quiet", "24"), ("sampled", "none"), ("sampled", "every")):
                add(name, rom, args.frames_states, sound, draw, state)
    if args.only:
        runs = [r for r in runs if any(s in r["name"] for s in args.only)]
    return runs


def game_state(rom: str, states_dir: str) -> str:
    """A PyBoy 2.8.1 state of `rom` after 3,000 frames of seeded random buttons (made once)."""
    from emurust.verify.rollout import make_states

    stem = os.path.splitext(os.path.basename(rom))[0]
    path = os.path.join(states_dir, f"{stem}-f3000-random-s1000.state")
    if not os.path.exists(path):
        make_states(rom, [3000], 1000, states_dir, "random", "auto")
    return path


def cmd_run(args) -> int:
    runs = runs_for(args)
    if not runs:
        print("no runs selected", file=sys.stderr)
        return 2
    import emurust

    t0 = time.time()
    with ProcessPoolExecutor(args.jobs) as pool:
        results = list(pool.map(run_one, runs, chunksize=1))
    out = {"emurust": os.path.dirname(emurust.__file__), "runs": {r["name"]: r for r in results}}
    with open(args.out, "w") as f:
        json.dump(out, f, indent=1)
    frames = sum(r["frames"] for r in runs)
    print(f"{len(runs)} runs, {frames} frames, {time.time() - t0:.0f} s -> {args.out}")
    return 0


def cmd_compare(args) -> int:
    ja, jb = json.load(open(args.a)), json.load(open(args.b))
    if ja["emurust"] == jb["emurust"]:
        print(f"warning: both files ran the emurust at {ja['emurust']}")
    a, b = ja["runs"], jb["runs"]
    common = [n for n in a if n in b]
    differ = [n for n in common if a[n]["digest"] != b[n]["digest"]]
    only = sorted(set(a) ^ set(b))
    if only:
        print(f"{len(only)} runs in one file only (not compared), e.g. {only[0]}")
    if differ:
        print(f"DIFFER: {len(differ)} of {len(common)} runs; first: {differ[0]}")
        for n in differ[:20]:
            print(f"  {n}: instructions {a[n]['instructions']} vs {b[n]['instructions']}")
        return 1
    ca = sum(a[n]["cpu_s"] for n in common)
    cb = sum(b[n]["cpu_s"] for n in common)
    print(f"all {len(common)} runs equal (CPU seconds {ca:.1f} -> {cb:.1f})")
    return 0 if common else 1


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    r = sub.add_parser("run", help="run every selected run and write the digests")
    r.add_argument("--out", required=True)
    r.add_argument("--groups", default="ours,corpus,states", help="comma-separated: ours, corpus, states")
    r.add_argument("--only", nargs="*", default=[], help="keep runs whose name contains one of these")
    r.add_argument("--frames-ours", type=int, default=600)
    r.add_argument("--frames-corpus", type=int, default=300)
    r.add_argument("--frames-states", type=int, default=3000)
    r.add_argument("--states-dir", default=os.path.join(ROOT, ".ab-states"))
    r.add_argument("--pokered", default=default_pokered())
    r.add_argument("--pokered-states", default=None)
    r.add_argument("--jobs", type=int, default=2)
    c = sub.add_parser("compare", help="compare two digest files")
    c.add_argument("a")
    c.add_argument("b")
    args = ap.parse_args(argv)
    return cmd_run(args) if args.cmd == "run" else cmd_compare(args)


if __name__ == "__main__":
    sys.exit(main())
