#!/usr/bin/env python3
"""Run every roms/*.gb in PyBoy 2.8.1 (black box) and summarise the results.

For each ROM: tick frame by frame (no rendering), drain the serial output
(PyBoy keeps the bytes written to SB=FF01 in a 1 KiB ring that `_serial()`
returns and empties -- drained every frame so nothing wraps), stop at the
first "PASSED"/"FAILED <n>" line, and cross-check the WRAM mirror
(0xC000 = 'P'/'F', 0xC001 = failure number).  bench.gb never finishes: it
runs a fixed number of frames and reports its heartbeat lines.

Usage: check_pyboy.py [--max-frames N] [--verbose] [rom.gb ...]
Exit status 1 if any ROM fails or times out.
"""
import argparse
import glob
import os
import re
import sys

from pyboy import PyBoy


def run(path, max_frames, verbose):
    name = os.path.splitext(os.path.basename(path))[0]
    pb = PyBoy(path, window="null")
    out = ""
    frames = 0
    status = "TIMEOUT"
    bench = name == "bench"
    limit = 600 if bench else max_frames
    while frames < limit:
        pb.tick(1, False)
        frames += 1
        out += pb._serial()
        m = re.search(r"^(PASSED|FAILED \d+)$", out, re.M)
        if m and not bench:
            status = m.group(1)
            break
    wram = (pb.memory[0xC000], pb.memory[0xC001])
    pb.stop(save=False)
    lines = [l for l in out.splitlines() if l]
    if bench:
        beats = [l for l in lines if l.startswith("beat")]
        status = "RUNNING" if beats else "NO-HEARTBEAT"
        summary = f"{len(beats)} heartbeats, last: {beats[-1] if beats else '-'}"
    else:
        summary = " | ".join(lines[-4:])
        # the WRAM mirror must agree with the serial verdict
        if status == "PASSED" and wram != (ord("P"), 0):
            status = "WRAM-MISMATCH"
        if status.startswith("FAILED") and wram != (ord("F"), int(status.split()[1])):
            status = "WRAM-MISMATCH"
    print(f"{name:16s} {status:14s} frames={frames:5d} size={os.path.getsize(path) // 1024:5d}KiB  {summary}")
    if verbose:
        print(out)
    return status in ("PASSED", "RUNNING")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--max-frames", type=int, default=1500)
    ap.add_argument("--verbose", action="store_true")
    ap.add_argument("roms", nargs="*")
    a = ap.parse_args()
    roms = a.roms or sorted(glob.glob(os.path.join(os.path.dirname(os.path.abspath(__file__)), "*.gb")))
    ok = True
    for r in roms:
        ok &= run(r, a.max_frames, a.verbose)
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
