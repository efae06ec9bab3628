"""Host instructions per call of PyBoy's API on ``emurust.PyBoy`` and on PyBoy 2.8.1, counted by
callgrind in one process (deterministic, unlike timings on a shared machine).

    python benches/pyboy_api_callgrind.py [--rom games/dodge.gb] [--calls 2000] [--only memory]

Runs itself under ``valgrind --tool=callgrind`` (valgrind and a C compiler are needed: a tiny
library is compiled into a temporary folder to place callgrind's dump marks). The rows and
start point are those of ``benches/pyboy_api_calls.py`` (calls that are a single statement,
without ticks or state files); each row runs ``--calls`` times per emulator between two marks,
and the table gives instructions per call minus an empty loop's, emurust beside PyBoy.
"""

from __future__ import annotations

import argparse
import ctypes
import glob
import io
import os
import pathlib
import subprocess
import sys
import tempfile

ROOT = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "benches"))

from pyboy_api_calls import CALLS  # noqa: E402

# Rows measured: the per-call API, not emulation (ticks) or state files.
SKIP = ("tick", "save_state", "load_state", "[:, :]", "copy")

MARK_C = r"""
#include <valgrind/callgrind.h>
void mark(const char *name) { CALLGRIND_DUMP_STATS_AT(name); }
"""


def _marker(tmp):
    src = os.path.join(tmp, "mark.c")
    lib = os.path.join(tmp, "libmark.so")
    with open(src, "w") as f:
        f.write(MARK_C)
    subprocess.run(["cc", "-O2", "-shared", "-fPIC", "-o", lib, src], check=True)
    return ctypes.CDLL(lib).mark


def child(args):
    """Inside valgrind: run every row on both emulators, with a dump mark after each loop."""
    import pyboy
    from pyboy.utils import WindowEvent as PyBoyWindowEvent

    import emurust
    from emurust.pyboy_api.utils import WindowEvent as EmurustWindowEvent

    mark = _marker(args.tmp)
    sides = []
    for name, cls, we in (("emurust", emurust.PyBoy, EmurustWindowEvent), ("pyboy", pyboy.PyBoy, PyBoyWindowEvent)):
        pb = cls(args.rom, window="null", log_level="ERROR")
        pb.tick(240, False)
        b = io.BytesIO()
        pb.save_state(b)
        ns = {"pb": pb, "mem": pb.memory, "screen": pb.screen, "tmap": pb.tilemap_background,
              "WindowEvent": we, "hook_bank": 0, "hook_addr": 0x40, "_noop": lambda _c: None,
              "restore": lambda pb=pb, s=b.getvalue(): pb.load_state(io.BytesIO(s)), "hook_on": lambda: None}
        sides.append((name, ns))
    rows = [("empty loop", "pass", "")] + [(n, s, setup) for n, s, setup, _ in CALLS
                                            if args.only in n and not any(k in n for k in SKIP)]
    for row, stmt, setup in rows:
        for name, ns in sides:
            exec(compile(f"def _loop(_n):\n for _ in range(_n):\n  {stmt}\n", "<bench>", "exec"), ns)
            if setup:
                exec(setup, ns)
            ns["_loop"](args.calls // 10)  # warm (caches, specialisation)
            mark(b"skip")
            ns["_loop"](args.calls)
            mark(f"{row}|{name}".encode())
            if setup:
                exec(setup, ns)


def read_dumps(prefix):
    """{mark name: instructions} from callgrind's dump files."""
    out = {}
    for path in glob.glob(prefix + "*"):
        trigger = None
        total = None
        with open(path, errors="replace") as f:
            for line in f:
                if line.startswith("desc: Trigger:"):
                    trigger = line.split("Client Request:", 1)[-1].strip()
                elif line.startswith("summary:") or line.startswith("totals:"):
                    total = int(line.split()[1])
        if trigger and total is not None and "|" in trigger:
            out[trigger] = total
    return out


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--rom", default=str(ROOT / "games" / "dodge.gb"))
    ap.add_argument("--calls", type=int, default=2000)
    ap.add_argument("--only", default="")
    ap.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    ap.add_argument("--tmp", help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.child:
        child(args)
        return 0
    with tempfile.TemporaryDirectory() as tmp:
        prefix = os.path.join(tmp, "cg.out")
        cmd = ["valgrind", "--tool=callgrind", f"--callgrind-out-file={prefix}", sys.executable,
               __file__, "--child", "--tmp", tmp, "--rom", args.rom, "--calls", str(args.calls), "--only", args.only]
        subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        counts = read_dumps(prefix)
    base = {side: counts.get(f"empty loop|{side}", 0) / args.calls for side in ("emurust", "pyboy")}
    print(f"{'call':34} {'emurust Ir':>11} {'PyBoy Ir':>10} {'ratio':>7}   (instructions per call, empty loop subtracted)")
    names = []
    for key in counts:
        row = key.split("|")[0]
        if row not in names and row != "empty loop":
            names.append(row)
    order = [n for n, *_ in CALLS]
    for row in sorted(names, key=lambda n: order.index(n) if n in order else 0):
        e = counts[f"{row}|emurust"] / args.calls - base["emurust"]
        p = counts[f"{row}|pyboy"] / args.calls - base["pyboy"]
        flag = "  MORE" if e > p else ""
        print(f"{row:34} {e:11.0f} {p:10.0f} {e / p if p else float('nan'):7.2f}{flag}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
