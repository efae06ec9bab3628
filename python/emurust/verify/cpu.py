"""L1: run SingleStepTests-format SM83 vectors (``.json`` / ``.json.gz``) through emurust's CPU.

Every case checks final registers, the RAM it lists and the bus activity of every M-cycle.
Prints ``N passed, M failed`` last and returns 1 on any failure.

Where the vectors are: ``--vectors DIR``, else the environment variable ``SM83_VECTORS``, else
``tests/data/sm83`` of the emurust source tree (the repository this package was installed
from in editable mode, or the one the current directory is in).
"""

from __future__ import annotations

import argparse
import os
import sys
from typing import Optional

ENV_VAR = "SM83_VECTORS"
REPO_SUBDIR = os.path.join("tests", "data", "sm83")
NOT_FOUND_HINT = (
    f"pass --vectors DIR or set {ENV_VAR}=DIR (a directory of SingleStepTests sm83 .json.gz "
    f"files; the emurust repository has them in {REPO_SUBDIR})"
)


def default_vectors_dir() -> Optional[str]:
    """$SM83_VECTORS if set (even if it does not exist: the caller reports it), else the
    repository's tests/data/sm83 when the emurust source tree is found, else None."""
    env = os.environ.get(ENV_VAR)
    if env:
        return env
    from ..prompts import repo_root

    root = repo_root()
    if root is not None and (root / REPO_SUBDIR).is_dir():
        return str(root / REPO_SUBDIR)
    return None


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


def run(directory: str, show_failures: int = 0, out=None) -> tuple[int, int]:
    from .. import _core

    out = out if out is not None else sys.stdout

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
    vectors = args.vectors or default_vectors_dir()
    if vectors is None:
        print(f"emurust: error: SM83 vectors not found; {NOT_FOUND_HINT}", file=sys.stderr)
        return 2
    try:
        _, failed = run(vectors, args.show_failures)
    except (FileNotFoundError, ValueError) as e:
        origin = "" if args.vectors else f" (from {ENV_VAR})" if os.environ.get(ENV_VAR) else ""
        print(f"emurust: error: {e}{origin}", file=sys.stderr)
        return 2
    return 1 if failed else 0


def add_parser(sub) -> None:
    from ..command_line import int_range

    p = sub.add_parser(
        "cpu",
        help="L1: run the SM83 single-step test vectors through the CPU",
        description=f"Run SingleStepTests sm83 vectors through emurust's CPU; prints 'N passed, M failed'. "
        f"Vectors: --vectors DIR, else ${ENV_VAR}, else {REPO_SUBDIR} of the emurust repository.",
    )
    p.add_argument(
        "--vectors",
        metavar="DIR",
        help=f"directory of SingleStepTests sm83 .json/.json.gz files (default: ${ENV_VAR}, else {REPO_SUBDIR} in the repository)",
    )
    p.add_argument("--show-failures", type=int_range(0, 1_000_000), default=0, metavar="K",
                   help="print the first K failing cases as diffs")
    p.set_defaults(func=_main)
