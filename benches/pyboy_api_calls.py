"""Per-call cost of PyBoy's API on ``emurust.PyBoy`` and on PyBoy 2.8.1, side by side.

    python benches/pyboy_api_calls.py [--roms games/dodge.gb,games/runner.gb,games/snake.gb]
        [--rom pokered.gb --state init.state] [--rounds 5] [--scale 1.0] [--out pyboy_api_calls.json]

Every row of issue 24's first target: ``memory[addr]`` read and write, ``memory[a:b]``,
``memory[bank, addr]``, ``screen.ndarray``, ``screen.image``, ``game_area()``,
``tilemap_background[x, y]``, ``screen.tilemap_position_list``, ``get_sprite``,
``button``/``send_input``, ``tick(1)``, ``tick(1, False)``, ``tick(n, False)``, ``tick`` with a
hook firing every frame, ``save_state``/``load_state``.

Both emulators start from the same point (240 frames after power-on, or ``--state`` loaded into
a fresh PyBoy and saved again, i.e. in version 29)
and run the same statement in a loop; the two alternate, ``--rounds`` times, and each row keeps
the best (lowest) microseconds per call of each. Rows whose statement changes the machine
(ticks, writes, inputs) restore the start state before each round, outside the timed loop.
Prints a table and writes JSON (``--out``).
"""

from __future__ import annotations

import argparse
import io
import json
import os
import pathlib
import platform
import sys
import time

ROOT = pathlib.Path(__file__).resolve().parents[1]

# (row name, statement, setup before each timed loop, calls per loop at --scale 1)
# Names available to the statements: pb (the emulator), mem, screen, tmap, WindowEvent, state (a
# BytesIO of the start state), buf (an empty BytesIO), hook_bank/hook_addr.
CALLS = [
    ("memory[addr] read", "mem[0xC100]", "", 200_000),
    ("memory[addr] read (IO: DIV)", "mem[0xFF04]", "", 200_000),
    ("memory[addr] write", "mem[0xC100] = 7", "", 200_000),
    ("memory[a:b] (16 bytes)", "mem[0xC000:0xC010]", "", 50_000),
    ("memory[a:b] (256 bytes)", "mem[0xC000:0xC100]", "", 10_000),
    ("memory[bank, addr] ROM", "mem[1, 0x4000]", "", 100_000),
    ("memory[bank, addr] WRAM", "mem[0, 0xC100]", "", 100_000),
    ("memory[bank, addr] write WRAM", "mem[0, 0xC100] = 3", "", 100_000),
    ("register_file.A", "pb.register_file.A", "", 100_000),
    ("screen.ndarray", "screen.ndarray", "", 200_000),
    ("screen.ndarray[:, :, :3] copy", "screen.ndarray[:, :, :3].copy()", "", 20_000),
    ("screen.image", "screen.image", "", 200_000),
    ("screen.tilemap_position_list", "screen.tilemap_position_list", "", 10_000),
    ("game_area()", "pb.game_area()", "", 5_000),
    ("tilemap_background[x, y]", "tmap[3, 4]", "", 100_000),
    ("tilemap_background[:, :]", "tmap[:, :]", "", 2_000),
    ("get_sprite(i)", "pb.get_sprite(5)", "", 50_000),
    ("button('a')", "pb.button('a')", "restore()", 20_000),
    ("send_input(PRESS_BUTTON_A)", "pb.send_input(WindowEvent.PRESS_BUTTON_A)", "restore()", 50_000),
    ("tick(1)", "pb.tick(1)", "restore()", 600),
    ("tick(1, False)", "pb.tick(1, False)", "restore()", 600),
    ("tick(24, False)", "pb.tick(24, False)", "restore()", 30),
    ("tick(1, False), hook firing", "pb.tick(1, False)", "restore(); hook_on()", 600),
    ("hook_register+deregister", "pb.hook_register(hook_bank, hook_addr, _noop, None); "
     "pb.hook_deregister(hook_bank, hook_addr)", "restore()", 5_000),
    ("save_state", "buf.seek(0); pb.save_state(buf)", "", 2_000),
    ("load_state", "state.seek(0); pb.load_state(state)", "", 2_000),
]


def _noop(_context):
    pass


class Side:
    """One emulator (emurust's or PyBoy's) at the start point, with the statements compiled."""

    def __init__(self, name, cls, window_event, rom, state_bytes):
        self.name = name
        self.pb = cls(rom, window="null", log_level="ERROR")
        if state_bytes is None:
            self.pb.tick(240, False)
            b = io.BytesIO()
            self.pb.save_state(b)
            state_bytes = b.getvalue()
        self.state_bytes = state_bytes
        self.hooks = []
        self.restore()
        self.hits = 0
        self.ns = {
            "pb": self.pb, "mem": self.pb.memory, "screen": self.pb.screen, "tmap": self.pb.tilemap_background,
            "WindowEvent": window_event, "state": io.BytesIO(state_bytes), "buf": io.BytesIO(),
            "hook_bank": 0, "hook_addr": 0x40, "_noop": _noop, "restore": self.restore, "hook_on": self.hook_on,
        }

    def restore(self):
        pb = self.pb
        for addr in self.hooks:
            pb.hook_deregister(0, addr)
        self.hooks = []
        pb.load_state(io.BytesIO(self.state_bytes))
        pb.tick(1, False)  # clears queued inputs left by button()/send_input() loops
        pb.load_state(io.BytesIO(self.state_bytes))

    def hook_on(self):
        def count(_):
            self.hits += 1
        self.pb.hook_register(0, 0x40, count, None)
        self.hooks.append(0x40)

    def time(self, stmt, setup, n):
        code = compile(f"def _loop(_n):\n for _ in range(_n):\n  {stmt}\n", "<bench>", "exec")
        exec(code, self.ns)
        if setup:
            exec(setup, self.ns)
        loop = self.ns["_loop"]
        t0 = time.perf_counter_ns()
        loop(n)
        dt = time.perf_counter_ns() - t0
        return dt / n / 1000.0


def measure(rom, state_bytes, rounds, scale, only=""):
    import pyboy
    from pyboy.utils import WindowEvent as PyBoyWindowEvent

    import emurust
    from emurust.pyboy_api.utils import WindowEvent as EmurustWindowEvent

    if state_bytes is not None:
        # Restores use the state as PyBoy 2.8.1 saves it right after loading it (version 29):
        # an older version's missing sound clock would make each restore of a machine that ran
        # meanwhile catch its sound up over the gap (PyBoy, slowly, with warnings).
        fresh = pyboy.PyBoy(rom, window="null", log_level="ERROR")
        fresh.load_state(io.BytesIO(state_bytes))
        b = io.BytesIO()
        fresh.save_state(b)
        fresh.stop(save=False)
        state_bytes = b.getvalue()
    sides = [
        Side("emurust", emurust.PyBoy, EmurustWindowEvent, rom, state_bytes),
        Side("pyboy", pyboy.PyBoy, PyBoyWindowEvent, rom, state_bytes),
    ]
    rows = []
    for name, stmt, setup, n in CALLS:
        if only not in name:
            continue
        n = max(1, int(n * scale))
        best = {s.name: None for s in sides}
        error = {}
        for r in range(rounds):
            for s in (sides if r % 2 == 0 else sides[::-1]):
                if s.name in error:
                    continue
                try:
                    us = s.time(stmt, setup, n)
                except Exception as e:  # a call one side does not support: reported, not hidden
                    error[s.name] = f"{type(e).__name__}: {e}"
                    s.restore()
                    continue
                best[s.name] = us if best[s.name] is None else min(best[s.name], us)
        for s in sides:
            s.restore()
        row = {"call": name, "statement": stmt, "calls_per_loop": n,
               "emurust_us": best["emurust"], "pyboy_us": best["pyboy"]}
        if error:
            row["error"] = error
        if best["emurust"] and best["pyboy"]:
            row["ratio"] = best["emurust"] / best["pyboy"]
        rows.append(row)
    for s in sides:
        s.pb.stop(save=False)
    return rows


def print_table(title, rows):
    print(f"\n{title}")
    print(f"{'call':34} {'emurust us':>11} {'PyBoy us':>10} {'emurust/PyBoy':>14}")
    for r in rows:
        e = "-" if r["emurust_us"] is None else f"{r['emurust_us']:.3f}"
        p = "-" if r["pyboy_us"] is None else f"{r['pyboy_us']:.3f}"
        ratio = f"{r['ratio']:.2f}" if "ratio" in r else "-"
        flag = "  SLOWER" if r.get("ratio", 0) > 1.0 else ""
        print(f"{r['call']:34} {e:>11} {p:>10} {ratio:>14}{flag}")
        if "error" in r:
            print(f"    error: {r['error']}")
    sys.stdout.flush()


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--roms", default="games/dodge.gb,games/runner.gb,games/snake.gb",
                    help="comma-separated ROMs started 240 frames after power-on ('' for none)")
    ap.add_argument("--rom", help="a ROM measured from --state (e.g. Pokemon Red)")
    ap.add_argument("--state", help="PyBoy .state for --rom (any format version PyBoy loads)")
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--scale", type=float, default=1.0, help="multiplies the calls per timed loop")
    ap.add_argument("--only", default="", help="measure only rows whose name contains this text")
    ap.add_argument("--out", default="pyboy_api_calls.json")
    args = ap.parse_args(argv)
    if bool(args.rom) != bool(args.state):
        ap.error("--rom and --state go together")

    import emurust
    import pyboy

    out = {
        "machine": {"cpu": platform.processor() or platform.machine(), "cpus": os.cpu_count(),
                    "python": platform.python_version(), "pyboy": pyboy.__version__ if hasattr(pyboy, "__version__") else "2.8.1",
                    "emurust": getattr(emurust, "__version__", "?")},
        "rounds": args.rounds, "scale": args.scale, "results": [],
    }
    targets = []
    for rom in filter(None, args.roms.split(",")):
        path = (ROOT / rom) if (ROOT / rom).is_file() else pathlib.Path(rom)
        targets.append((str(path), None, path.name))
    if args.rom:
        with open(args.state, "rb") as f:
            targets.append((args.rom, f.read(), f"{pathlib.Path(args.rom).name} from {pathlib.Path(args.state).name}"))
    for path, state, label in targets:
        rows = measure(path, state, args.rounds, args.scale, args.only)
        print_table(label, rows)
        out["results"].append({"rom": label, "rows": rows})
    with open(args.out, "w") as f:
        json.dump(out, f, indent=1)
    print(f"\nwrote {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
