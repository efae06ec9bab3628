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


@dataclass
class RolloutResult:
    frames_identical: int
    divergence: Optional[Divergence]
    serial_emurust: bytes
    serial_pyboy: bytes


def rollout(
    rom_path: str,
    frames: int,
    seed: Optional[int] = None,
    render_every: int = 1,
    compare_every: int = 1,
    progress: Optional[Callable[[int], None]] = None,
    before_frame: Optional[Callable[[object, int], None]] = None,
    boot_rom: bool = True,
) -> RolloutResult:
    """Run `frames` frames on both emulators; compare after every `compare_every` frames.

    Frames are ticked one at a time; the screen is drawn (and compared) on frames whose index is a
    multiple of `render_every`. `seed` = None sends no input.
    """
    import emurust

    with open(pyboy_boot_rom_path(), "rb") as f:
        boot = f.read()
    gb = emurust.GameBoy(rom_path, boot_rom=boot if boot_rom else None)
    pb = make_pyboy(rom_path)
    skip = () if boot_rom else ("VRAM",)
    if not boot_rom:
        pb.tick(BOOT_FRAMES, False)
        pb._serial()
    schedule = button_schedule(seed, frames) if seed is not None else [[] for _ in range(frames)]
    serial_pb = bytearray()
    try:
        for frame in range(1, frames + 1):
            for action, button in schedule[frame - 1]:
                getattr(gb, f"button_{action}")(button)
                getattr(pb, f"button_{action}")(button)
            render = render_every > 0 and frame % render_every == 0 and boot_rom
            if before_frame:
                before_frame(gb, frame)
            gb.tick(1, render)
            pb.tick(1, render)
            serial_pb += pb._serial().encode("latin-1")
            if frame % compare_every == 0 or frame == frames:
                d = first_divergence(
                    frame,
                    snapshot_emurust(gb, render),
                    snapshot_pyboy(pb, render, len(gb.cartridge_ram()) // 0x2000),
                    skip=skip,
                )
                if d is None and bytes(gb.serial_output()) != bytes(serial_pb):
                    d = Divergence(frame, "serial", "output so far", bytes(gb.serial_output())[-40:], bytes(serial_pb)[-40:])
                if d is not None:
                    d.trace = gb.pc_trace()
                    return RolloutResult(frame - 1, d, gb.serial_output(), bytes(serial_pb))
            if progress:
                progress(frame)
        return RolloutResult(frames, None, gb.serial_output(), bytes(serial_pb))
    finally:
        pb.stop(save=False)
