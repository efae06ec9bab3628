"""L3 rollouts: emurust and PyBoy 2.8.1 side by side, compared at every frame.

Both power on through the DMG boot ROM shipped inside the installed ``pyboy`` package and get
the same seeded random button schedule. The run stops at the first divergence.
"""

from __future__ import annotations

import argparse
import random
from dataclasses import dataclass, field
from typing import Callable, Optional

from emurust._core import read_user_file

from ..command_line import MAX_FRAMES, MAX_SEED, UsageError, check_output_dir, check_rom_file, int_range
from .compare import (
    Divergence,
    battery_note,
    first_divergence,
    make_pyboy,
    pyboy_boot_rom_path,
    pyboy_hardware_is_cgb,
    snapshot_emurust,
    snapshot_pyboy,
)

#: Frames PyBoy's DMG boot ROM fills completely; it unmaps itself during the next one.
BOOT_FRAMES = 64

BUTTON_NAMES = ("right", "left", "up", "down", "a", "b", "select", "start")


#: Button policies of :func:`button_schedule`.
POLICIES = ("random", "holds", "mash")


def button_schedule(seed: int, frames: int, change_probability: float = 0.1, policy: str = "random") -> list[list[tuple[str, str]]]:
    """Per frame, the (action, button) events to send before that frame; reproducible from
    `seed`. A schedule's first N frames do not depend on `frames`.

    Policies: ``random`` (each frame, with `change_probability`, one uniformly chosen button
    toggles), ``holds`` (long holds: one button, or a direction with A or B, held for 0.5-5 s,
    with short idle gaps) and ``mash`` (menu mashing: rapid A/START taps of 1-3 frames, 1-8
    frames apart, now and then B or a direction)."""
    if policy == "holds":
        return _holds_schedule(random.Random(seed), frames)
    if policy == "mash":
        return _mash_schedule(random.Random(seed), frames)
    if policy != "random":
        raise ValueError(f"unknown button policy {policy!r} (known: {', '.join(POLICIES)})")
    rng = random.Random(seed)
    held: set[str] = set()
    schedule = []
    for _ in range(frames):
        events = []
        if rng.random() < change_probability:
            b = rng.choice(BUTTON_NAMES)
            if b in held:
                held.discard(b)
                events.append(("release", b))
            else:
                held.add(b)
                events.append(("press", b))
        schedule.append(events)
    return schedule


def _holds_schedule(rng: random.Random, frames: int) -> list[list[tuple[str, str]]]:
    schedule: list[list[tuple[str, str]]] = [[] for _ in range(frames)]
    f = 0
    while f < frames:
        f += rng.randint(5, 60)  # idle
        if f >= frames:
            break
        if rng.random() < 0.3:
            buttons = [rng.choice(BUTTON_NAMES[:4]), rng.choice(("a", "b"))]
        else:
            buttons = [rng.choice(BUTTON_NAMES)]
        schedule[f] += [("press", b) for b in buttons]
        f += rng.randint(30, 300)  # hold
        if f < frames:
            schedule[f] += [("release", b) for b in buttons]
    return schedule


def _mash_schedule(rng: random.Random, frames: int) -> list[list[tuple[str, str]]]:
    schedule: list[list[tuple[str, str]]] = [[] for _ in range(frames)]
    f = rng.randint(0, 8)
    while f < frames:
        r = rng.random()
        b = "a" if r < 0.6 else "start" if r < 0.85 else "b" if r < 0.95 else rng.choice(BUTTON_NAMES[:4])
        schedule[f].append(("press", b))
        f += rng.randint(1, 3)
        if f < frames:
            schedule[f].append(("release", b))
        f += rng.randint(1, 8)
    return schedule


def cgb_flagged(rom_path: str) -> bool:
    """Whether the ROM's header sets bit 7 of 0x0143 (PyBoy then runs it as a Game Boy Color)."""
    with open(rom_path, "rb") as f:
        head = f.read(0x150)
    return len(head) > 0x143 and bool(head[0x143] & 0x80)


#: Bytes at the end of a PyBoy 2.8.1 DMG state after an MBC3 clock block: joypad, serial, Super GB.
_PYBOY_TAIL_AFTER_RTC = 2 + 36 + 10379


def pyboy_state_without_wall_clock(state: bytes, gb) -> bytes:
    """`state` (a PyBoy 2.8.1 state of `gb`'s ROM) with its MBC3 clock's two wall-clock times
    (time zero and time of saving) set to the far future, as emurust writes them, so that PyBoy
    adds no host time to the clock when loading it (emurust's clock runs on emulated time only).
    Other states are returned unchanged."""
    import struct
    import sys

    if gb.read_rom_bank(0, 0x147) not in (0x0F, 0x10) or len(state) < _PYBOY_TAIL_AFTER_RTC + 33:
        return bytes(state)
    out = bytearray(state)
    far = struct.pack("<d", sys.float_info.max)
    end = len(out) - _PYBOY_TAIL_AFTER_RTC
    out[end - 8 : end] = far  # saved at
    out[end - 33 : end - 25] = far  # time zero
    return bytes(out)


@dataclass
class RolloutResult:
    frames_identical: int
    divergence: Optional[Divergence]
    serial_emurust: bytes
    serial_pyboy: bytes
    #: The screens at the divergence (emurust, PyBoy), drawn for the report.
    screens: Optional[tuple] = None


def rollout(
    rom_path: str,
    frames: int,
    seed: Optional[int] = None,
    render_every: int = 1,
    compare_every: int = 1,
    progress: Optional[Callable[[int], None]] = None,
    before_frame: Optional[Callable[[object, int], None]] = None,
    boot_rom: bool = True,
    tick_pattern_seed: Optional[int] = None,
    state_every: int = 1,
    start_state=None,
    policy: str = "random",
    cgb: Optional[bool] = None,
    compare_after: int = 0,
    compare_sound: bool = True,
    pyboy_cgb: Optional[bool] = None,
    sound_emulated: bool = True,
    sound_sample_rate: Optional[int] = None,
) -> RolloutResult:
    """Run `frames` frames on both emulators; compare after every `compare_every` frames.

    Frames are ticked one at a time; the screen is drawn (and compared) on frames whose index is a
    multiple of `render_every`. `seed` = None sends no input. `before_frame(gb, frame)` may act on
    the emurust side only (tests use it to prove that a divergence is caught).

    With `boot_rom=False` emurust starts in its post-boot state while PyBoy first runs the frames
    its boot ROM fills completely; VRAM and the screen are then not compared (the post-boot state
    does not carry the boot ROM's graphics).

    With `tick_pattern_seed`, frames are ticked in random batches (``tick(n, render)`` with n in
    1-4 and a random render flag, the same calls on both sides) to exercise every pattern of
    drawn and skipped frames; comparisons then happen after each call.

    With `start_state` (a PyBoy 2.8.1 ``.state``: bytes or a path), both start from it: PyBoy
    loads it natively (with an MBC3 clock's save time neutralised, see
    :func:`pyboy_state_without_wall_clock`), emurust through ``load_pyboy_state``. Frames are
    then counted from the state.

    `policy` picks the button schedule (see :func:`button_schedule`); `pyboy_cgb` is the former
    name of `cgb`.

    Frames up to `compare_after` are run without comparisons and without drawing (used to
    pinpoint a divergence known to lie after that frame).

    `cgb` is PyBoy's argument (None: Game Boy Color hardware for cartridges whose header asks
    for it); both emulators get the same one, and on CGB hardware emurust runs PyBoy's CGB boot
    ROM. With `compare_sound=False` the audio output (samples, PCM12/PCM34) is not compared.

    `sound_emulated` and `sound_sample_rate` are given to both (PyBoy's constructor options).
    """
    import emurust

    if cgb is None:
        cgb = pyboy_cgb
    hw_cgb = pyboy_hardware_is_cgb(rom_path, cgb)
    with open(pyboy_boot_rom_path(hw_cgb), "rb") as f:
        boot = f.read()
    sound = dict(sound_emulated=sound_emulated, sound_sample_rate=sound_sample_rate)
    gb = emurust.GameBoy(rom_path, boot_rom=boot if boot_rom else None, cgb=hw_cgb, **sound)
    emurust._core.Host(gb).set_pc_trace(True)  # a divergence report lists the last instructions
    pb = make_pyboy(rom_path, cgb, **sound)
    skip = () if boot_rom else ("VRAM", "VRAM bank 1")
    if start_state is not None:
        import io

        if isinstance(start_state, (bytes, bytearray)):
            state = bytes(start_state)
        else:
            state = read_user_file(start_state, "start state")
        gb.load_pyboy_state(state)
        pb.load_state(io.BytesIO(pyboy_state_without_wall_clock(state, gb)))
        skip = ()
    elif not boot_rom:
        pb.tick(BOOT_FRAMES, False)
        pb._serial()
    schedule = button_schedule(seed, frames, policy=policy) if seed is not None else [[] for _ in range(frames)]
    serial_pb = bytearray()
    try:
        pattern = random.Random(tick_pattern_seed) if tick_pattern_seed is not None else None
        frame = 0
        while frame < frames:
            if pattern is not None:
                n = min(pattern.randint(1, 4), frames - frame)
                render = pattern.random() < 0.5 and boot_rom
            elif frame + 1 <= compare_after:
                n = 1  # one frame per call, as compared runs do, so inputs land on the same frames
                render = False
            else:
                n = 1
                render = render_every > 0 and (frame + 1) % render_every == 0 and boot_rom
            # Inputs of all frames in this call are sent before it, as PyBoy applies them.
            for k in range(n):
                for action, button in schedule[frame + k]:
                    getattr(gb, f"button_{action}")(button)
                    getattr(pb, f"button_{action}")(button)
            if before_frame:
                before_frame(gb, frame + 1)
            gb.tick(n, render)
            pb.tick(n, render)
            frame += n
            serial_pb += pb._serial().encode("latin-1")
            if frame <= compare_after:
                pass
            elif pattern is not None or frame % compare_every == 0 or frame == frames:
                with_state = state_every <= 1 or frame % state_every == 0 or frame == frames
                ours = snapshot_emurust(gb, render, with_state)
                ref = snapshot_pyboy(pb, render, len(gb.cartridge_ram()) // 0x2000, with_state, hw_cgb)
                if not compare_sound:
                    # Audio output: the samples and the PCM12/PCM34 registers (FF76, FF77).
                    ours.sound = ref.sound = None
                    for snap in (ours, ref):
                        io = bytearray(snap.regions["IO"])
                        io[0x76:0x78] = b"\0\0"
                        snap.regions["IO"] = bytes(io)
                d = first_divergence(frame, ours, ref, skip=skip)
                if d is None and bytes(gb.serial_output()) != bytes(serial_pb):
                    d = Divergence(frame, "serial", "output so far", bytes(gb.serial_output())[-40:], bytes(serial_pb)[-40:])
                if d is not None:
                    d.trace = emurust._core.Host(gb).pc_trace()
                    screens = (gb.screen_rgba(), pb.screen.ndarray.copy())
                    return RolloutResult(frame - n, d, gb.serial_output(), bytes(serial_pb), screens)
            if progress:
                progress(frame)
        return RolloutResult(frames, None, gb.serial_output(), bytes(serial_pb))
    finally:
        pb.stop(save=False)


# ---------------------------------------------------------------- command line


def _progress_bar(total: int):
    try:
        from tqdm import tqdm

        bar = tqdm(total=total, unit="frame", dynamic_ncols=True, leave=False)
        return bar.update, bar.close
    except ImportError:  # a plain fallback on stderr
        import sys

        step = max(total // 20, 1)
        state = {"n": 0}

        def update(k=1):
            state["n"] += k
            if state["n"] % step == 0 or state["n"] == total:
                print(f"\r{state['n']}/{total} frames", end="", file=sys.stderr, flush=True)

        return update, lambda: print(file=sys.stderr)


def _progress_adapter(update):
    last = {"frame": 0}

    def progress(frame):
        update(frame - last["frame"])
        last["frame"] = frame

    return progress


#: ROM file name endings the folder search picks up.
ROM_SUFFIXES = (".gb", ".gbc")


def find_roms(paths) -> list[str]:
    """ROM files named in `paths`: files as given, folders searched recursively for *.gb/*.gbc
    (sorted). Raises FileNotFoundError for a path that does not exist."""
    import os

    out: list[str] = []
    for p in paths:
        if os.path.isdir(p):
            found = []
            for root, _dirs, files in os.walk(p):
                found += [os.path.join(root, f) for f in files if f.lower().endswith(ROM_SUFFIXES)]
            out += sorted(found)
        elif os.path.isfile(p):
            out.append(p)
        else:
            raise FileNotFoundError(f"ROM not found: {p}")
    return out


def states_for(rom: str, states_dir: str) -> list[str]:
    """PyBoy .state files in `states_dir` whose name starts with the ROM's name without its
    extension (``ROMNAME*.state``), sorted."""
    import glob
    import os

    stem = os.path.splitext(os.path.basename(rom))[0]
    return sorted(glob.glob(os.path.join(glob.escape(states_dir), glob.escape(stem) + "*.state")))


@dataclass
class RunRow:
    """One line of the multi-ROM table."""

    rom: str
    start: str  # "power-on" or the state's file name
    status: str  # "identical", "DIVERGED", "not compared"
    frames_identical: Optional[int] = None
    divergence: str = ""
    png: str = ""
    note: str = ""
    result: Optional[RolloutResult] = field(default=None, repr=False)


def _png_path(args, rom: str, start: str, frame: int, many: bool) -> str:
    import os

    if not many:
        return args.png or f"divergence-frame{frame}.png"
    stem = os.path.splitext(os.path.basename(rom))[0]
    tag = ""
    if start != "power-on":
        tag = "-" + (os.path.splitext(start)[0].replace(stem, "", 1).strip("-_.") or "state")
    name = f"divergence-{stem}{tag}-frame{frame}.png"
    if args.png:
        os.makedirs(args.png, exist_ok=True)
        return os.path.join(args.png, name)
    return name


def _reproduce(args, rom: str, state: Optional[str], frame: int) -> str:
    cmd = f"emurust verify rollout {rom} --frames {frame} --seed {args.seed} --render-every {args.render_every}"
    if args.policy != "random":
        cmd += f" --policy {args.policy}"
    if args.cgb != "auto":
        cmd += f" --cgb {args.cgb}"
    if args.no_boot_rom:
        cmd += " --no-boot-rom"
    if state:
        cmd += f" --start-state {state}"
    return cmd


def _run_one(args, rom: str, state: Optional[str], many: bool, progress_total: Optional[int]) -> RunRow:
    import os

    from .png import side_by_side, write_png

    start = os.path.basename(state) if state else "power-on"
    update, close = _progress_bar(progress_total) if progress_total else (None, lambda: None)
    try:
        r = rollout(
            rom,
            args.frames,
            seed=args.seed,
            render_every=args.render_every,
            compare_every=args.compare_every,
            state_every=args.state_every,
            progress=_progress_adapter(update) if update else None,
            boot_rom=not args.no_boot_rom,
            start_state=state,
            policy=args.policy,
            cgb={"auto": None, "on": True, "off": False}[args.cgb],
            sound_emulated=getattr(args, "sound_emulated", "on") == "on",
            sound_sample_rate=getattr(args, "sound_sample_rate", None),
        )
    except Exception as e:  # a ROM or state that cannot be loaded is reported, not fatal
        return RunRow(rom, start, "not compared", note=f"{type(e).__name__}: {e}")
    finally:
        close()
    if r.divergence is None:
        return RunRow(rom, start, "identical", r.frames_identical)
    row = RunRow(rom, start, "DIVERGED", r.frames_identical, str(r.divergence).split("\n")[0])
    row.result = r
    if r.screens is not None:
        row.png = _png_path(args, rom, start, r.divergence.frame, many)
        write_png(row.png, side_by_side(*r.screens))
    if getattr(args, "repair_prompt", None):
        from ..prompts import write_repair_prompt

        target = args.repair_prompt
        if many:
            base, ext = os.path.splitext(args.repair_prompt)
            stem = os.path.splitext(os.path.basename(rom))[0]
            target = f"{base}-{stem}{'' if not state else '-' + os.path.splitext(start)[0]}{ext or '.md'}"
        boot = "emurust from its post-boot state, PyBoy after its boot frames" if args.no_boot_rom else "both through PyBoy's DMG boot ROM"
        if state:
            boot = f"both from the PyBoy state {start}"
        write_repair_prompt(
            target,
            rom,
            r,
            reproduce=_reproduce(args, rom, state, r.divergence.frame),
            input_desc=f"{args.policy} button policy (seed {args.seed}), " + boot + (f", --cgb {args.cgb}" if args.cgb != "auto" else ""),
        )
        row.note = f"repair prompt: {target}"
    return row


def _print_table(rows: list[RunRow]) -> None:
    import os

    head = ("ROM", "start", "result", "frames identical", "first divergence / note", "PNG")
    lines = [
        (
            os.path.relpath(r.rom) if not r.rom.startswith("..") else r.rom,
            r.start,
            r.status,
            "" if r.frames_identical is None else str(r.frames_identical),
            r.divergence or r.note,
            r.png,
        )
        for r in rows
    ]
    widths = [max(len(h), *(len(l[i]) for l in lines)) if lines else len(h) for i, h in enumerate(head)]
    widths[4] = min(widths[4], 100)
    fmt = lambda cells: " | ".join(c.ljust(w) if i < 5 else c for i, (c, w) in enumerate(zip(cells, widths))).rstrip()  # noqa: E731
    print(fmt(head))
    print("-+-".join("-" * w for w in widths))
    for l in lines:
        print(fmt(l))
    n_div = sum(r.status == "DIVERGED" for r in rows)
    n_ok = sum(r.status == "identical" for r in rows)
    n_not = sum(r.status == "not compared" for r in rows)
    print(f"\n{len(rows)} runs: {n_ok} identical, {n_div} diverged, {n_not} not compared")


def _main(args) -> int:
    """0: every run identical; 1: at least one diverged; 2: none diverged but some could not
    be compared (a ROM or state that does not load, a ROM
    without a matching state under --states), or bad arguments."""
    import os
    import sys

    for flag in ("frames", "render_every", "compare_every", "state_every"):
        if getattr(args, flag) < 1:
            print(f"emurust: error: --{flag.replace('_', '-')} must be at least 1 (got {getattr(args, flag)})", file=sys.stderr)
            return 2
    try:
        roms = find_roms(args.rom)
    except FileNotFoundError as e:
        print(f"emurust: error: {e}", file=sys.stderr)
        return 2
    if not roms:
        print(f"emurust: error: no ROMs (*.gb, *.gbc) in {' '.join(args.rom)}", file=sys.stderr)
        return 2
    if args.start_state and (len(roms) > 1 or args.states):
        print("emurust: error: --start-state takes one ROM; use --states DIR for several", file=sys.stderr)
        return 2
    if args.states and not os.path.isdir(args.states):
        print(f"emurust: error: --states: no such folder: {args.states}", file=sys.stderr)
        return 2
    for rom in roms:
        note = battery_note(rom)
        if note:
            print(f"note: {os.path.basename(rom)}: {note}")
    jobs: list[tuple[str, Optional[str]]] = []
    rows: list[RunRow] = []
    for rom in roms:
        if args.states:
            found = states_for(rom, args.states)
            if not found:
                stem = os.path.splitext(os.path.basename(rom))[0]
                rows.append(RunRow(rom, "-", "not compared", note=f"no state {stem}*.state in {args.states}"))
            jobs += [(rom, st) for st in found]
        else:
            jobs.append((rom, args.start_state))
    many = len(roms) > 1 or len(jobs) > 1
    # Outputs written only on a divergence are checked before the runs, not after them.
    from ..command_line import check_output_dir, check_output_file

    if args.png:
        (check_output_dir if many else check_output_file)(args.png, "--png")
    if getattr(args, "repair_prompt", None):
        check_output_file(args.repair_prompt, "--repair-prompt")
    if not many and not jobs:  # one ROM, not compared: say why plainly
        print(rows[0].note)
        return 2
    for rom, state in jobs:
        if many and not args.quiet:
            print(f"{rom}{' from ' + os.path.basename(state) if state else ''} ...", file=sys.stderr, flush=True)
        rows.append(_run_one(args, rom, state, many, None if args.quiet else args.frames))
    if not many:
        row = rows[-1]
        if row.status == "identical":
            print(f"identical: {row.frames_identical} frames")
            return 0
        if row.status == "not compared":
            print(f"error: {row.note}", file=sys.stderr)
            return 2
        print(f"DIVERGED after {row.frames_identical} identical frames")
        print(str(row.result.divergence))
        if row.png:
            print(f"screens (emurust | PyBoy | difference): {row.png}")
        if row.note:
            print(row.note)
        return 1
    order = {rom: i for i, rom in enumerate(roms)}
    rows.sort(key=lambda r: order[r.rom])
    _print_table(rows)
    if any(r.status == "DIVERGED" for r in rows):
        return 1
    return 2 if any(r.status == "not compared" for r in rows) else 0


def add_parser(sub) -> None:
    p = sub.add_parser(
        "rollout",
        help="L3: run ROMs on emurust and PyBoy side by side, compare every frame",
        description="Run each ROM on emurust and PyBoy 2.8.1 with the same buttons and compare them every frame. "
        "Several ROMs or folders give a table; exit status 0 = all identical, 1 = some diverged, 2 = some not compared.",
    )
    p.add_argument("rom", nargs="+", help="ROM files and/or folders (searched for *.gb, *.gbc)")
    p.add_argument("--frames", type=_count, default=3000, help="frames to compare per ROM (default 3000)")
    p.add_argument("--seed", type=_seed, default=0, help="seed of the button schedule")
    p.add_argument("--policy", choices=POLICIES, default="random", help="buttons: random presses (default), long holds, or menu mashing (rapid A/START)")
    p.add_argument(
        "--cgb",
        choices=("auto", "on", "off"),
        default="auto",
        help="hardware of both emulators: auto (default) chooses as PyBoy does (a ROM whose header sets 0x0143 bit 7 runs "
        "as a Game Boy Color), on: Game Boy Color, off: DMG (PyBoy(cgb=False))",
    )
    p.add_argument("--render-every", type=_count, default=1, metavar="K", help="draw and compare the screen every K frames")
    p.add_argument("--compare-every", type=_count, default=1, metavar="K", help="compare the full state every K frames (and at the end)")
    p.add_argument("--state-every", type=_count, default=1, metavar="K", help="include the CPU cycle count and STAT (from PyBoy's save state) every K frames")
    p.add_argument("--no-boot-rom", action="store_true", help="start emurust in its post-boot state (VRAM not compared)")
    p.add_argument(
        "--png",
        metavar="FILE",
        help="where to write the side-by-side screens on divergence (default: divergence-frameN.png in the current directory; a folder when there are several runs)",
    )
    p.add_argument(
        "--start-state",
        metavar="FILE",
        help="start both from this PyBoy 2.8.1 .state (PyBoy loads it natively, emurust via load_pyboy_state)",
    )
    p.add_argument("--states", metavar="DIR", help="run each ROM from each PyBoy .state in DIR named ROMNAME*.state")
    p.add_argument("--sound-emulated", choices=("on", "off"), default="on", help="both emulate sound (PyBoy's default) or not")
    p.add_argument("--sound-sample-rate", type=int_range(1, 1_000_000), metavar="HZ", help="audio sample rate of both (default: PyBoy's, 48000)")
    p.add_argument("--repair-prompt", metavar="FILE", help="on divergence, fill the repair template into FILE (FILE-ROMNAME.md with several runs)")
    p.add_argument("--quiet", action="store_true", help="no progress bar")
    p.set_defaults(func=_main)


# ---------------------------------------------------------------- make-states


def make_states(rom: str, frames: list[int], seed: int, out_dir: str, policy: str = "random", cgb: str = "auto") -> list[str]:
    """Run `rom` on PyBoy 2.8.1 (from power-on, through its boot ROM) with the button policy and
    save a .state at each frame in `frames`: ``OUT/ROMNAME-f{frame}-{policy}-s{seed}.state``.
    `cgb`: "auto" lets PyBoy choose from the header (a CGB-flagged ROM runs as a Game Boy Color),
    "on" forces Game Boy Color hardware, "off" runs PyBoy with cgb=False."""
    import io
    import os

    frames = sorted(set(frames))
    if not frames or frames[0] < 1:
        raise ValueError("--frames: positive frame numbers, e.g. 600,1800")
    stem = os.path.splitext(os.path.basename(rom))[0]
    schedule = button_schedule(seed, frames[-1], policy=policy)
    pb = make_pyboy(rom, cgb={"auto": None, "on": True, "off": False}[cgb])
    os.makedirs(out_dir, exist_ok=True)  # once PyBoy took the ROM: no folder left for a bad one
    written = []
    try:
        done = 0
        for target in frames:
            while done < target:
                for action, button in schedule[done]:
                    getattr(pb, f"button_{action}")(button)
                pb.tick(1, True)
                done += 1
            buf = io.BytesIO()
            pb.save_state(buf)
            path = os.path.join(out_dir, f"{stem}-f{target}-{policy}-s{seed}.state")
            with open(path, "wb") as f:
                f.write(buf.getvalue())
            written.append(path)
    finally:
        pb.stop(save=False)
    return written


def _make_states_main(args) -> int:
    check_rom_file(args.rom)
    check_output_dir(args.out, "--out")
    try:
        from pyboy.utils import PyBoyException
    except ImportError:  # pragma: no cover - depends on the environment
        raise UsageError("make-states needs PyBoy: pip install pyboy==2.8.1") from None
    try:
        paths = make_states(args.rom, args.frames, args.seed, args.out, args.policy, args.cgb)
    except (ValueError, OSError, PyBoyException) as e:
        raise UsageError(f"cannot make states of {args.rom}: {e}") from None
    for p in paths:
        print(p)
    return 0


def _frame_list(text: str) -> list[int]:
    """An argparse type: frame numbers >= 1 separated by commas."""
    one = int_range(1, MAX_FRAMES)
    frames = [one(x.strip()) for x in text.split(",") if x.strip()]
    if not frames:
        raise argparse.ArgumentTypeError("needs at least one frame number")
    return frames


_seed = int_range(0, MAX_SEED)
_count = int_range(1, MAX_FRAMES)


def add_make_states_parser(sub) -> None:
    p = sub.add_parser(
        "make-states",
        help="save PyBoy 2.8.1 states mid-game (for rollout --states / --start-state)",
        description="Run a ROM on PyBoy 2.8.1 with a button policy and save .state files at the given frames, "
        "named ROMNAME-fFRAME-POLICY-sSEED.state.",
    )
    p.add_argument("rom", metavar="ROM", help="the .gb/.gbc file to run on PyBoy")
    p.add_argument("--frames", type=_frame_list, default=[600, 1800], help="comma-separated frame numbers (default 600,1800)")
    p.add_argument("--seed", type=_seed, default=0, help="seed of the button schedule")
    p.add_argument("--policy", choices=POLICIES, default="random", help="buttons: random presses (default), long holds, or menu mashing")
    p.add_argument("--cgb", choices=("auto", "on", "off"), default="auto", help="PyBoy's hardware: auto (its choice from the header), on (Game Boy Color), off (DMG)")
    p.add_argument("--out", required=True, metavar="DIR", help="folder for the .state files (created if missing)")
    p.set_defaults(func=_make_states_main)
