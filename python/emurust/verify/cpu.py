"""L1: run SingleStepTests-format SM83 vectors (``.json`` / ``.json.gz``) through emurust's CPU.

Every case checks final registers, the RAM it lists and the bus activity of every M-cycle.
Prints ``N passed, M failed`` last and returns 1 on any failure.
"""

from __future__ import annotations

import argparse
import os
import sys


def vector_files(directory: str) -> list[str]:
    if not os.path.isdir(directory):
        raise FileNotFoundError(f"vector directory not found: {directory}")
    files = sorted(
        os.path.join(directory, f)
        for f in os.listdir(directory)
        if f.endswith(".json") or f.endswith(".json.gz")
    )
    if not files:
        raise FileNotFoundError(f"no .json or .json.gz vector files in {directory}")
    return files


def run(directory: str, show_failures: int = 0, out=sys.stdout) -> tuple[int, int]:
    from .. import _core

    passed = failed = 0
    shown = 0
    for path in vector_files(directory):
        r = _core.run_vector_file(path, max(show_failures - shown, 0))
        passed += r["passed"]
        failed += r["failed"]
        if r["failed"]:
            print(f"{os.path.basename(path)}: {r['failed']} failed", file=out)
        for f in r["failures"]:
            if shown >= show_failures:
                break
            shown += 1
            print(f"--- {os.path.basename(path)} case {f['name']}", file=out)
            for d in f["diffs"]:
                print(f"    {d}", file=out)
    print(f"{passed} passed, {failed} failed", file=out)
    return passed, failed


def _main(args: argparse.Namespace) -> int:
    try:
        _, failed = run(args.vectors, args.show_failures)
    except (FileNotFoundError, ValueError) as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    return 1 if failed else 0


def add_parser(sub) -> None:
    p = sub.add_parser("cpu", help="SM83 single-step vectors (L1)")
    p.add_argument("--vectors", required=True, help="directory of SingleStepTests sm83 files")
    p.add_argument("--show-failures", type=int, default=0, metavar="K", help="print the first K failing cases as diffs")
    p.set_defaults(func=_main)
