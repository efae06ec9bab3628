"""Tooling side of ``emurust.PyBoy``: creating the Rust core for a set of PyBoy options.

This is the ONE place where PyBoy constructor options that need core support are turned into
an ``emurust._core.GameBoy``. Options the core cannot honour yet raise NotImplementedError
here, naming the feature. When the core gains them, wire them in :func:`make_core` and
delete the corresponding check in :data:`_PENDING_CORE_FEATURES`.
"""

from __future__ import annotations

import importlib.util
import os
from typing import Optional

from .. import _core

#: Sample rate of the core's audio (PyBoy's default, ``sound_sample_rate=None``).
CORE_SAMPLE_RATE = 48_000

#: Frames PyBoy's DMG boot ROM runs completely before unmapping itself during the next one
#: (used only when PyBoy's boot ROM is unavailable, see :func:`default_boot_rom`).
BOOT_FRAMES = 64


def _core_supports(name: str) -> bool:
    """Whether the compiled core's GameBoy constructor accepts keyword ``name``."""
    doc = _core.GameBoy.__text_signature__ or ""
    return name in doc


def make_core(
    rom: bytes,
    boot_rom: Optional[bytes],
    *,
    sound_emulated: bool,
    sound_sample_rate: Optional[int],
    cgb: bool,
) -> "_core.GameBoy":
    """The core emulator for these PyBoy options (the single wiring point, see module doc).

    ``cgb`` is the resolved emulation mode (PyBoy's ``mb.cgb``), ``sound_sample_rate`` the
    resolved rate in Hz.
    """
    kwargs = {}
    if _core_supports("cgb"):
        # The resolved mode, always: a CGB cartridge with cgb=False must stay on the DMG.
        kwargs["cgb"] = bool(cgb)
    elif cgb:
        raise NotImplementedError(
            "emurust.PyBoy: Game Boy Color mode (cgb=True, or a CGB cartridge with cgb=None) "
            "is not available in this build of the emurust core; pass cgb=False to run the "
            "cartridge in DMG mode"
        )
    if not sound_emulated:
        if not _core_supports("sound_emulated"):
            raise NotImplementedError(
                "emurust.PyBoy: sound_emulated=False (PyBoy's no-APU mode) is not available in "
                "this build of the emurust core"
            )
        kwargs["sound_emulated"] = False
    if sound_sample_rate != CORE_SAMPLE_RATE:
        if not _core_supports("sound_sample_rate"):
            raise NotImplementedError(
                f"emurust.PyBoy: sound_sample_rate={sound_sample_rate} is not available in this "
                f"build of the emurust core (it samples at {CORE_SAMPLE_RATE} Hz, PyBoy's default)"
            )
        kwargs["sound_sample_rate"] = sound_sample_rate
    return _core.GameBoy(rom, boot_rom=boot_rom, **kwargs)


def default_boot_rom(cgb: bool = False) -> Optional[bytes]:
    """PyBoy's own boot ROM (the DMG one, or with ``cgb`` the one PyBoy runs on Game Boy Color
    hardware), read from the installed ``pyboy`` package, or None.

    PyBoy always powers on through a boot ROM. emurust does not ship one; when ``pyboy`` is
    installed its file is used so that the first frames match PyBoy exactly.
    """
    spec = importlib.util.find_spec("pyboy")
    if spec is None or spec.origin is None:
        return None
    path = os.path.join(os.path.dirname(spec.origin), "core", "bootrom_cgb.bin" if cgb else "bootrom_dmg.bin")
    try:
        with open(path, "rb") as f:
            return f.read()
    except OSError:
        return None
