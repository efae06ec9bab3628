"""Hardware and software counters of a command and all its threads and children, through the
``perf_event_open`` system call (for machines without the ``perf`` tool; x86-64 Linux).

    python benches/perf_counters.py --json out.json -- python bench.py ...

Counts cycles, instructions, cache references and misses, branch misses (hardware, user and
kernel time of the command) and task clock, context switches and CPU migrations (software).
A counter the machine does not offer (a virtual machine without a PMU, or
``perf_event_paranoid`` too strict) is reported as unavailable with the reason; the command
runs either way and its exit status is this script's. Prints one JSON object.
"""

from __future__ import annotations

import ctypes
import errno
import json
import os
import struct
import sys

SYS_PERF_EVENT_OPEN = 298  # x86-64
HARDWARE, SOFTWARE = 0, 1
EVENTS = [
    ("cycles", HARDWARE, 0),
    ("instructions", HARDWARE, 1),
    ("cache-references", HARDWARE, 2),
    ("cache-misses", HARDWARE, 3),
    ("branch-misses", HARDWARE, 5),
    ("task-clock-ns", SOFTWARE, 1),
    ("context-switches", SOFTWARE, 3),
    ("cpu-migrations", SOFTWARE, 4),
]
# perf_event_attr, its first version (64 bytes): type, size, config, sample_period,
# sample_type, read_format, flag bits, wakeup_events, bp_type, config1.
ATTR = struct.Struct("=IIQQQQQIIQ")
DISABLED, INHERIT, ENABLE_ON_EXEC = 1 << 0, 1 << 1, 1 << 12
READ_TIMES = 1 | 2  # PERF_FORMAT_TOTAL_TIME_ENABLED | PERF_FORMAT_TOTAL_TIME_RUNNING

_libc = ctypes.CDLL(None, use_errno=True)
_libc.syscall.restype = ctypes.c_long


def open_counter(kind: int, config: int, pid: int) -> int:
    attr = ATTR.pack(kind, ATTR.size, config, 0, 0, READ_TIMES, DISABLED | INHERIT | ENABLE_ON_EXEC, 0, 0, 0)
    buf = ctypes.create_string_buffer(attr, ATTR.size)
    fd = _libc.syscall(SYS_PERF_EVENT_OPEN, buf, pid, -1, -1, 0)
    if fd < 0:
        e = ctypes.get_errno()
        raise OSError(e, os.strerror(e))
    return fd


def main() -> int:
    args = sys.argv[1:]
    out = None
    if args[:1] == ["--json"]:
        out, args = args[1], args[2:]
    if args[:1] == ["--"]:
        args = args[1:]
    if not args:
        print(__doc__, file=sys.stderr)
        return 2
    go_r, go_w = os.pipe()
    pid = os.fork()
    if pid == 0:  # the command: waits until its counters are open, then execs
        os.close(go_w)
        os.read(go_r, 1)
        os.execvp(args[0], args)
    os.close(go_r)
    fds: dict[str, int] = {}
    unavailable: dict[str, str] = {}
    for name, kind, config in EVENTS:
        try:
            fds[name] = open_counter(kind, config, pid)
        except OSError as e:
            unavailable[name] = f"{errno.errorcode.get(e.errno, e.errno)}: {e.strerror}"
    os.write(go_w, b"x")
    os.close(go_w)
    _, status = os.waitpid(pid, 0)
    counts: dict[str, object] = {}
    for name, fd in fds.items():
        value, enabled, running = struct.unpack("=QQQ", os.read(fd, 24))
        os.close(fd)
        # Scaled when the kernel multiplexed the counter (running < enabled).
        counts[name] = round(value * enabled / running) if running else None
    result = {"command": args, "counts": counts, "unavailable": unavailable}
    c = counts
    if isinstance(c.get("cycles"), int) and isinstance(c.get("instructions"), int) and c["cycles"]:
        result["ipc"] = round(c["instructions"] / c["cycles"], 3)  # type: ignore[operator]
    if isinstance(c.get("cache-misses"), int) and isinstance(c.get("cache-references"), int) and c["cache-references"]:
        result["cache_miss_ratio"] = round(c["cache-misses"] / c["cache-references"], 4)  # type: ignore[operator]
    text = json.dumps(result)
    print(text, file=sys.stderr)
    if out:
        with open(out, "w") as f:
            f.write(text + "\n")
    return os.waitstatus_to_exitcode(status)


if __name__ == "__main__":
    sys.exit(main())
