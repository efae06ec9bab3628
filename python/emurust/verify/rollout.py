"""L3 rollouts: emurust and PyBoy 2.8.1 side by side, compared at every frame.

Both power on through the DMG boot ROM shipped inside the installed ``pyboy`` package and get
the same seeded random button schedule. The run stops at the first divergence.
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from typing import Callable, Optional

from .compare import (
    Divergence,
    first_divergence,
    make_pyboy,
    pyboy_boot_rom_path,
    snapshot_emurust,
    snapshot_pyboy,
)

#: Frames PyBoy's DMG boot ROM fills completely; it unmaps itself during the next one.
BOOT_FRAMES = 64

BUTTON_NAMES = ("right", "left", "up", "down", "a", "b", "select", "start")


def button_schedule(seed: int, frames: int, change_probability: float = 0.1) -> list[list[tuple[str, str]]]:
    """Per frame, the (action, button) events to send before that frame; reproducible from `seed`."""
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

    `sound_emulated` and `sound_sample_rate` are given to both (PyBoy's constructor options).
    """
    import emurust

    with open(pyboy_boot_rom_path(), "rb") as f:
        boot = f.read()
    sound = dict(sound_emulated=sound_emulated, sound_sample_rate=sound_sample_rate)
    gb = emurust.GameBoy(rom_path, boot_rom=boot if boot_rom else None, **sound)
    pb = make_pyboy(rom_path, **sound)
    skip = () if boot_rom else ("VRAM",)
    if start_state is not None:
        import io

        if isinstance(start_state, (bytes, bytearray)):
            state = bytes(start_state)
        else:
            with open(start_state, "rb") as f:
                state = f.read()
        gb.load_pyboy_state(state)
        pb.load_state(io.BytesIO(pyboy_state_without_wall_clock(state, gb)))
        skip = ()
    elif not boot_rom:
        pb.tick(BOOT_FRAMES, False)
        pb._serial()
    schedule = button_schedule(seed, frames) if seed is not None else [[] for _ in range(frames)]
    serial_pb = bytearray()
    try:
        pattern = random.Random(tick_pattern_seed) if tick_pattern_seed is not None else None
        frame = 0
        while frame < frames:
            if pattern is not None:
                n = min(pattern.randint(1, 4), frames - frame)
                render = pattern.random() < 0.5 and boot_rom
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
            if pattern is not None or frame % compare_every == 0 or frame == frames:
                with_state = state_every <= 1 or frame % state_every == 0 or frame == frames
                d = first_divergence(
                    frame,
                    snapshot_emurust(gb, render, with_state),
                    snapshot_pyboy(pb, render, len(gb.cartridge_ram()) // 0x2000, with_state),
                    skip=skip,
                )
                if d is None and bytes(gb.serial_output()) != bytes(serial_pb):
                    d = Divergence(frame, "serial", "output so far", bytes(gb.serial_output())[-40:], bytes(serial_pb)[-40:])
                if d is not None:
                    d.trace = gb.pc_trace()
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


def _main(args) -> int:
    import os
    import sys

    from .png import side_by_side, write_png

    if not os.path.isfile(args.rom):
        print(f"error: ROM not found: {args.rom}", file=sys.stderr)
        return 2
    update, close = _progress_bar(args.frames) if not args.quiet else (None, lambda: None)
    try:
        r = rollout(
            args.rom,
            args.frames,
            seed=args.seed,
            render_every=args.render_every,
            progress=_progress_adapter(update) if update else None,
            boot_rom=not args.no_boot_rom,
            start_state=getattr(args, "start_state", None),
            sound_emulated=getattr(args, "sound_emulated", "on") == "on",
            sound_sample_rate=getattr(args, "sound_sample_rate", None),
        )
    finally:
        close()
    if r.divergence is None:
        print(f"identical: {r.frames_identical} frames")
        return 0
    print(f"DIVERGED after {r.frames_identical} identical frames")
    print(str(r.divergence))
    png = args.png or f"divergence-frame{r.divergence.frame}.png"
    if r.screens is not None:
        write_png(png, side_by_side(*r.screens))
        print(f"screens (emurust | PyBoy | difference): {png}")
    if getattr(args, "repair_prompt", None):
        from ..prompts import write_repair_prompt

        boot = " --no-boot-rom" if args.no_boot_rom else ""
        write_repair_prompt(
            args.repair_prompt,
            args.rom,
            r,
            reproduce=f"emurust verify rollout {args.rom} --frames {r.divergence.frame} --seed {args.seed}"
            f" --render-every {args.render_every}{boot}",
            input_desc=f"seeded random buttons (seed {args.seed}), "
            + ("emurust from its post-boot state, PyBoy after its boot frames" if args.no_boot_rom else "both through PyBoy's DMG boot ROM"),
        )
        print(f"repair prompt: {args.repair_prompt}")
    return 1


def add_parser(sub) -> None:
    p = sub.add_parser("rollout", help="L3: run a ROM on emurust and PyBoy side by side, compare every frame")
    p.add_argument("rom")
    p.add_argument("--frames", type=int, default=3000)
    p.add_argument("--seed", type=int, default=0, help="seed of the random button schedule")
    p.add_argument("--render-every", type=int, default=1, metavar="K", help="draw and compare the screen every K frames")
    p.add_argument("--no-boot-rom", action="store_true", help="start emurust in its post-boot state (VRAM not compared)")
    p.add_argument("--png", help="where to write the side-by-side screens on divergence")
    p.add_argument(
        "--start-state",
        metavar="FILE",
        help="start both from this PyBoy 2.8.1 .state (PyBoy loads it natively, emurust via load_pyboy_state)",
    )
    p.add_argument("--sound-emulated", choices=("on", "off"), default="on", help="both emulate sound (PyBoy's default) or not")
    p.add_argument("--sound-sample-rate", type=int, metavar="HZ", help="audio sample rate of both (default: PyBoy's, 48000)")
    p.add_argument("--repair-prompt", metavar="FILE", help="on divergence, fill the repair template into FILE")
    p.add_argument("--quiet", action="store_true", help="no progress bar")
    p.set_defaults(func=_main)
