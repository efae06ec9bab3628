"""One report for L1-L3: ``emurust verify report ROM --out DIR``.

- L1: the SM83 single-step vectors (:mod:`emurust.verify.cpu`), and the component property tests
  (``cargo test -p emurust-core --lib``) when cargo and the emurust source tree are available;
  otherwise those are reported as *not run*, never as passed.
- L2: the interaction checks of :mod:`emurust.verify.interactions`.
- L3: rollouts of ROM on emurust and PyBoy 2.8.1, one per seed, compared every frame.

Writes ``report.md`` and ``report.json`` into DIR (and ``repair-prompt.md`` for the first
divergence, if any). Exit status: 0 when nothing failed (the verdict says ``incomplete`` when a
part was not run), 1 when something failed, 2 on bad arguments.
"""

from __future__ import annotations

import argparse
import datetime as _dt
import hashlib
import io
import json
import os
import re
import shutil
import subprocess
import sys
import time
from typing import Callable, Optional

from ..command_line import MAX_FRAMES, UsageError, check_output_dir, check_rom_file, int_range, seed_list
from .interactions import divergence_dict

PASSED, FAILED, NOT_RUN = "passed", "failed", "not run"


def _say(progress: Optional[Callable[[str], None]], msg: str) -> None:
    if progress:
        progress(msg)


# ---------------------------------------------------------------- L1


def default_vectors_dir() -> Optional[str]:
    """$SM83_VECTORS, else tests/data/sm83 of the emurust repository (see :mod:`emurust.verify.cpu`)."""
    from .cpu import default_vectors_dir as _default

    return _default()


def run_cpu_vectors(vectors: Optional[str]) -> dict:
    from . import cpu

    vectors = vectors or default_vectors_dir()
    if vectors is None:
        from .cpu import NOT_FOUND_HINT

        return {"status": NOT_RUN, "reason": f"SM83 vectors not found; {NOT_FOUND_HINT}"}
    buf = io.StringIO()
    t0 = time.perf_counter()
    try:
        passed, failed = cpu.run(vectors, show_failures=5, out=buf)
    except (FileNotFoundError, ValueError) as e:
        return {"status": NOT_RUN, "vectors": vectors, "reason": str(e)}
    return {
        "status": FAILED if failed else PASSED,
        "vectors": vectors,
        "files": len(cpu.vector_files(vectors)),
        "passed": passed,
        "failed": failed,
        "seconds": round(time.perf_counter() - t0, 2),
        "failures": buf.getvalue().splitlines()[:40] if failed else [],
    }


_CARGO_RESULT = re.compile(r"test result: (\w+)\. (\d+) passed; (\d+) failed; (\d+) ignored")


def parse_cargo_test(output: str) -> Optional[tuple[int, int, int]]:
    """(passed, failed, ignored) summed over every "test result:" line, or None if there is none."""
    found = _CARGO_RESULT.findall(output)
    if not found:
        return None
    passed, failed, ignored = (sum(int(f[i]) for f in found) for i in (1, 2, 3))
    return passed, failed, ignored


def run_component_tests(enabled: bool = True, timeout: int = 1800) -> dict:
    from ..prompts import repo_root

    cmd = ["cargo", "test", "-p", "emurust-core", "--lib"]
    base = {"command": " ".join(cmd)}
    if not enabled:
        return {**base, "status": NOT_RUN, "reason": "skipped (--no-cargo)"}
    cargo = shutil.which("cargo")
    if cargo is None:
        return {**base, "status": NOT_RUN, "reason": "cargo not found on PATH"}
    root = repo_root()
    if root is None:
        return {**base, "status": NOT_RUN, "reason": "the emurust source tree (crates/emurust-core) is not found; run from inside it"}
    t0 = time.perf_counter()
    try:
        p = subprocess.run([cargo, *cmd[1:]], cwd=root, capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        return {**base, "status": FAILED, "reason": f"timed out after {timeout} s", "cwd": str(root)}
    out = p.stdout + p.stderr
    counts = parse_cargo_test(out)
    r = {**base, "cwd": str(root), "returncode": p.returncode, "seconds": round(time.perf_counter() - t0, 1)}
    if counts is None:
        return {**r, "status": FAILED, "reason": "no test result (build error?)", "output_tail": out.splitlines()[-30:]}
    passed, failed, ignored = counts
    ok = p.returncode == 0 and failed == 0
    r.update(status=PASSED if ok else FAILED, passed=passed, failed=failed, ignored=ignored)
    if not ok:
        r["output_tail"] = [ln for ln in out.splitlines() if "FAILED" in ln or "panicked" in ln][:30] or out.splitlines()[-30:]
    return r


# ---------------------------------------------------------------- L2 and L3


def run_l2(names: Optional[list[str]] = None, progress=None) -> dict:
    from . import interactions

    def each(r):
        _say(progress, f"L2 {r.name}: {'pass' if r.passed else 'FAIL'} ({r.seconds:.1f} s)")

    results = interactions.run_all(names, progress=each)
    failed = sum(not r.passed for r in results)
    return {
        "status": FAILED if failed else PASSED,
        "passed": len(results) - failed,
        "failed": failed,
        "checks": [r.to_dict() for r in results],
    }


def run_l3(rom: str, seeds: list[int], frames: int, render_every: int = 1, progress=None) -> dict:
    from .rollout import rollout

    runs = []
    for seed in seeds:
        t0 = time.perf_counter()
        r = rollout(rom, frames, seed=seed, render_every=render_every)
        runs.append(
            {
                "seed": seed,
                "frames": frames,
                "frames_identical": r.frames_identical,
                "identical": r.divergence is None,
                "divergence": divergence_dict(r.divergence),
                "seconds": round(time.perf_counter() - t0, 2),
                "_result": r,
            }
        )
        _say(progress, f"L3 seed {seed}: {'identical' if r.divergence is None else 'DIVERGED'} ({r.frames_identical}/{frames} frames identical)")
    failed = sum(not x["identical"] for x in runs)
    return {
        "status": FAILED if failed else PASSED,
        "passed": len(runs) - failed,
        "failed": failed,
        "frames_per_rollout": frames,
        "render_every": render_every,
        "frames_verified": sum(x["frames_identical"] for x in runs),
        "rollouts": runs,
    }


# ---------------------------------------------------------------- the report


def build_report(
    rom: str,
    seeds: list[int],
    frames: int,
    vectors: Optional[str] = None,
    cargo: bool = True,
    checks: Optional[list[str]] = None,
    render_every: int = 1,
    progress: Optional[Callable[[str], None]] = None,
) -> dict:
    import emurust

    from .compare import PYBOY_VERSION, battery_note

    t0 = time.perf_counter()
    with open(rom, "rb") as f:
        data = f.read()
    _say(progress, "L1 SM83 vectors ...")
    l1_cpu = run_cpu_vectors(vectors)
    _say(progress, f"L1 SM83 vectors: {l1_cpu['status']}")
    _say(progress, "L1 component tests (cargo) ..." if cargo else "L1 component tests: skipped")
    l1_cargo = run_component_tests(cargo)
    _say(progress, f"L1 component tests: {l1_cargo['status']}")
    l2 = run_l2(checks, progress)
    l3 = run_l3(rom, seeds, frames, render_every, progress)

    parts = {"L1 CPU vectors": l1_cpu, "L1 component tests": l1_cargo, "L2 interaction checks": l2, "L3 rollouts": l3}
    failed = [k for k, v in parts.items() if v["status"] == FAILED]
    not_run = [k for k, v in parts.items() if v["status"] == NOT_RUN]
    verdict = "fail" if failed else "incomplete" if not_run else "pass"

    first = None
    for x in l3["rollouts"]:
        if x["divergence"] and (first is None or x["divergence"]["frame"] < first["frame"]):
            first = {"level": "L3", "seed": x["seed"], **x["divergence"]}
    if first is None:
        for c in l2["checks"]:
            if c["divergence"]:
                first = {"level": "L2", "check": c["name"], **c["divergence"]}
                break

    return {
        "rom": os.path.abspath(rom),
        "rom_sha1": hashlib.sha1(data).hexdigest(),
        "rom_bytes": len(data),
        "emurust_version": emurust.__version__,
        "reference": f"PyBoy {PYBOY_VERSION}",
        # Both sides start without a battery save beside the ROM (see compare.battery_note).
        "battery_save": battery_note(rom) or "none beside the ROM",
        "date": _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds"),
        "seconds": round(time.perf_counter() - t0, 1),
        "verdict": verdict,
        "failed": failed,
        "not_run": not_run,
        "levels": {"L1": {"cpu_vectors": l1_cpu, "component_tests": l1_cargo}, "L2": l2, "L3": l3},
        "first_divergence": first,
    }


def _fmt(v) -> str:
    if isinstance(v, int) and not isinstance(v, bool):
        return f"{v:#04x}"
    return str(v)


def _status(part: dict, counts: str) -> str:
    s = part["status"]
    if s == NOT_RUN:
        return f"**not run**: {part.get('reason', '')}"
    return f"{'pass' if s == PASSED else '**FAIL**'}: {counts}"


def render_markdown(rep: dict) -> str:
    l1c, l1t = rep["levels"]["L1"]["cpu_vectors"], rep["levels"]["L1"]["component_tests"]
    l2, l3 = rep["levels"]["L2"], rep["levels"]["L3"]
    seeds = ", ".join(str(x["seed"]) for x in l3["rollouts"])
    c_cpu = f"{l1c.get('passed', 0):,} passed, {l1c.get('failed', 0):,} failed"
    c_cargo = f"{l1t.get('passed', 0)} passed, {l1t.get('failed', 0)} failed"
    c_l2 = f"{l2['passed']}/{l2['passed'] + l2['failed']} passed"
    c_l3 = f"{l3['passed']}/{l3['passed'] + l3['failed']} identical, {l3['frames_verified']:,} frames verified"
    lines = [
        "# emurust verification report",
        "",
        f"- ROM: `{rep['rom']}` ({rep['rom_bytes']:,} bytes, SHA-1 `{rep['rom_sha1']}`)",
        f"- emurust {rep['emurust_version']} vs {rep['reference']}; {rep['date']}; {rep['seconds']} s",
        f"- Battery save: {rep.get('battery_save', 'none beside the ROM')}",
        "",
        f"**Verdict: {rep['verdict'].upper()}**"
        + (f" (failed: {', '.join(rep['failed'])})" if rep["failed"] else "")
        + (f" (not run: {', '.join(rep['not_run'])})" if rep["not_run"] else ""),
        "",
        "| Level | What | Result |",
        "|---|---|---|",
        f"| L1 | SM83 single-step vectors | {_status(l1c, c_cpu)} |",
        f"| L1 | component tests (`{l1t['command']}`) | {_status(l1t, c_cargo)} |",
        f"| L2 | interaction checks vs PyBoy | {_status(l2, c_l2)} |",
        f"| L3 | rollouts vs PyBoy (seeds {seeds}; {l3['frames_per_rollout']:,} frames each) | {_status(l3, c_l3)} |",
        "",
        "## L1",
        "",
    ]
    if l1c["status"] != NOT_RUN:
        lines.append(f"SM83 vectors from `{l1c['vectors']}` ({l1c['files']} files): {l1c['passed']:,} passed, {l1c['failed']:,} failed.")
        if l1c["failures"]:
            lines += ["", "```", *l1c["failures"], "```"]
    else:
        lines.append(f"SM83 vectors: not run ({l1c['reason']}).")
    lines.append("")
    if l1t["status"] == NOT_RUN:
        lines.append(f"Component tests: not run ({l1t['reason']}). They are not counted as passed.")
    elif "passed" in l1t:
        lines.append(f"Component tests (`{l1t['command']}` in `{l1t['cwd']}`): {l1t['passed']} passed, {l1t['failed']} failed, {l1t['ignored']} ignored.")
    else:
        lines.append(f"Component tests: {l1t.get('reason', 'failed')}.")
    if l1t.get("output_tail"):
        lines += ["", "```", *l1t["output_tail"], "```"]
    lines += ["", "## L2 interaction checks", "", "| Check | What | Result | Frames | Details |", "|---|---|---|---|---|"]
    for c in l2["checks"]:
        details = c["details"].replace("|", "\\|").replace("\n", " ")
        lines.append(f"| {c['name']} | {c['description']} | {'pass' if c['passed'] else '**FAIL**'} | {c['frames_identical']}/{c['frames']} | {details} |")
    lines += ["", "## L3 rollouts", "", "| Seed | Frames identical | Result |", "|---|---|---|"]
    for x in l3["rollouts"]:
        d = x["divergence"]
        res = "identical" if d is None else f"**diverged** at frame {d['frame']}: {d['component']} {d['where']}"
        lines.append(f"| {x['seed']} | {x['frames_identical']:,}/{x['frames']:,} | {res} |")
    lines += ["", "## First divergence", ""]
    d = rep["first_divergence"]
    if d is None:
        lines.append("None.")
    else:
        src = f"L3 seed {d['seed']}" if d["level"] == "L3" else f"L2 check {d['check']}"
        lines += [
            f"- Found by: {src}",
            f"- Frame {d['frame']}: {d['component']} {d['where']}: emurust {_fmt(d['emurust'])}, PyBoy {_fmt(d['pyboy'])}",
            "- Last instructions (emurust PC trace, oldest first): " + " ".join(f"{pc:04X}" for pc in d["trace"]),
        ]
        if rep.get("repair_prompt"):
            lines.append(f"- Repair prompt: [`{rep['repair_prompt']}`]({rep['repair_prompt']})")
    return "\n".join(lines) + "\n"


def write_report(rep: dict, out_dir: str) -> tuple[str, str]:
    """Write report.md and report.json (and repair-prompt.md for an L3 divergence) into out_dir."""
    from ..prompts import write_repair_prompt

    os.makedirs(out_dir, exist_ok=True)
    first = rep["first_divergence"]
    if first is not None and first["level"] == "L3":
        run = next(x for x in rep["levels"]["L3"]["rollouts"] if x["seed"] == first["seed"])
        if run.get("_result") is not None:
            path = os.path.join(out_dir, "repair-prompt.md")
            write_repair_prompt(
                path,
                rep["rom"],
                run["_result"],
                reproduce=f"emurust verify rollout {rep['rom']} --frames {first['frame']} --seed {first['seed']}",
                input_desc=f"ROM `{rep['rom']}` through PyBoy's DMG boot ROM, random buttons of seed {first['seed']} (emurust.verify.rollout.button_schedule)",
            )
            rep["repair_prompt"] = "repair-prompt.md"
    md = os.path.join(out_dir, "report.md")
    js = os.path.join(out_dir, "report.json")
    with open(md, "w", encoding="utf-8") as f:
        f.write(render_markdown(rep))

    def strip(o):
        if isinstance(o, dict):
            return {k: strip(v) for k, v in o.items() if not k.startswith("_")}
        if isinstance(o, list):
            return [strip(v) for v in o]
        return o

    with open(js, "w", encoding="utf-8") as f:
        json.dump(strip(rep), f, indent=2)
        f.write("\n")
    return md, js


# ---------------------------------------------------------------- command line


def _main(args: argparse.Namespace) -> int:
    from . import interactions

    check_rom_file(args.rom)
    checks = None
    if args.checks:
        checks = [c for c in args.checks.split(",") if c]
        unknown = [c for c in checks if c not in interactions.CHECKS]
        if unknown:
            raise UsageError(f"unknown L2 checks {unknown}; known: {', '.join(interactions.CHECKS)}")
    if args.vectors and not os.path.isdir(args.vectors):
        raise UsageError(f"vector directory not found: {args.vectors}")
    check_output_dir(args.out, "--out")
    progress = None if args.quiet else (lambda m: print(m, file=sys.stderr, flush=True))
    rep = build_report(args.rom, args.seeds, args.frames, args.vectors, not args.no_cargo, checks, args.render_every, progress)
    try:
        md, js = write_report(rep, args.out)
    except OSError as e:
        raise UsageError(f"cannot write the report into {args.out}: {e.strerror}") from None
    print(render_markdown(rep).split("\n## L1")[0].rstrip())
    print(f"\nwrote {md} and {js}")
    return 1 if rep["verdict"] == "fail" else 0


def add_parser(sub) -> None:
    p = sub.add_parser(
        "report",
        help="L1-L3 in one report: report.md and report.json",
        description="Run L1 (SM83 vectors, and the cargo component tests when run inside the source "
        "tree), L2 (interaction checks) and L3 (rollouts of ROM, one per seed) against PyBoy 2.8.1, "
        "and write report.md and report.json into --out DIR. Exit status 1 if anything failed.",
    )
    p.add_argument("rom", metavar="ROM", help="the .gb file for the L3 rollouts")
    p.add_argument("--out", required=True, metavar="DIR", help="directory for report.md, report.json (created)")
    p.add_argument("--seeds", type=seed_list, default=[1, 2, 3], help="L3 rollout seeds, comma-separated (default 1,2,3)")
    p.add_argument("--frames", type=int_range(1, MAX_FRAMES), default=1200, help="frames per L3 rollout (default 1200)")
    p.add_argument("--vectors", metavar="DIR", help="SM83 vectors for L1 (default: $SM83_VECTORS, else tests/data/sm83 in the repository)")
    p.add_argument("--render-every", type=int_range(1, MAX_FRAMES), default=1, metavar="K",
                   help="compare the screen every K frames in L3 (default 1)")
    p.add_argument("--checks", metavar="A,B", help="only these L2 checks")
    p.add_argument("--no-cargo", action="store_true", help="do not run the cargo component tests (reported as not run)")
    p.add_argument("--quiet", action="store_true", help="no progress messages")
    p.set_defaults(func=_main)
