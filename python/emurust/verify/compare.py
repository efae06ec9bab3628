"""Side-by-side runs of emurust and PyBoy 2.8.1, compared at every frame boundary.

A :class:`Snapshot` holds what both emulators can show: CPU registers, the memory regions a
program can observe (WRAM, HRAM, VRAM, OAM, I/O registers, IE, cartridge RAM) and, when drawn,
the screen. :func:`first_divergence` names the first difference precisely.

PyBoy is only driven through its public API (``tick``, ``memory``, ``register_file``,
``save_state``, ``screen``, ``button_press``/``button_release``).
"""

from __future__ import annotations

import io
import os
import struct
from dataclasses import dataclass, field
from typing import Optional

import numpy as np

from emurust._core import read_user_file

PYBOY_VERSION = "2.8.1"

#: Observable memory regions compared at every frame: name -> (start, end exclusive).
REGIONS = {
    "WRAM": (0xC000, 0xE000),
    "VRAM": (0x8000, 0xA000),
    "OAM": (0xFE00, 0xFEA0),
    "IO": (0xFF00, 0xFF80),
    "HRAM": (0xFF80, 0xFFFF),
    "IE": (0xFFFF, 0x10000),
}

REGISTERS = ("a", "f", "b", "c", "d", "e", "hl", "sp", "pc")

# Reading these through PyBoy's memory view has side effects (a read of FF41 consumes the
# "LYC written while the LCD was off" mode override, which would change what the program reads
# next), so they are never read through it: both sides report the register as stored, taken
# from their PyBoy-format save states (the override itself is not observable without a read).
_PYBOY_STATE_IO = {0xFF41}
# Offset of STAT in a PyBoy 2.8.1 DMG save state: header (6) + CPU (27) + DMA (12) + VRAM + OAM + 4.
_PYBOY_STAT_OFFSET = 6 + 27 + 12 + 0x2000 + 0xA0 + 4
_PYBOY_CYCLES_OFFSET = 6 + 6 + 6 + 7
#: On Game Boy Color hardware the header is followed by the 10-byte HDMA block.
_PYBOY_CGB_SHIFT = 10


@dataclass
class Snapshot:
    registers: dict
    regions: dict
    cart_ram: bytes = b""
    screen: Optional[np.ndarray] = None
    cycles: Optional[int] = None
    serial: bytes = b""
    sound: Optional[np.ndarray] = None
    #: Game Boy Color only: VRAM bank 1 and work RAM banks 1-7 (whatever the CPU sees).
    cgb_memory: dict = field(default_factory=dict)


@dataclass
class Divergence:
    frame: int
    component: str
    where: str
    emurust: object
    pyboy: object
    trace: list = field(default_factory=list)

    def __str__(self) -> str:
        def fmt(v):
            return f"{v:#04x}" if isinstance(v, int) else repr(v)

        s = f"frame {self.frame}: {self.component} {self.where}: emurust {fmt(self.emurust)}, PyBoy {fmt(self.pyboy)}"
        if self.trace:
            s += "\n  last instructions (emurust PC trace, oldest first): " + " ".join(f"{pc:04X}" for pc in self.trace)
        return s


def pyboy_boot_rom_path(cgb: bool = False) -> str:
    """PyBoy's built-in boot ROM: the DMG one, or with `cgb` the one it runs on Game Boy Color
    hardware (also 256 bytes; emurust runs it as CGB when given ``cgb=True``)."""
    import importlib.util

    spec = importlib.util.find_spec("pyboy")
    if spec is None or spec.origin is None:
        raise RuntimeError(f"PyBoy is not installed: pip install pyboy=={PYBOY_VERSION}")
    return os.path.join(os.path.dirname(spec.origin), "core", "bootrom_cgb.bin" if cgb else "bootrom_dmg.bin")


def pyboy_hardware_is_cgb(rom_path: str, cgb: Optional[bool] = None) -> bool:
    """Whether PyBoy 2.8.1 (no boot ROM argument) runs `rom_path` on Game Boy Color hardware:
    `cgb` if given, else bit 7 of the header's CGB flag (0x143)."""
    if cgb is not None:
        return bool(cgb)
    with open(rom_path, "rb") as f:
        f.seek(0x143)
        flag = f.read(1)
    return bool(flag and flag[0] & 0x80)


def battery_saves_beside(rom_path: str) -> list[str]:
    """The battery saves PyBoy would load by itself for this ROM (``<rom>.ram``, ``<rom>.rtc``)."""
    return [p for p in (rom_path + ".ram", rom_path + ".rtc") if os.path.isfile(p)]


def battery_note(rom_path: str) -> Optional[str]:
    """What the verifier says when a battery save sits beside the ROM: both sides start without it."""
    found = battery_saves_beside(rom_path)
    if not found:
        return None
    names = " and ".join(os.path.basename(p) for p in found)
    return f"battery save {names} beside the ROM: not loaded on either side (both emulators start with the cartridge RAM and clock of power-on)"


def make_pyboy(
    rom_path: str,
    cgb: Optional[bool] = None,
    sound_emulated: bool = True,
    sound_sample_rate: Optional[int] = None,
):
    """PyBoy 2.8.1 on `rom_path`, windowless. `cgb`: PyBoy's own argument (None: it runs a ROM
    whose header sets bit 7 of 0x0143 as a Game Boy Color; False: always as a DMG);
    `sound_emulated`, `sound_sample_rate`: PyBoy's sound options."""
    import pyboy as _pyboy

    if _pyboy.__version__ != PYBOY_VERSION if hasattr(_pyboy, "__version__") else False:
        raise RuntimeError(f"the reference is PyBoy {PYBOY_VERSION}, found {_pyboy.__version__}")
    import logging

    logging.getLogger("pyboy").setLevel(logging.ERROR)
    # The ROM as a stream, not a path: given a path, PyBoy also loads <rom>.ram and <rom>.rtc
    # by itself, and the emurust side starts without them. Both start without a battery save
    # (see battery_saves_beside; the commands say so when one is there).
    return _pyboy.PyBoy(
        io.BytesIO(read_user_file(rom_path, "ROM")),
        window="null",
        cgb=cgb,
        sound_emulated=sound_emulated,
        sound_sample_rate=sound_sample_rate,
    )


def snapshot_pyboy(pb, screen: bool, cart_ram_banks: int = 0, with_state: bool = True, cgb: bool = False) -> Snapshot:
    """PyBoy's observable state. `with_state` also takes its save state (about 15 ms) for the
    cycle counter and STAT; without it those two are left out of the comparison."""
    rf = pb.register_file
    regs = {"a": rf.A, "f": rf.F, "b": rf.B, "c": rf.C, "d": rf.D, "e": rf.E, "hl": rf.HL, "sp": rf.SP, "pc": rf.PC}
    state = None
    if with_state:
        buf = io.BytesIO()
        pb.save_state(buf)
        state = buf.getvalue()
    regions = {}
    for name, (lo, hi) in REGIONS.items():
        data = bytearray()
        start = lo
        for addr in sorted(a for a in _PYBOY_STATE_IO if lo <= a < hi) + [hi]:
            # Read around the side-effecting registers, never through them.
            if addr > start:
                data += bytes(pb.memory[start:addr]) if addr - start > 1 else bytes([pb.memory[start]])
            if addr < hi:
                data.append(state[_PYBOY_STAT_OFFSET + (_PYBOY_CGB_SHIFT if cgb else 0)] if state else 0)
            start = addr + 1
        regions[name] = bytes(data)
    shift = _PYBOY_CGB_SHIFT if cgb else 0
    cycles = struct.unpack_from("<Q", state, _PYBOY_CYCLES_OFFSET + shift)[0] if state else None
    cgb_memory = {}
    if cgb:
        cgb_memory["VRAM bank 1"] = bytes(pb.memory[1, 0x8000:0x9FFF]) + bytes([pb.memory[1, 0x9FFF]])
        for b in range(1, 8):
            cgb_memory[f"WRAM bank {b}"] = bytes(pb.memory[b, 0xD000:0xDFFF]) + bytes([pb.memory[b, 0xDFFF]])
    return Snapshot(
        regs,
        regions,
        cart_ram=_pyboy_cart_ram(pb, cart_ram_banks),
        screen=pb.screen.ndarray.copy() if screen else None,
        cycles=cycles,
        sound=_pyboy_samples(pb),
        cgb_memory=cgb_memory,
    )


def _pyboy_samples(pb) -> Optional[np.ndarray]:
    """This frame's samples, or None when PyBoy does not emulate sound."""
    from pyboy.utils import PyBoyFeatureDisabledError

    try:
        return pb.sound.ndarray.copy()
    except PyBoyFeatureDisabledError:
        return None


def _pyboy_cart_ram(pb, banks: int) -> bytes:
    """The first `banks` 8 KiB banks of PyBoy's cartridge RAM (its bounds check admits one too many)."""
    out = bytearray()
    for bank in range(banks):
        # PyBoy's banked slices must end inside the bank: read the last byte on its own.
        out += bytes(pb.memory[bank, 0xA000:0xBFFF]) + bytes([pb.memory[bank, 0xBFFF]])
    return bytes(out)


def snapshot_emurust(gb, screen: bool, with_state: bool = True) -> Snapshot:
    """emurust's observable state; without `with_state`, STAT and the cycle counter are left
    out exactly as :func:`snapshot_pyboy` leaves them out."""
    r = gb.registers()
    regs = {k: r[k] for k in REGISTERS}
    regions = {name: gb.read(lo, hi - lo) for name, (lo, hi) in REGIONS.items()}
    # As for PyBoy: the stored value from the PyBoy-format state (gb.read gives what a CPU
    # read would return, with any pending mode override applied), or 0 without states.
    state = gb.save_pyboy_state() if with_state else None
    for addr in _PYBOY_STATE_IO:
        for name, (lo, hi) in REGIONS.items():
            if lo <= addr < hi:
                data = bytearray(regions[name])
                data[addr - lo] = state[_PYBOY_STAT_OFFSET + (_PYBOY_CGB_SHIFT if gb.cgb else 0)] if state else 0
                regions[name] = bytes(data)
    cgb_memory = {}
    if gb.cgb:
        cgb_memory["VRAM bank 1"] = bytes(gb.vram_bank1())
        wram = bytes(gb.wram_banks())
        for b in range(1, 8):
            cgb_memory[f"WRAM bank {b}"] = wram[b * 0x1000 : (b + 1) * 0x1000]
    return Snapshot(
        regs,
        regions,
        cgb_memory=cgb_memory,
        cart_ram=bytes(gb.cartridge_ram()),
        screen=gb.screen_rgba() if screen else None,
        cycles=gb.cycles if with_state else None,
        sound=gb.sound_samples() if gb.sound_emulated else None,
    )


def first_divergence(frame: int, ours: Snapshot, ref: Snapshot, skip=()) -> Optional[Divergence]:
    if ours.cycles is not None and ref.cycles is not None and ours.cycles != ref.cycles:
        return Divergence(frame, "clock", "CPU cycles since power-on", ours.cycles, ref.cycles)
    for k in REGISTERS:
        if ours.registers[k] != ref.registers[k]:
            return Divergence(frame, "CPU", f"register {k.upper()}", ours.registers[k], ref.registers[k])
    for name, (lo, _) in REGIONS.items():
        if name in skip:
            continue
        a, b = ours.regions[name], ref.regions[name]
        if a != b:
            i = next(i for i in range(len(a)) if a[i] != b[i])
            return Divergence(frame, name, f"{lo + i:#06x}", a[i], b[i])
    for name, a in ours.cgb_memory.items():
        if name in skip:
            continue
        b = ref.cgb_memory.get(name)
        if b is not None and a != b:
            i = next(i for i in range(len(a)) if a[i] != b[i])
            base = 0x8000 if name.startswith("VRAM") else 0xD000
            return Divergence(frame, name, f"{base + i:#06x}", a[i], b[i])
    if ours.cart_ram != ref.cart_ram:
        a, b = ours.cart_ram, ref.cart_ram
        if len(a) != len(b):
            return Divergence(frame, "cartridge RAM", "size", len(a), len(b))
        i = next(i for i in range(len(a)) if a[i] != b[i])
        return Divergence(frame, "cartridge RAM", f"bank {i // 0x2000} {0xA000 + i % 0x2000:#06x}", a[i], b[i])
    if ours.screen is not None and ref.screen is not None and not np.array_equal(ours.screen, ref.screen):
        ys, xs = np.nonzero(np.any(ours.screen != ref.screen, axis=-1))
        y, x = int(ys[0]), int(xs[0])
        return Divergence(frame, "screen", f"pixel (x={x}, y={y}) of {len(ys)} differing", tuple(ours.screen[y, x]), tuple(ref.screen[y, x]))
    if ours.sound is not None and ref.sound is not None and not np.array_equal(ours.sound, ref.sound):
        if ours.sound.shape != ref.sound.shape:
            return Divergence(frame, "sound", "samples this frame", ours.sound.shape[0], ref.sound.shape[0])
        i = int(np.nonzero(np.any(ours.sound != ref.sound, axis=-1))[0][0])
        return Divergence(frame, "sound", f"sample {i} (left, right)", tuple(int(v) for v in ours.sound[i]), tuple(int(v) for v in ref.sound[i]))
    return None
