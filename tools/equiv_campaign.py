"""Equivalence campaign: every ROM of a corpus against PyBoy 2.8.1, in DMG and CGB modes, with
sound emulated and not, several seeds x button policies; the first divergence of each run
pinpointed to the frame and register.

    python tools/equiv_campaign.py [ROMS_DIR] --out campaign.jsonl [--frames 3000]
        [--seeds 0,1,2] [--policies random,holds,mash] [--modes dmg,cgb] [--sound on,off]
        [--only SUBSTR ...] [--compare-every 100] [--clean-from PREV.jsonl]

ROMS_DIR (one or more files or folders) defaults to $EMURUST_TEST_ROMS or ../shared/data/roms-dev. Modes: ``dmg`` runs both
with cgb=False; ``cgb`` runs Game Boy Color hardware (``auto`` for CGB-flagged cartridges,
where PyBoy picks CGB itself, ``on`` for the others). One line of JSON per run is appended to
--out as it finishes; runs already in --out are skipped, so an interrupted campaign resumes.
``--clean-from PREV`` keeps only the ROM x mode x sound combinations that ran identical in PREV
(and the games), e.g. for the 10,000-frame second stage. ``--table`` prints the Markdown
table of a finished --out and exits.

Runs are compared every --compare-every frames (full state, screen, cycles and STAT); a run
that diverges is rerun from its last clean checkpoint with everything compared at every frame.
``--jobs N`` runs N rollouts at a time in worker processes (default 1: the dev box is shared).
``--states-at F1,F2`` adds, for each game (ROMs under ``games/``), rollouts that start from PyBoy
states saved mid-game: PyBoy plays from power-on with random buttons (seed 1000) and saves a state
at frames F1, F2, ... in each mode (into ``--states-dir``); each state then starts one run per
policy x seed.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
try:  # an installed emurust (wheel) wins; else the source tree, when it has a built extension
    import emurust  # noqa: F401
except ImportError:
    sys.path.insert(0, os.path.join(HERE, "..", "python"))

from emurust.verify.rollout import POLICIES, cgb_flagged, find_roms, rollout  # noqa: E402


def run_key(d: dict) -> tuple:
    return (d["rom"], d["mode"], d["sound"], d["policy"], d["seed"], d["frames"], d.get("start"))


def one_run(path: str, mode: str, sound: str, policy: str, seed: int, frames: int, every: int, state_every: int = 0, start: str | None = None) -> dict:
    cgb = False if mode == "dmg" else (None if cgb_flagged(path) else True)
    kw = dict(seed=seed, policy=policy, cgb=cgb, sound_emulated=(sound == "on"))
    if start is not None:
        with open(start, "rb") as f:
            kw["start_state"] = f.read()
    t0 = time.time()
    state_every = state_every or every
    r = rollout(path, frames, compare_every=every, render_every=every, state_every=state_every, **kw)
    out = {"identical": r.frames_identical, "divergence": None}
    if r.divergence is not None:
        step = math.lcm(every, state_every)
        clean = (r.divergence.frame - 1) // step * step
        fine = rollout(path, r.divergence.frame, compare_every=1, render_every=1, state_every=1, compare_after=clean, **kw)
        d = (fine if fine.divergence is not None else r).divergence
        out["identical"] = d.frame - 1
        out["divergence"] = str(d).split("\n")[0]
        out["trace"] = " ".join(f"{pc:04X}" for pc in d.trace[-24:])
    out["seconds"] = round(time.time() - t0, 1)
    return out


def _worker(job: tuple) -> dict:
    d, every, state_every = job
    try:
        d.update(one_run(d["rom"], d["mode"], d["sound"], d["policy"], d["seed"], d["frames"], every, state_every, d.get("start")))
    except Exception as e:  # a ROM that cannot run is recorded, not fatal
        d.update(identical=0, divergence=f"error: {type(e).__name__}: {e}")
    return d


def make_game_states(rom: str, mode: str, frames: list[int], states_dir: str) -> list[str]:
    """PyBoy states of `rom` at `frames` (random buttons, seed 1000) in `mode`, made once."""
    from emurust.verify.rollout import make_states

    out = os.path.join(states_dir, mode)
    stem = os.path.splitext(os.path.basename(rom))[0]
    want = [os.path.join(out, f"{stem}-f{f}-random-s1000.state") for f in frames]
    if not all(os.path.exists(p) for p in want):
        cgb = "off" if mode == "dmg" else ("auto" if cgb_flagged(rom) else "on")
        make_states(rom, frames, 1000, out, "random", cgb)
    return want


def table(rows: list[dict], root: str) -> str:
    """ROM x mode x sound: runs identical / runs, frames, first divergence seen."""
    groups: dict = {}
    for d in rows:
        start = d.get("start")
        rom = d["rom"] + (f" from {os.path.basename(start)}" if start else "")
        groups.setdefault((rom, d["mode"], d["sound"]), []).append(d)
    lines = ["| ROM | mode | sound | frames | runs identical (policy x seed) | first divergence (earliest run) |", "|---|---|---|---|---|---|"]
    for (rom, mode, sound), rs in sorted(groups.items(), key=lambda kv: tuple(str(k) for k in kv[0])):
        ok = sum(r["divergence"] is None for r in rs)
        bad = [r for r in rs if r["divergence"] is not None]
        first = min(bad, key=lambda r: r["identical"])["divergence"] if bad else "none"
        frames = max(r["frames"] for r in rs)
        lines.append(f"| {os.path.relpath(rom, root)} | {mode} | {sound} | {frames} | {ok}/{len(rs)} | {first} |")
    return "\n".join(lines)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("roms", nargs="*", help="ROM files or folders (default: $EMURUST_TEST_ROMS or ../shared/data/roms-dev)")
    ap.add_argument("--out", required=True)
    ap.add_argument("--frames", type=int, default=3000)
    ap.add_argument("--seeds", default="0,1,2")
    ap.add_argument("--policies", default=",".join(POLICIES))
    ap.add_argument("--modes", default="dmg,cgb")
    ap.add_argument("--sound", default="on,off")
    ap.add_argument("--only", nargs="*", default=[], help="ROM paths containing one of these")
    ap.add_argument("--skip", nargs="*", default=[], help="ROM paths containing one of these are left out")
    ap.add_argument("--compare-every", type=int, default=100)
    ap.add_argument("--state-every", type=int, default=0, help="cycles and STAT (PyBoy's slow save state) every K frames (default: --compare-every)")
    ap.add_argument("--clean-from", help="earlier --out: run only the combinations identical there, and the games")
    ap.add_argument("--table", action="store_true", help="print the table of --out and exit")
    ap.add_argument("--jobs", type=int, default=1, help="rollouts run at a time (worker processes)")
    ap.add_argument("--states-at", default="", help="comma-separated frames: also start the games from PyBoy states saved there")
    ap.add_argument("--states-dir", default="campaign-states", help="where --states-at states are written")
    args = ap.parse_args(argv)
    paths = args.roms or [os.environ.get("EMURUST_TEST_ROMS", os.path.join(HERE, "..", "..", "shared", "data", "roms-dev"))]
    paths = [os.path.abspath(p) for p in paths]
    root = os.path.commonpath([p if os.path.isdir(p) else os.path.dirname(p) for p in paths])
    done = []
    if os.path.exists(args.out):
        with open(args.out) as f:
            done = [json.loads(l) for l in f if l.strip()]
    if args.table:
        roots = [os.path.dirname(d["rom"]) for d in done]
        print(table(done, os.path.commonpath(roots) if roots else root))
        return 0
    keys = {run_key(d) for d in done}
    allowed = None
    if args.clean_from:
        with open(args.clean_from) as f:
            prev = [json.loads(l) for l in f if l.strip()]
        dirty = {(d["rom"], d["mode"], d["sound"]) for d in prev if d["divergence"] is not None}
        allowed = {(d["rom"], d["mode"], d["sound"]) for d in prev} - dirty
    roms = [os.path.abspath(p) for p in find_roms(paths)]
    roms = [p for p in roms if (not args.only or any(s in p for s in args.only)) and not any(s in p for s in args.skip)]
    jobs = []
    for rom in roms:
        for mode in args.modes.split(","):
            for sound in args.sound.split(","):
                if allowed is not None and "/games/" not in rom and (rom, mode, sound) not in allowed:
                    continue
                for policy in args.policies.split(","):
                    for seed in (int(s) for s in args.seeds.split(",")):
                        d = {"rom": rom, "mode": mode, "sound": sound, "policy": policy, "seed": seed, "frames": args.frames}
                        if run_key(d) not in keys:
                            jobs.append(d)
    state_frames = [int(x) for x in args.states_at.split(",") if x.strip()]
    if state_frames:
        for rom in (r for r in roms if "/games/" in r):
            for mode in args.modes.split(","):
                for start in make_game_states(rom, mode, state_frames, args.states_dir):
                    for sound in args.sound.split(","):
                        for policy in args.policies.split(","):
                            for seed in (int(s) for s in args.seeds.split(",")):
                                d = {"rom": rom, "mode": mode, "sound": sound, "policy": policy, "seed": seed, "frames": args.frames, "start": os.path.abspath(start)}
                                if run_key(d) not in keys:
                                    jobs.append(d)
    print(f"{len(jobs)} runs to go ({len(done)} in {args.out})", file=sys.stderr, flush=True)
    n_div = 0
    every, state_every = args.compare_every, args.state_every or args.compare_every
    for d in jobs:
        d["compare_every"], d["state_every"] = every, state_every
    work = [(d, every, args.state_every) for d in jobs]
    if args.jobs > 1:
        import multiprocessing as mp

        pool = mp.get_context("spawn").Pool(args.jobs)
        results = pool.imap_unordered(_worker, work)
    else:
        pool, results = None, map(_worker, work)
    try:
        for i, d in enumerate(results):
            n_div += d["divergence"] is not None
            with open(args.out, "a") as f:
                f.write(json.dumps(d) + "\n")
            tag = "ok" if d["divergence"] is None else d["divergence"]
            start = f" from {os.path.basename(d['start'])}" if d.get("start") else ""
            print(f"[{i + 1}/{len(jobs)}] {os.path.relpath(d['rom'], root)}{start} {d['mode']} sound={d['sound']} {d['policy']} s{d['seed']}: {tag} ({d.get('seconds', 0)} s)", file=sys.stderr, flush=True)
    finally:
        if pool is not None:
            pool.terminate()
    print(f"done: {len(jobs)} runs, {n_div} diverged", file=sys.stderr)
    return 1 if n_div else 0


if __name__ == "__main__":
    sys.exit(main())
