"""emurust: fast, batched Game Boy (DMG) environments, bit-exact with PyBoy 2.8.1.

The emulator core is Rust (``emurust._core``); this package adds the Python-facing API,
the verification layer (``emurust.verify``) and the command line (``emurust ...``).
"""

from __future__ import annotations

import os
from typing import Union

from . import _core
from . import games as _game_tasks
from ._core import EmurustError, RomError, StateError

__all__ = [
    "GameBoy",
    "PyBoy",
    "EmurustError",
    "RomError",
    "StateError",
    "BUTTONS",
    "set_num_threads",
    "get_num_threads",
    "__version__",
]
__version__ = _core.__version__
BUTTONS = tuple(_core.BUTTONS)

#: ``set_num_threads(n)``: size of the one thread pool that batches (``emurust.envs``,
#: ``emurust.sb3``) share in this process; default: the environment variable
#: ``EMURUST_NUM_THREADS``, else the number of CPUs. Batches created later use it; a batch given
#: another ``num_threads`` gets a pool of its own. ``get_num_threads()`` tells the size.
set_num_threads = _core.set_num_threads
get_num_threads = _core.get_num_threads

RomLike = Union[str, "os.PathLike[str]", bytes, bytearray]


class GameBoy(_core.GameBoy):
    """One Game Boy (DMG) or Game Boy Color emulator.

    ``GameBoy(rom, boot_rom=None, cgb=None, sound_emulated=True, sound_sample_rate=48000)``:
    ``rom`` is a path or the ROM's bytes. With
    ``boot_rom`` (path or 256 bytes, e.g. PyBoy's, see :func:`emurust.pyboy_boot_rom`) the machine
    powers on into it; without, it starts in the state the boot ROM leaves.

    Hardware, exactly as PyBoy 2.8.1 picks it: ``cgb=None`` runs Game Boy Color hardware when the
    header's CGB flag (0x143) has bit 7 set (0x80 CGB-compatible, 0xC0 CGB-only), or, with a user
    boot ROM, when that boot ROM is longer than 256 bytes (a 2304-byte CGB boot ROM); ``cgb=True``
    forces the Game Boy Color (a DMG game then runs in its DMG mode, drawn with PyBoy's
    compatibility colours), ``cgb=False`` the DMG. ``cgb=True`` also accepts a 256-byte boot ROM
    and runs it as the CGB's, as PyBoy runs its built-in ``bootrom_cgb.bin``. ``cgb`` and
    ``cgb_mode`` tell what runs. On the Game Boy Color ``screen`` shows PyBoy's colours (15-bit
    colour c as R = (c & 31) << 3, G, B likewise), and ``screen_grey`` their PIL ``convert("L")``
    luma, the grey a PyBoy user gets from ``pyboy.screen.image.convert("L")``.

    ``sound_emulated`` and ``sound_sample_rate`` are PyBoy's constructor options of the same
    names, and behave as in PyBoy: without sound emulation FF10-FF3F read 0 and ignore writes
    and there are no samples (faster); the sample rate also decides when the APU catches up,
    which programs can observe through wave RAM. Save states carry them: a state loads only
    into an emulator created with the same.

    Frames: ``tick(frames=1, render=True)`` runs exactly what one PyBoy ``tick()`` runs per frame,
    drawing only the last frame when ``render``. Long calls release the GIL and handle signals
    every ~50 ms: Ctrl-C raises ``KeyboardInterrupt`` and leaves the machine at a frame boundary
    (``frame_count`` tells how far it got). One emulator must not be used from two threads at
    once: a call made while another thread is inside ``tick`` raises ``RuntimeError``.
    Memory: ``read(addr[, length])`` (no side effects), ``write(addr, value)`` (as the CPU would),
    ``read_rom_bank(bank, addr)``. CPU: ``registers()``, ``set_register(name, value)``.
    Input: ``button_press(name)``, ``button_release(name)``, ``buttons`` (bit mask); names are
    those of :data:`BUTTONS`. Serial: ``serial_output()``. States: ``save_state() -> bytes``,
    ``load_state(bytes)`` (a corrupt or foreign state raises :class:`StateError` and changes
    nothing). Cartridge RAM: ``cartridge_ram()``, ``set_cartridge_ram(bytes)``,
    ``battery_save()``, ``load_battery_save(bytes)``. Screen: ``screen_rgba()`` (144x160x4, as
    PyBoy's ``screen.ndarray``), ``screen_shades()`` (144x160, 0-3).
    PyBoy interop: ``save_pyboy_state() -> bytes`` (a PyBoy 2.8.1 ``.state``),
    ``load_pyboy_state(bytes_or_path)``, ``GameBoy.from_pyboy_state(rom, state)``.

    What verification and the PyBoy-compatible API need beyond this (CPU reads with side
    effects, breakpoints, direct VRAM/WRAM/cartridge RAM access, ROM patches, the last
    instructions executed) is on a separate object, ``emurust._core.Host(gb)``, as PyBoy keeps
    its internals apart from its API.
    """

    @classmethod
    def from_pyboy_state(cls, rom: RomLike, state: Union[RomLike, "os.PathLike[str]"], **kwargs) -> "GameBoy":
        """A new emulator for ``rom`` that continues from a PyBoy 2.8.1 save state (bytes or path),
        exactly as PyBoy does after ``load_state``. Raises :class:`StateError` if it does not fit.

        Every format version PyBoy 2.8.1 loads is accepted (0 to 29). PyBoy loads a state into its
        running instance, and an older version leaves what it lacks as that instance has it; here
        that instance is a freshly created PyBoy's (``PyBoy(rom)`` then ``load_state``). With a
        ``boot_rom`` argument the state is loaded into the new emulator as it is."""
        gb = cls(rom, **kwargs)
        if kwargs.get("boot_rom") is None:
            gb._become_pyboy_state(state)
        else:
            gb.load_pyboy_state(state)
        return gb




def __getattr__(name):
    # `from emurust import PyBoy`: PyBoy 2.8.1's API on this core, imported on first use so
    # that `import emurust` stays light.
    if name == "PyBoy":
        from .pyboy_api import PyBoy

        return PyBoy
    raise AttributeError(f"module 'emurust' has no attribute {name!r}")

try:  # make gymnasium.make("emurust/Dodge-v0") work right after `import emurust`
    from ._registration import register_envs as _register_envs

    _register_envs()
except ImportError:  # gymnasium is optional
    pass


def pyboy_boot_rom() -> bytes:
    """The DMG boot ROM shipped inside the installed ``pyboy`` package (read at run time)."""
    try:
        import pyboy  # noqa: F401  (only to locate the package)
    except ImportError as e:  # pragma: no cover - depends on the environment
        raise RuntimeError("pyboy is not installed: pip install pyboy==2.8.1") from e
    import importlib.util

    spec = importlib.util.find_spec("pyboy")
    assert spec is not None and spec.origin is not None  # it was imported just above
    path = os.path.join(os.path.dirname(spec.origin), "core", "bootrom_dmg.bin")
    with open(path, "rb") as f:
        return f.read()


#: Our own homebrew games, shipped inside the package (sources under games/ in the repository):
#: the names of their RL tasks in :data:`emurust.games.GAMES`.
GAMES = tuple(_game_tasks.GAMES)


def game_rom_path(name: str) -> str:
    """Path of one of our embedded games: "dodge" (MBC1), "snake" (MBC3), "runner" (MBC5)."""
    if name not in GAMES:
        raise ValueError(f"unknown game {name!r}; choose one of {GAMES}")
    return os.path.join(os.path.dirname(__file__), "roms", f"{name}.gb")


def default_rom_path() -> str:
    """Path of the embedded default ROM: Dodge, the project's own homebrew game."""
    return game_rom_path("dodge")
