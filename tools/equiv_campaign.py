"""Equivalence campaign: every ROM of a corpus against PyBoy 2.8.1, in DMG and CGB modes, with
sound emulated and not, several seeds x button policies; the first divergence of each run
pinpointed to the frame and register.

    python tools/equiv_campaign.py [ROMS_DIR] --out campaign.jsonl [--frames 3000]
        [--seeds 0,1,2] [--policies random,holds,mash] [--modes dmg,cgb] [--sound on,off]
        [--only SUBSTR ...] [--compare-every 100] [--clean-from PREV.jsonl]

ROMS_DIR defaults to $EMURUST_TEST_ROMS or ../shared/data/roms-dev. Modes: ``dmg`` runs both
with cgb=False; ``cgb`` runs Game Boy Color hardware (``auto`` for CGB-flagged cartridges,
where PyBoy picks CGB itself, ``on`` for the others). One line of JSON per run is appended to
--out as it finishes; runs already in --out are skipped, so an interrupted campaign resumes.
``--clean-from PREV`` keeps only the ROM x mode x sound combinations that ran identical in PREV
(and the games), e.g. for the 10,000-frame second stage. ``--table`` prints the Markdown
table of a finished --out and exits.

Runs are compared every --compare-every frames (full state, screen, cycles and STAT); a run
that diverges is rerun from its last clean checkpoint with everything compared at every frame.
One process, one rollout at a time (the dev box is shared).
"""

from __future__ import annotations

import argparse
import json
import math
import os
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "python"))

from emurust.verify.rollout import POLICIES, cgb_flagged, find_roms, rollout  # noqa: E402


def run_key(d: dict) -> tuple:
    return (d["rom"], d["mode"], d["sound"], d["policy"], d["seed"], d["frames"])


def one_run(path: str, mode: str, sound: str, policy: str, seed: int, frames: int, every: int, state_every: int = 0) -> dict:
    cgb = False if mode == "dmg" else (None if cgb_flagged(path) else True)
    kw = dict(seed=seed, policy=policy, cgb=cgb, sound_emulated=(sound == "on"))
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


def table(rows: list[dict], root: str) -> str:
    """ROM x mode x sound: runs identical / runs, frames, first divergence seen."""
    groups: dict = {}
    for d in rows:
        groups.setdefault((d["rom"], d["mode"], d["sound"]), []).append(d)
    lines = ["| ROM | mode | sound | frames | runs identical (policy x seed) | first divergence (earliest run) |", "|---|---|---|---|---|---|"]
    for (rom, mode, sound), rs in sorted(groups.items()):
        ok = sum(r["divergence"] is None for r in rs)
        bad = [r for r in rs if r["divergence"] is not None]
        first = min(bad, key=lambda r: r["identical"])["divergence"] if bad else "none"
        frames = max(r["frames"] for r in rs)
        lines.append(f"| {os.path.relpath(rom, root)} | {mode} | {sound} | {frames} | {ok}/{len(rs)} | {first} |")
    return "\n".join(lines)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("roms", nargs="?", default=os.environ.get("EMURUST_TEST_ROMS", os.path.join(HERE, "..", "..", "shared", "data", "roms-dev")))
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
    args = ap.parse_args(argv)
    root = os.path.abspath(args.roms)
    done = []
    if os.path.exists(args.out):
        with open(args.out) as f:
            done = [json.loads(l) for l in f if l.strip()]
    if args.table:
        print(table(done, root))
        return 0
    keys = {run_key(d) for d in done}
    allowed = None
    if args.clean_from:
        with open(args.clean_from) as f:
            prev = [json.loads(l) for l in f if l.strip()]
        dirty = {(d["rom"], d["mode"], d["sound"]) for d in prev if d["divergence"] is not None}
        allowed = {(d["rom"], d["mode"], d["sound"]) for d in prev} - dirty
    roms = [os.path.abspath(p) for p in find_roms([root])]
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
    print(f"{len(jobs)} runs to go ({len(done)} in {args.out})", file=sys.stderr, flush=True)
    n_div = 0
    for i, d in enumerate(jobs):
        try:
            d["compare_every"], d["state_every"] = args.compare_every, args.state_every or args.compare_every
            d.update(one_run(d["rom"], d["mode"], d["sound"], d["policy"], d["seed"], d["frames"], args.compare_every, args.state_every))
        except Exception as e:  # a ROM that cannot run is recorded, not fatal
            d.update(identical=0, divergence=f"error: {type(e).__name__}: {e}")
        n_div += d["divergence"] is not None
        with open(args.out, "a") as f:
            f.write(json.dumps(d) + "\n")
        tag = "ok" if d["divergence"] is None else d["divergence"]
        print(f"[{i + 1}/{len(jobs)}] {os.path.relpath(d['rom'], root)} {d['mode']} sound={d['sound']} {d['policy']} s{d['seed']}: {tag}", file=sys.stderr, flush=True)
    print(f"done: {len(jobs)} runs, {n_div} diverged", file=sys.stderr)
    return 1 if n_div else 0


if __name__ == "__main__":
    sys.exit(main())
