"""``emurust.PyBoy``: PyBoy 2.8.1's ``PyBoy`` class on the emurust core.

Same constructor, methods, attributes, return values and exceptions as PyBoy (the compiled
wheel users install), for headless use (``window="null"``). What cannot be matched raises
NotImplementedError naming the feature; nothing differs silently.
"""

from __future__ import annotations

import heapq
import io
import os
import random
import sys
import time
import traceback
from itertools import cycle
from operator import index
from pathlib import Path

import numpy as np

from .. import _core
from .._core import read_user_file
from ..rom_header import cartridge_title, header_checksum
from . import _bridge, log
from .constants import COLS, ROWS, TILES, TILES_CGB
from .gameshark import GameShark
from .memory import PyBoyMemoryView, PyBoyRegisterFile, _u8
from .memory_scanner import MemoryScanner
from .screen import Screen
from .sound import Sound
from .sprite import Sprite, sprites_from_oam
from .symbols import read_symbol_file, symbol_file_candidates
from .tile import Tile
from .tilemap import TileMap
from .utils import (
    _EVENT_NAMES,
    STATE_VERSION,
    OPCODE_BRK,
    PyBoyAssertException,
    PyBoyException,
    PyBoyInvalidInputException,
    PyBoyInvalidOperationException,
    PyBoyOutOfBoundsException,
    WindowEvent,
    cython_compiled,
)

logger = log.get_logger("pyboy.pyboy")
URL_MIGRATING = "https://github.com/Baekalfen/PyBoy/wiki/Migrating-from-v1.x.x-to-v2.0.0"

SPF = 1 / 60.0

DMG_PALETTES = {
    "SameBoy DMG": (0xC6DE8C, 0x84A563, 0x396139, 0x081810),
    "Classic Green": (0x9BBC0F, 0x8BAC0F, 0x306230, 0x0F380F),
    "Parchment": (0xE0DBCD, 0xA89F94, 0x706B64, 0x2B2B26),
    "Mossy": (0xC4CFA1, 0x8B956D, 0x4D533C, 0x1F1F1C),
    "Grey": (0xFFFFFF, 0x999999, 0x555555, 0x000000),
}

defaults = {
    "color_palette": DMG_PALETTES["Grey"],
    "cgb_color_palette": (
        (0xFFFFFF, 0x7BFF31, 0x0063C5, 0x000000),
        (0xFFFFFF, 0xFF8484, 0x943A3A, 0x000000),
        (0xFFFFFF, 0xFF8484, 0x943A3A, 0x000000),
    ),
    "scale": 3,
    "window": "SDL2",
    "log_level": "WARNING",
}

#: Keyword arguments PyBoy's plugins accept (``pyboy --help``). emurust runs none of these
#: plugins: a truthy value raises NotImplementedError, a falsy one is accepted.
_PLUGIN_KEYWORDS = ("sgb_border", "d", "debug", "autopause", "record_input", "rewind", "printer", "printer_output", "breakpoints")

_WINDOWS = ("SDL2", "OpenGL", "GLFW", "null", "headless", "dummy")

# Joypad bit (emurust's order: right, left, up, down, a, b, select, start) per event.
_PRESS = {
    WindowEvent.PRESS_ARROW_RIGHT: 0x01,
    WindowEvent.PRESS_ARROW_LEFT: 0x02,
    WindowEvent.PRESS_ARROW_UP: 0x04,
    WindowEvent.PRESS_ARROW_DOWN: 0x08,
    WindowEvent.PRESS_BUTTON_A: 0x10,
    WindowEvent.PRESS_BUTTON_B: 0x20,
    WindowEvent.PRESS_BUTTON_SELECT: 0x40,
    WindowEvent.PRESS_BUTTON_START: 0x80,
}
_RELEASE = {
    WindowEvent.RELEASE_ARROW_RIGHT: 0x01,
    WindowEvent.RELEASE_ARROW_LEFT: 0x02,
    WindowEvent.RELEASE_ARROW_UP: 0x04,
    WindowEvent.RELEASE_ARROW_DOWN: 0x08,
    WindowEvent.RELEASE_BUTTON_A: 0x10,
    WindowEvent.RELEASE_BUTTON_B: 0x20,
    WindowEvent.RELEASE_BUTTON_SELECT: 0x40,
    WindowEvent.RELEASE_BUTTON_START: 0x80,
}
_BUTTON_EVENTS = {
    "left": (WindowEvent.PRESS_ARROW_LEFT, WindowEvent.RELEASE_ARROW_LEFT),
    "right": (WindowEvent.PRESS_ARROW_RIGHT, WindowEvent.RELEASE_ARROW_RIGHT),
    "up": (WindowEvent.PRESS_ARROW_UP, WindowEvent.RELEASE_ARROW_UP),
    "down": (WindowEvent.PRESS_ARROW_DOWN, WindowEvent.RELEASE_ARROW_DOWN),
    "a": (WindowEvent.PRESS_BUTTON_A, WindowEvent.RELEASE_BUTTON_A),
    "b": (WindowEvent.PRESS_BUTTON_B, WindowEvent.RELEASE_BUTTON_B),
    "start": (WindowEvent.PRESS_BUTTON_START, WindowEvent.RELEASE_BUTTON_START),
    "select": (WindowEvent.PRESS_BUTTON_SELECT, WindowEvent.RELEASE_BUTTON_SELECT),
}

#: One WindowEvent instance per event number (they are immutable; see send_input).
_EVENT_OBJECTS = {n: WindowEvent(n) for n in range(len(_EVENT_NAMES))}

# PyBoy's .rtc file: timezero (double), halt, carry, s, m, h, day low, day bit 8, halt,
# carry, sub-second cycles (64-bit), save time (double).
_RTC_FILE_LEN = 8 + 2 + 5 + 2 + 8 + 8
_RTC_CYCLES_PER_SECOND = 4_194_304


def _palette_rgba(palette):
    """Four 0xRRGGBB colours as a (4, 4) uint8 RGBA table."""
    colours = [int(c) for c in palette]
    if len(colours) != 4:
        raise PyBoyInvalidInputException("A DMG palette has four colours")
    return np.array([[(c >> 16) & 0xFF, (c >> 8) & 0xFF, c & 0xFF, 0xFF] for c in colours], dtype=np.uint8)


_GREY_RGBA = _palette_rgba(DMG_PALETTES["Grey"])


def _set_log_level(level):
    log.set_level(level)


class PyBoy:
    """A Game Boy emulator with PyBoy 2.8.1's API (see the module docstring).

    ``PyBoy(gamerom, window="null", ...)``: ``gamerom`` is a path (str or Path) or a binary
    file object. Only the headless window exists in emurust.
    """

    # The private state in slots: the native send_input reaches `_events` without a dict
    # lookup, and the instance dict keeps few enough keys to stay a shared-key dict (so that
    # CPython specialises method loads such as `pyboy.send_input`).
    __slots__ = (
        "_events",
        "_battery",
        "_boot_frames_left",
        "_breakpoint_waiting",
        "_breakpoints",
        "_cart_cgb",
        "_cgb",
        "_custom_palette",
        "_debug",
        "_debug_prompt",
        "_frame_count",
        "_ftime",
        "_game_wrapper",
        "_gb",
        "_hooks",
        "_host",
        "_last_shades",
        "_palette_cycle",
        "_palette_rgba",
        "_paused",
        "_phantom_ram",
        "_queued_input",
        "_ram_banks",
        "_rom",
        "_rom_banks",
        "_rtc",
        "_rtc_locked",
        "_screen_array",
        "_screen_recorder",
        "_sgb_border",
        "_singlestep",
        "_sound_emulated",
        "_sound_volume",
        "_step_latch",
        "_title_status",
        "_window",
        "_window_title",
        "__dict__",
        "__weakref__",
    )

    def __init__(
        self,
        gamerom,
        *,
        ram_file=None,
        rtc_file=None,
        window=defaults["window"],
        scale=defaults["scale"],
        symbols=None,
        bootrom=None,
        sound_volume=100,
        sound_emulated=True,
        sound_sample_rate=None,
        cgb=None,
        gameshark=None,
        no_input=False,
        log_level=defaults["log_level"],
        color_palette=defaults["color_palette"],
        cgb_color_palette=defaults["cgb_color_palette"],
        title_status=False,
        serial_shared_memory=None,
        serial_interrupt_based=False,
        sgb_border=False,
        **kwargs,
    ):
        self.initialized = False
        self.stopped = False
        self.no_input = no_input
        _set_log_level(log_level)
        logger.debug(f"Cython compilation status: {cython_compiled}")

        if "bootrom_file" in kwargs:
            logger.error(f"Deprecated use of 'bootrom_file'. Use 'bootrom' keyword argument instead. {URL_MIGRATING}")
            bootrom = kwargs.pop("bootrom_file")
        if "window_type" in kwargs:
            logger.error(f"Deprecated use of 'window_type'. Use 'window' keyword argument instead. {URL_MIGRATING}")
            window = kwargs.pop("window_type")
        if window not in _WINDOWS:
            raise KeyError(f'Unknown window type: {window}. Use "SDL2", "OpenGL", "GLFW", or "null"')
        if window in ("OpenGL", "GLFW"):
            raise NotImplementedError(
                f'emurust.PyBoy: window="{window}" is not available; window="SDL2" (PyBoy\'s default) and "null" are'
            )
        if window in ("headless", "dummy"):
            log.get_logger("pyboy.plugins.window_null").error(
                f'Deprecated use of "headless" or "dummy" window. Change to "null" window instead. {URL_MIGRATING}'
            )
        kwargs["window"] = window
        kwargs["scale"] = scale
        kwargs["sgb_border"] = sgb_border
        randomize = kwargs.pop("randomize", False)  # undocumented in PyBoy too
        for k, v in defaults.items():
            kwargs.setdefault(k, v)

        if gamerom is None:
            raise FileNotFoundError("No game ROM provided!")
        self.gamerom = None
        if isinstance(gamerom, (str, Path)):
            self.gamerom = str(gamerom)
            try:
                rom = read_user_file(self.gamerom, "ROM")
            except FileNotFoundError:
                raise FileNotFoundError(f"ROM file {gamerom} was not found!")
            if ram_file is None and os.path.isfile(self.gamerom + ".ram"):
                ram_file = io.BytesIO(read_user_file(self.gamerom + ".ram", "battery save"))
            if rtc_file is None and os.path.isfile(self.gamerom + ".rtc"):
                rtc_file = io.BytesIO(read_user_file(self.gamerom + ".rtc", "clock save"))
        elif hasattr(gamerom, "read"):
            rom = gamerom.read()
        else:
            raise PyBoyInvalidInputException("Provided game ROM cannot be used. Expected str, Path or file-like object")
        rom = bytes(rom)

        self.rom_symbols = {}
        self.rom_symbols_inverse = {}
        if symbols is not None and not os.path.isfile(symbols):
            raise FileNotFoundError(f"Symbols file {symbols} was not found!")
        self.symbols_file = symbols
        self._load_symbols()

        if kwargs.pop("sound", None):
            sound_volume = 100
            logger.error('Deprecated use of "sound" on PyBoy constructor. Use "sound_volume" or "sound_emulated" instead.')
        if not (0 <= sound_volume <= 100):
            raise PyBoyInvalidInputException("Sound volume has to be between 0 and 100.")

        # ---- the machine (PyBoy's Motherboard) ----
        if len(rom) == 0:
            raise PyBoyException("ROM file is empty!")
        if len(rom) < 0x150:
            raise PyBoyException("ROM file is too small to hold a cartridge header")
        if rom[0x14D] != header_checksum(rom):
            raise PyBoyException("Cartridge header checksum mismatch!")
        cart_cgb = bool(rom[0x143] >> 7)
        if bootrom is not None:
            boot = read_user_file(bootrom, "boot ROM")
        else:
            boot = None  # PyBoy's own boot ROM for the mode chosen below
        boot_is_cgb = boot is not None and len(boot) > 0x100
        if cgb is None:
            self._cgb = boot_is_cgb if bootrom is not None else cart_cgb
        else:
            self._cgb = bool(cgb)
            if bootrom is not None and boot_is_cgb != self._cgb:
                raise PyBoyInvalidOperationException("Invalid bootrom for emulation-mode")
        if bootrom is None:
            boot = _bridge.default_boot_rom(self._cgb)
        sample_rate = 48000 if sound_sample_rate is None else sound_sample_rate
        if sample_rate <= 0:
            raise ValueError("Sound sample rate must be positive")
        if serial_shared_memory is not None:
            raise NotImplementedError("emurust.PyBoy: serial_shared_memory (link cable between emulators) is not supported")
        self._boot_frames_left = 0
        if boot is None:
            logger.warning(
                "PyBoy's DMG boot ROM was not found (the pyboy package is not installed): starting "
                "in the state it leaves; the %d boot frames are counted but not shown, and VRAM "
                "lacks the boot logo",
                _bridge.BOOT_FRAMES,
            )
            self._boot_frames_left = _bridge.BOOT_FRAMES
        try:
            self._gb = _bridge.make_core(
                rom, boot, sound_emulated=bool(sound_emulated), sound_sample_rate=sample_rate, cgb=self._cgb
            )
        except _core.RomError as e:
            raise PyBoyException(str(e)) from e
        # PyBoy's internals that its API reads (CPU reads with side effects, breakpoints, direct
        # VRAM/WRAM access): the core's host hooks, kept off the user's GameBoy.
        self._host = _core.Host(self._gb)
        self._rom = rom
        info = self._host.cartridge_info()
        self._rom_banks = info["rom_banks"]
        self._ram_banks = info["ram_banks"]
        self._battery = info["battery"]
        self._rtc = info["rtc"]
        self._cart_cgb = cart_cgb
        # PyBoy allocates 16 RAM banks whatever the cartridge has; the API can reach the bank
        # just past the last real one. Bytes written there live here.
        self._phantom_ram = {}
        self._sound_emulated = bool(sound_emulated)
        self._sound_volume = sound_volume
        if sgb_border and rom[0x146] == 0x03 and rom[0x14B] == 0x33:
            raise NotImplementedError("emurust.PyBoy: sgb_border=True on a Super Game Boy cartridge (SGB emulation)")
        if ram_file is not None and self._battery:
            self._load_ram_file(ram_file)
        if rtc_file is not None and self._rtc:
            self._load_rtc_file(rtc_file)

        # ---- picture buffer and palette ----
        self._palette_rgba = _palette_rgba(color_palette)
        self._custom_palette = not np.array_equal(self._palette_rgba, _GREY_RGBA)
        self._screen_array = np.zeros((ROWS, COLS, 4), dtype=np.uint8) if self._custom_palette else self._gb.screen
        self._last_shades = np.array(self._gb.screen_shade, copy=True)
        self._palette_cycle = cycle(DMG_PALETTES.items())

        # ---- kwargs PyBoy's plugins would take ----
        for k, v in kwargs.items():
            if k in defaults:
                continue
            if k in _PLUGIN_KEYWORDS:
                if v and k not in ("sgb_border", "breakpoints", "debug", "d"):
                    raise NotImplementedError(f"emurust.PyBoy: the {k!r} plugin is not available (headless core only)")
                continue
            logger.critical("Unknown keyword argument: %s", k)
            raise KeyError(f"Unknown keyword argument: {k}")

        self._rtc_locked = False
        self._frame_count = 0
        self.set_emulation_speed(1)
        self._paused = False
        self._events = []
        self._queued_input = []
        self.quitting = False
        self._window_title = ""
        self._title_status = title_status
        self._sgb_border = sgb_border
        self._ftime = time.perf_counter_ns()

        # Breakpoints (hooks): {(bank, addr): original opcode}; the one waiting to be put back.
        self._breakpoints = {}
        self._breakpoint_waiting = None
        self._singlestep = False
        self._hooks = {}

        self.screen = Screen(self)
        self.sound = Sound(self, sample_rate, self._sound_emulated)
        # The Rust view answers the common forms; the Python one the rare forms and errors.
        self.memory = _core.PyBoyMemoryView(self._gb, PyBoyMemoryView(self), self._rom_banks, self._ram_banks)
        self.register_file = PyBoyRegisterFile(self)
        self.memory_scanner = MemoryScanner(self)
        self.tilemap_background = TileMap(self, "BACKGROUND")
        self.tilemap_window = TileMap(self, "WINDOW")
        self.cartridge_title = cartridge_title(rom)

        from .plugins import select_game_wrapper

        self._game_wrapper = select_game_wrapper(self)
        from .plugins.screen_recorder import ScreenRecorder

        self._screen_recorder = ScreenRecorder(self)
        self.window_null_speed = 0
        self._window = None
        if window == "SDL2":
            from .plugins.window_sdl2 import WindowSDL2

            self._window = WindowSDL2(self, scale)  # real time (speed 1), as PyBoy's SDL2 window
        else:
            self.set_emulation_speed(0)  # the null window starts unlimited, as PyBoy's

        if randomize:
            self._randomize_ram()
        self._debug = None
        if kwargs.get("debug") or kwargs.get("d"):
            from .plugins.debug_window import DebugWindows

            self._debug = DebugWindows(self)
        self._step_latch = False  # the debug prompt asked for one instruction
        self._debug_prompt = None
        if kwargs.get("breakpoints"):
            from .plugins.debug_prompt import DebugPrompt

            self._debug_prompt = DebugPrompt(self, kwargs["breakpoints"])
        self.gameshark = GameShark(self.memory)
        if gameshark:
            for code in gameshark.split(","):
                self.gameshark.add(code.strip())
        self.initialized = True

    # ------------------------------------------------------------------ read-only attributes

    @property
    def frame_count(self):
        """Frames emulated since the emulator was created (not part of save states)."""
        return self._frame_count

    @property
    def paused(self):
        return self._paused

    @property
    def events(self):
        return self._events

    @property
    def window_title(self):
        return self._window_title

    @property
    def title_status(self):
        return self._title_status

    @property
    def sgb_border(self):
        return self._sgb_border

    @property
    def game_wrapper(self):
        """The game wrapper PyBoy selects for this cartridge title (a generic one otherwise)."""
        return self._game_wrapper

    @property
    def sgb(self):
        return _SGB()

    @property
    def rumble(self):
        return _Rumble(self)

    # ------------------------------------------------------------------ cartridge RAM helpers

    def _cart_ram_byte(self, bank, offset):
        if bank < self._ram_banks:
            return self._host.cart_ram_byte(bank, offset)
        return self._phantom_ram.get((bank, offset), 0)

    def _set_cart_ram_byte(self, bank, offset, value):
        if bank < self._ram_banks:
            self._host.set_cart_ram_byte(bank, offset, value)
        else:
            self._phantom_ram[(bank, offset)] = value

    def _boot_byte(self, i):
        v = self._host.boot_rom_byte(i)
        if v is None:
            raise NotImplementedError("emurust.PyBoy: the boot ROM is not available (pyboy not installed and no bootrom=)")
        return v

    def _set_boot_byte(self, i, value):
        self._boot_byte(i)
        self._host.set_boot_rom_byte(i, _u8(value))

    def _load_ram_file(self, f):
        n = self._ram_banks * 0x2000
        data = f.read(n)
        if len(data) != n:
            raise PyBoyException("No data")  # PyBoy's IntIOWrapper.read on a short file
        battery = self._gb.battery_save()
        self._gb.load_battery_save(bytes(data) + battery[n:])

    def _load_rtc_file(self, f):
        import struct

        data = f.read(_RTC_FILE_LEN)
        if len(data) != _RTC_FILE_LEN:
            raise PyBoyException("No data")
        halt, carry = data[8] & 1, data[9] & 1
        s, m, h, dl, dh = data[10] & 0x3F, data[11] & 0x3F, data[12] & 0x1F, data[13], data[14] & 1
        halt, carry = data[15] & 1, data[16] & 1
        sub = struct.unpack_from("<Q", data, 17)[0] % _RTC_CYCLES_PER_SECOND
        # emurust's clock runs on emulated time only: the wall-clock time since the file was
        # written is not added (PyBoy adds it; see the core's rtc module).
        battery = bytearray(self._gb.battery_save())
        block = len(battery) - 16
        battery[block : block + 5] = bytes([s, m, h, dl, dh | (halt << 6) | (carry << 7)])
        battery[block + 12 : block + 16] = int(sub).to_bytes(4, "little")
        self._gb.load_battery_save(bytes(battery))

    def _rtc_file_bytes(self):
        import struct

        battery = self._gb.battery_save()
        b = battery[len(battery) - 16 :]
        s, m, h, dl, flags = b[0], b[1], b[2], b[3], b[4]
        dh, halt, carry = flags & 1, (flags >> 6) & 1, (flags >> 7) & 1
        sub = int.from_bytes(b[12:16], "little")
        now = time.time()
        elapsed = s + m * 60 + h * 3600 + ((dh << 8) | dl) * 86400 + sub / _RTC_CYCLES_PER_SECOND
        return (
            struct.pack("d", now - elapsed)
            + bytes([halt, carry, s, m, h, dl, dh, halt, carry])
            + struct.pack("<Q", sub)
            + struct.pack("d", now)
        )

    # ------------------------------------------------------------------ frames

    def _apply_event(self, event):
        bit = _PRESS.get(event)
        if bit is not None:
            self._gb.buttons = self._gb.buttons | bit
            return
        bit = _RELEASE.get(event)
        if bit is not None:
            self._gb.buttons = self._gb.buttons & ~bit & 0xFF

    def _handle_events(self, events):
        if not self.no_input:  # PyBoy's plugins see the events first: the window's keys, the recorder
            if self._window is not None:
                events = self._window.handle_events(events)
            if self._debug is not None:
                events = self._debug.handle_events(events)
            events = self._screen_recorder.handle_events(events)
        for event in events:
            if event == WindowEvent.QUIT:
                self.quitting = True
            elif event == WindowEvent.RELEASE_SPEED_UP:
                self.target_emulationspeed = int(bool(self.target_emulationspeed) ^ True)
            elif event == WindowEvent.STATE_SAVE:
                if self.gamerom:
                    with open(self.gamerom + ".state", "wb") as f:
                        self.save_state(f)
                else:
                    logger.error("Failed to save game state. PyBoy is loaded without a filepath.")
            elif event == WindowEvent.STATE_LOAD:
                if self.gamerom:
                    path = self.gamerom + ".state"
                    if not os.path.isfile(path):
                        logger.error("State file not found: %s", path)
                        continue
                    with open(path, "rb") as f:
                        self.load_state(f)
                else:
                    logger.error("Failed to load game state. PyBoy is loaded without a filepath.")
            elif event == WindowEvent.PAUSE_TOGGLE:
                if self._paused:
                    self._unpause()
                else:
                    self._pause()
            elif event == WindowEvent.PAUSE:
                self._pause()
            elif event == WindowEvent.UNPAUSE:
                self._unpause()
            elif event == WindowEvent.CYCLE_PALETTE:
                self._cycle_palette()
            else:
                self._apply_event(event)

    def _post_handle_events(self):
        self._events = []
        while self._queued_input and self._frame_count == self._queued_input[0][0]:
            _, event = heapq.heappop(self._queued_input)
            ev = _EVENT_OBJECTS.get(event)
            self._events.append(WindowEvent(event) if ev is None else ev)

    def _pause(self):
        if self._paused:
            return
        self._paused = True
        self.save_target_emulationspeed = self.target_emulationspeed
        self.target_emulationspeed = 1
        if self._window is not None:
            self._window.paused(True)
            self._window.set_title(self._title_text())

    def _unpause(self):
        if not self._paused:
            return
        self._paused = False
        if self._window is not None:
            self._window.paused(False)
            self._window.set_title(self._title_text())
        self.target_emulationspeed = self.save_target_emulationspeed

    def _cycle_palette(self):
        name, palette = next(self._palette_cycle)
        try:
            self.set_color_palette(palette)
        except PyBoyInvalidOperationException as ex:
            logger.warning("Error cycling palette: %s", ex)
            return
        logger.info("Palette: %s", name)

    def _frames_batchable(self):
        return self._window is None and self._debug is None and not (self._breakpoints or self._breakpoint_waiting or self._singlestep or self.gameshark.enabled or self._boot_frames_left)

    @property
    def _plain(self):
        """True when frames need no Python work in between (no hooks, cheats, pause, boot
        frames to count, and the emulator is running)."""
        return self._window is None and self._debug is None and not (
            self.stopped
            or self._paused
            or self._breakpoints
            or self._breakpoint_waiting is not None
            or self._singlestep
            or self.gameshark.enabled
            or self._boot_frames_left
        )

    def _run_frame(self, render, sound):
        """PyBoy's per-frame body (``_tick`` when not paused)."""
        self.gameshark.tick()
        if self._boot_frames_left:
            self._boot_frames_left -= 1
            return
        if self._breakpoints or self._breakpoint_waiting is not None or self._singlestep:
            self._run_frame_with_hooks(render, sound)
        else:
            self._gb.tick(1, render, sound)

    def tick(self, count=1, render=True, sound=True):
        """Run ``count`` frames, drawing (``render``) and sampling sound (``sound``) in the last
        one only. Returns False once a QUIT event was handled, else True."""
        # Fast path (the common RL call): nothing to do between frames.
        if (
            count.__class__ is int
            and count > 0
            and render.__class__ is bool
            and sound.__class__ is bool
            and not self._events
            and not self._queued_input
            and self._plain
        ):
            self._gb.tick(count, render, sound)
            self._frame_count += count
            self._post_tick(render)
            return not self.quitting
        if self.stopped:
            raise PyBoyInvalidOperationException("Emulator is stopped")
        # PyBoy's compiled tick() takes a C int: floats are truncated, other non-integers
        # refused by the conversion.
        if isinstance(count, float):
            count = int(count)
        else:
            try:
                count = index(count)
            except TypeError:
                raise TypeError("an integer is required") from None
        if not -(2**31) <= count < 2**31:
            raise OverflowError("value too large to convert to int")
        if count < 0:
            raise PyBoyInvalidInputException("count must be a non-negative integer")
        render = bool(render)
        sound = bool(sound)
        running = False
        while count:
            self._handle_events(self._events)
            if self._paused:
                self._post_handle_events()
                running = not self.quitting
                count -= 1
                continue
            if self._frames_batchable():
                # Frames until the next queued input fires (it is handled before that frame).
                n = count
                if self._queued_input:
                    n = min(n, max(1, self._queued_input[0][0] - self._frame_count))
                last = n == count
                self._gb.tick(n, render and last, sound and last)
                self._frame_count += n
                count -= n
            else:
                self._run_frame(render and count == 1, sound and count == 1)
                self._frame_count += 1
                count -= 1
            self._post_handle_events()
            running = not self.quitting
        self._post_tick(render)
        return running

    def _post_tick(self, rendered):
        # The core's shades change only in drawn frames; so does PyBoy's picture (a palette
        # change shows from the next drawn frame).
        if self._custom_palette:
            shades = self._gb.screen_shade
            # Undrawn frames keep PyBoy's picture, except where the LCD blanked it (LCD off:
            # filled with the current palette's colour 0, drawn or not).
            if rendered or not self._gb.read(0xFF40) & 0x80 or not np.array_equal(shades, self._last_shades):
                np.take(self._palette_rgba, shades, axis=0, out=self._screen_array)
                self._last_shades = np.array(shades, copy=True)
        if self._window is not None:
            if self._frame_count % 60 == 0:
                self._window.set_title(self._title_text())
            self._window.post_tick()
        if self._debug is not None:
            self._debug.post_tick()
        if self._screen_recorder._recording is not None:  # a check, not a call, per tick
            self._screen_recorder.post_tick()
        if self._game_wrapper is not None:
            try:
                self._game_wrapper.post_tick()
            except Exception as e:  # PyBoy's post-tick hooks cannot raise (noexcept)
                logger.error("game wrapper post_tick failed: %r", e)
        if self.target_emulationspeed:
            if self._window is not None:
                self._window.frame_limiter(self.target_emulationspeed)
            else:
                self._frame_limiter(self.target_emulationspeed)

    def _title_text(self):
        """The window's title as PyBoy writes it (every 60 frames)."""
        self._window_title = "PyBoy" + (" [PAUSED]" if self._paused else "")
        return self._window_title

    def _frame_limiter(self, speed):
        """PyBoy's null-window frame limiter: sleep to ``speed`` times real time (0: none)."""
        self._ftime += int((1.0 / (60.0 * speed)) * 1_000_000_000) if speed > 0 else 0
        now = time.perf_counter_ns()
        if speed > 0 and self._ftime > now:
            time.sleep(((self._ftime - now) // 1_000_000) / 1000)
        else:
            self._ftime = now

    # ------------------------------------------------------------------ hooks (breakpoints)

    def _bank_of_pc(self, pc):
        """The bank PyBoy files a breakpoint hit at ``pc`` under (None: never a hit)."""
        host = self._host
        if pc < 0x100 and host.boot_rom_mapped:
            return -1
        if pc < 0x4000:
            return 0
        if pc < 0x8000:
            return host.selected_banks()[0]
        if 0xA000 <= pc < 0xC000:
            return host.selected_banks()[1]
        if pc >= 0xC000:
            return 0
        return None

    def _patch(self, bank, addr, value):
        """Write ``value`` where a breakpoint at (bank, addr) lives; return the old byte."""
        host = self._host
        if addr < 0x100 and bank == -1:
            old = self._boot_byte(addr)
            host.set_boot_rom_byte(addr, value)
        elif addr < 0x8000:
            if self._rom_banks < bank:
                raise PyBoyOutOfBoundsException(
                    f"ROM bank out of bounds. Asked for {bank}, max is {self._rom_banks}"
                )
            if not 0 <= bank < self._rom_banks:
                raise PyBoyOutOfBoundsException(f"ROM bank out of bounds. Asked for {bank}, max is {self._rom_banks}")
            # memory[bank, offset] reads and overrides that ROM byte (the native view's slot:
            # no method call into the core).
            offset = addr & 0x3FFF if addr >= 0x4000 else addr
            memory = self.memory
            old = memory[bank, offset]
            memory[bank, offset] = value
        elif addr < 0xA000:
            if bank != 0:
                raise NotImplementedError("emurust.PyBoy: hooks in CGB VRAM bank 1")
            old = host.vram_byte(addr - 0x8000)
            host.set_vram_byte(addr - 0x8000, value)
        elif addr < 0xC000:
            if self._ram_banks < bank:
                raise PyBoyOutOfBoundsException(f"RAM bank out of bounds. Asked for {bank}, max is {self._ram_banks}")
            old = self._cart_ram_byte(bank, addr - 0xA000)
            self._set_cart_ram_byte(bank, addr - 0xA000, value)
        elif addr < 0xE000:
            old = host.wram_byte(addr - 0xC000)
            host.set_wram_byte(addr - 0xC000, value)
        else:
            raise PyBoyOutOfBoundsException("Unsupported breakpoint address. If this a mistake, reach out to the developers")
        return old

    def _breakpoint_add(self, bank, addr):
        self._breakpoints[(bank, addr)] = self._patch(bank, addr, OPCODE_BRK)
        self._host.set_breakpoints_enabled(True)

    def _breakpoint_remove(self, bank, addr):
        opcode = self._breakpoints.pop((bank, addr), None)
        if opcode is None:
            raise PyBoyException("Breakpoint not found. If this a mistake, reach out to the developers")
        self._patch(bank, addr, opcode)

    def _update_breakpoint_mode(self):
        self._host.set_breakpoints_enabled(bool(self._breakpoints) or self._breakpoint_waiting is not None)

    def _run_frame_with_hooks(self, render, sound):
        """One frame as PyBoy runs it with breakpoints: stop at each hooked instruction, call
        the hook, single-step the real instruction, put the breakpoint back."""
        host = self._host
        host.begin_frame(render, sound)
        while True:
            fresh_stop = not self._singlestep
            if fresh_stop:
                if host.run_to_break():
                    break  # the frame ended without (further) breakpoints
                self._singlestep = True
            else:
                if host.frame_done and self._breakpoints.get((self._bank_of_pc(host.register("pc")), host.register("pc"))):
                    raise PyBoyException("a hook at the end of a frame re-triggers forever in PyBoy 2.8.1")
                host.single_step()
            if self.quitting:
                break
            # As PyBoy: put back the breakpoint taken out at the last hit, then look at PC.
            if self._breakpoint_waiting is not None:
                bank, addr, _ = self._breakpoint_waiting
                self._breakpoint_waiting = None
                self._breakpoint_add(bank, addr)
            pc = host.register("pc")
            bank = self._bank_of_pc(pc)
            opcode = self._breakpoints.get((bank, pc))
            if opcode is not None:
                self._breakpoint_waiting = (bank, pc, opcode)
                self._breakpoint_remove(bank, pc)
                if not self._handle_hooks() and self._debug_prompt is not None:
                    self._debug_prompt.prompt()  # a breakpoint without a hook: PyBoy's prompt
            elif self._step_latch and self._debug_prompt is not None:
                self._step_latch = False
                self._debug_prompt.prompt()  # one instruction later, as asked ("n")
                if not self._step_latch:
                    self._singlestep = False
            elif fresh_stop:
                raise PyBoyException(
                    f"opcode 0xDB executed at {pc:#06x} where no hook is registered (PyBoy 2.8.1 hangs here)"
                )
            else:
                self._singlestep = False
            self._update_breakpoint_mode()
        self._update_breakpoint_mode()

    def _handle_hooks(self):
        bank, addr, opcode = self._breakpoint_waiting
        key = (bank & 0xFF) << 24 | (addr & 0xFFFF) << 8 | (opcode & 0xFF)
        handler = self._hooks.get(key)
        if handler is not None:
            callback, context = handler
            try:
                callback(context)
            except Exception as e:
                # PyBoy's compiled hook dispatcher cannot raise: it reports and carries on.
                sys.stderr.write(f"Exception ignored in hook callback {callback!r}:\n")
                traceback.print_exception(type(e), e, e.__traceback__)
                return False
            return True
        return False

    def hook_register(self, bank, addr, callback, context):
        """Call ``callback(context)`` whenever the CPU is about to execute ``addr`` in ``bank``
        (``bank=None`` and a symbol name as ``addr`` look it up in the symbol file)."""
        if bank.__class__ is int and addr.__class__ is int and 0 <= addr < 0x8000 and 0 <= bank < self._rom_banks:
            # A hook in ROM (the common case): _breakpoint_add's steps, inline.
            memory = self.memory
            opcode = memory[bank, addr]
            if opcode == OPCODE_BRK:
                raise ValueError("Hook already registered for this bank and address.")
            memory[bank, addr & 0x3FFF] = OPCODE_BRK
            self._breakpoints[(bank, addr)] = opcode
            self._host.set_breakpoints_enabled(True)
            self._hooks[(bank & 0xFF) << 24 | addr << 8 | opcode] = (callback, context)
            return 0
        if bank is None and isinstance(addr, str):
            bank, addr = self._lookup_symbol(addr)
        opcode = self.memory[bank, addr]
        if opcode == OPCODE_BRK:
            raise ValueError("Hook already registered for this bank and address.")
        self._breakpoint_add(bank, addr)
        self._hooks[(bank & 0xFF) << 24 | (addr & 0xFFFF) << 8 | (opcode & 0xFF)] = (callback, context)
        return 0

    def hook_deregister(self, bank, addr):
        """Remove the hook at ``bank``, ``addr`` (or a symbol, with ``bank=None``)."""
        if bank.__class__ is int and addr.__class__ is int and 0 <= addr < 0x8000 and 0 <= bank < self._rom_banks:
            # A hook in ROM (the common case): _breakpoint_remove's steps, inline.
            opcode = self._breakpoints.pop((bank, addr), None)
            if opcode is None:
                raise ValueError("Breakpoint not found for bank and addr")
            self.memory[bank, addr & 0x3FFF] = opcode
            self._hooks.pop((bank & 0xFF) << 24 | addr << 8 | opcode)
            self._host.set_breakpoints_enabled(bool(self._breakpoints) or self._breakpoint_waiting is not None)
            return 0
        if bank is None and isinstance(addr, str):
            bank, addr = self._lookup_symbol(addr)
        opcode = self._breakpoints.get((bank, addr))
        if opcode is None:
            raise ValueError("Breakpoint not found for bank and addr")
        self._breakpoint_remove(bank, addr)
        self._hooks.pop((bank & 0xFF) << 24 | (addr & 0xFFFF) << 8 | (opcode & 0xFF))
        self._update_breakpoint_mode()
        return 0

    # ------------------------------------------------------------------ lifecycle

    def __del__(self):
        try:
            self.stop(save=False)
        except Exception:
            pass

    def __enter__(self):
        return self

    def __exit__(self, type, value, traceback):
        self.stop()

    def _quit(self):
        self.quitting = True

    def stop(self, save=True, ram_file=None, rtc_file=None):
        """Stop the emulator. With ``save``, battery-backed RAM (and the clock) is written to
        ``ram_file``/``rtc_file`` or, by default, to ``<rom>.ram``/``<rom>.rtc`` — atomically:
        a crash never leaves a half-written file."""
        if not getattr(self, "initialized", False) or self.stopped:
            return
        self._screen_recorder.stop()
        if self._debug is not None:
            self._debug.stop()
        if self._window is not None:
            self._window.stop()
        if save and self._battery:
            ram = self._gb.battery_save()[: self._ram_banks * 0x2000]
            if ram_file is None:
                _atomic_write(self.gamerom + ".ram", ram)
            else:
                ram_file.write(ram)
        if save and self._rtc:
            data = self._rtc_file_bytes()
            if rtc_file is None:
                _atomic_write(self.gamerom + ".rtc", data)
            else:
                rtc_file.write(data)
        self.stopped = True

    # ------------------------------------------------------------------ input

    def button(self, input, delay=1):
        """Press ``input`` ("a", "b", "start", "select", "left", "right", "up", "down") now and
        release it ``delay`` frames later."""
        events = _BUTTON_EVENTS.get(input.lower())
        if events is None:
            raise PyBoyInvalidInputException("Unrecognized input:", input)
        # send_input(press) then send_input(release, delay), inlined (a per-step call).
        self._events.append(_EVENT_OBJECTS[events[0]])
        if delay:
            if not delay > 0:
                raise PyBoyInvalidInputException("Only positive integers allowed")
            heapq.heappush(self._queued_input, (self._frame_count + delay, events[1]))
        else:
            self._events.append(_EVENT_OBJECTS[events[1]])

    def button_press(self, input):
        events = _BUTTON_EVENTS.get(input.lower())
        if events is None:
            raise PyBoyInvalidInputException("Unrecognized input")
        self.send_input(events[0])

    def button_release(self, input):
        events = _BUTTON_EVENTS.get(input.lower())
        if events is None:
            raise PyBoyInvalidInputException("Unrecognized input")
        self.send_input(events[1])

    def _send_input_py(self, event, delay=0):
        """``send_input``'s every form: the class's ``send_input`` (set below the class) is
        native and answers a known event number without delay itself."""
        if not isinstance(event, int):
            event = int(event)  # e.g. a pyboy.utils.WindowEvent instance
        if delay:
            if not delay > 0:
                raise PyBoyInvalidInputException("Only positive integers allowed")
            heapq.heappush(self._queued_input, (self._frame_count + delay, event))
        else:
            # The events are immutable: one shared instance per event number.
            ev = _EVENT_OBJECTS.get(event)
            self._events.append(WindowEvent(event) if ev is None else ev)

    # ------------------------------------------------------------------ save states

    def save_state(self, file_like_object):
        """Write the machine to a binary file object, in PyBoy 2.8.1's ``.state`` format."""
        if isinstance(file_like_object, str):
            raise PyBoyInvalidInputException("String not allowed. Did you specify a filepath instead of a file-like object?")
        if file_like_object.__class__.__name__ == "TextIOWrapper":
            raise PyBoyInvalidInputException("Text file not allowed. Did you specify open(..., 'wb')?")
        data = self._gb.save_pyboy_state()
        if self._custom_palette:
            data = self._with_screen_colours(data, self._screen_array)
        file_like_object.write(data)
        file_like_object.flush()
        return 0

    def load_state(self, file_like_object):
        """Restore the machine from a PyBoy 2.8.1 ``.state`` (binary file object)."""
        if isinstance(file_like_object, str):
            raise PyBoyInvalidInputException("String not allowed. Did you specify a filepath instead of a file-like object?")
        if file_like_object.__class__.__name__ == "TextIOWrapper":
            raise PyBoyInvalidInputException("Text file not allowed. Did you specify open(..., 'rb')?")
        length, _ = self._host.pyboy_state_layout()
        data = file_like_object.read(1)
        if data and data[0] < STATE_VERSION:
            # An older format version (PyBoy 2.8.1 loads them all): its length depends on the
            # version; the loader checks it. PyBoy warns as it loads one.
            data += file_like_object.read()
            log.get_logger("pyboy.core.mb").warning(
                "Loading state from an older version of PyBoy. This might cause compatibility issues."
            )
            if self._custom_palette:
                raise NotImplementedError(
                    "load_state: a PyBoy state of format version %d (older than %d) with a custom color_palette"
                    % (data[0], STATE_VERSION)
                )
        else:
            data += file_like_object.read(length - 1)
        screen = None
        if self._custom_palette:
            screen = self._screen_from_state(data)
            data = self._with_screen_colours(data, _GREY_RGBA[self._shades_for(screen)])
        try:
            self._gb.load_pyboy_state(data)
        except _core.StateError as e:
            # PyBoy reads a state byte by byte and raises PyBoyAssertException ("No data") where
            # it ends too early; its other refusals (a newer version) are PyBoyException.
            if "truncated" in str(e) or "empty PyBoy state" in str(e):
                raise PyBoyAssertException(f"No data: {e}") from e
            raise PyBoyException(str(e)) from e
        if screen is not None:
            self._screen_array[...] = screen
        if self._rtc_locked:  # a setting of the running emulator, as PyBoy's timelock
            self._host.set_rtc_lock(True)
        return 0

    def _screen_from_state(self, data):
        _, offset = self._host.pyboy_state_layout()
        px = np.frombuffer(data, dtype=np.uint8, count=ROWS * COLS * 5, offset=offset).reshape(ROWS, COLS, 5)
        return px[:, :, :4].copy()

    def _shades_for(self, rgba):
        """Palette index of each RGBA pixel (0 where it is none of the palette's colours)."""
        shades = np.zeros(rgba.shape[:2], dtype=np.uint8)
        for i in range(3, 0, -1):
            shades[np.all(rgba == self._palette_rgba[i], axis=2)] = i
        return shades

    def _with_screen_colours(self, data, rgba):
        _, offset = self._host.pyboy_state_layout()
        buf = bytearray(data)
        px = np.frombuffer(buf, dtype=np.uint8, count=ROWS * COLS * 5, offset=offset).reshape(ROWS, COLS, 5)
        px[:, :, :4] = rgba
        return bytes(buf)

    # ------------------------------------------------------------------ game area

    def game_area_dimensions(self, x, y, width, height, follow_scrolling=True):
        self.game_wrapper._set_dimensions(x, y, width, height, follow_scrolling)

    def game_area_collision(self):
        return self.game_wrapper.game_area_collision()

    def game_area_mapping(self, mapping, sprite_offset=0):
        if mapping is None:
            mapping = [x for x in range(TILES_CGB)]
        assert isinstance(sprite_offset, int)
        assert isinstance(mapping, (np.ndarray, list))
        assert len(mapping) == TILES or len(mapping) == TILES_CGB
        self.game_wrapper.game_area_mapping(mapping, sprite_offset)

    def game_area(self):
        return self._game_wrapper.game_area()

    # ------------------------------------------------------------------ misc

    def set_color_palette(self, palette):
        """Set the four DMG colours (lightest first) used from the next drawn frame."""
        if self._cgb:
            raise PyBoyInvalidOperationException("Palette change is only available in DMG mode")
        rgba = _palette_rgba(palette)
        if not self._custom_palette and not np.array_equal(rgba, _GREY_RGBA):
            self._own_screen_array()
        self._palette_rgba = rgba

    def _randomize_ram(self):
        """PyBoy's ``randomize=True``: random power-on contents (Python's ``random``) of VRAM
        bank 0, OAM, work RAM (all 8 banks on a Game Boy Color), FEA0-FEFF and HRAM; the boot
        ROM then runs over them as on a console."""
        gb = self._gb
        host = self._host
        rand = random.getrandbits
        for i in range(0x2000):
            host.set_vram_bank_byte(0, i, rand(8))
        for addr in (*range(0xFE00, 0xFF00), *range(0xFF80, 0xFFFF)):
            gb.write(addr, rand(8))
        for bank in range(8 if self._cgb else 2):
            for i in range(0x1000):
                host.set_wram_bank_byte(bank, i, rand(8))

    def _own_screen_array(self):
        """From the default palette to another: the screen becomes an array of this object's,
        coloured from the core's shades after each tick, holding the picture drawn so far (the
        new colours show from the next drawn frame, as in PyBoy). ``screen.ndarray``,
        ``raw_buffer`` and ``image`` then refer to it."""
        self._screen_array = np.array(self._gb.screen, dtype=np.uint8, copy=True)
        self._last_shades = np.array(self._gb.screen_shade, copy=True)
        self._custom_palette = True
        self.screen._attach(self._screen_array)

    def _serial(self):
        out = self._gb.serial_output().decode("latin-1")
        self._gb.clear_serial_output()
        return out

    def printer_image(self):
        return None

    def set_emulation_speed(self, target_speed):
        """Target speed as a multiple of real time; 0 means as fast as possible."""
        if target_speed > 5:
            logger.warning("The emulation speed might not be accurate when speed-target is higher than 5")
        self.target_emulationspeed = target_speed

    def _load_symbols(self):
        if self.rom_symbols:
            return self.rom_symbols
        for path in symbol_file_candidates(self.gamerom or None, self.symbols_file):
            if path and os.path.isfile(path):
                is_map = path.endswith(".map")
                for bank, addr, label in read_symbol_file(path):
                    if is_map and label in self.rom_symbols_inverse:
                        continue
                    self._add_symbol(bank, addr, label)
        return self.rom_symbols

    def _add_symbol(self, bank, addr, label):
        self.rom_symbols.setdefault(bank, {}).setdefault(addr, []).append(label)
        self.rom_symbols_inverse[label] = (bank, addr)

    def _lookup_symbol(self, symbol):
        found = self.rom_symbols_inverse.get(symbol)
        if found is None:
            raise ValueError("Symbol not found: %s" % symbol)
        return found

    def symbol_lookup(self, symbol):
        """(bank, address) of a symbol from the ROM's .sym or .map file."""
        return self._lookup_symbol(symbol)

    def get_sprite(self, sprite_index):
        """OAM entry ``sprite_index`` (0-39)."""
        return Sprite(self, sprite_index)

    def get_sprite_by_tile_identifier(self, tile_identifiers, on_screen=True):
        matches = []
        for i in tile_identifiers:
            found = []
            for sprite in sprites_from_oam(self, on_screen_only=False):
                s = sprite._sprite_index
                for t in sprite.tiles:
                    if t.tile_identifier == i and (not on_screen or sprite.on_screen):
                        found.append(s)
            matches.append(found)
        return matches

    def get_tile(self, identifier):
        """The tile with PyBoy's unified identifier (0-383)."""
        return Tile(self, identifier)

    def rtc_lock_experimental(self, enable):
        if not self._rtc:
            raise PyBoyException("There's no RTC for this cartridge type")
        self._rtc_locked = bool(enable)
        self._host.set_rtc_lock(self._rtc_locked)

    def _cycles(self):
        return self._gb.cycles


def _atomic_write(path, data):
    """Write ``data`` to ``path`` so that the file is either the old one or the new one (synced
    to disk before the rename: battery saves outlive the process)."""
    import pathlib

    from .._atomic import atomic_write

    def write(tmp):
        with open(tmp, "wb") as f:
            f.write(data)
            f.flush()
            os.fsync(f.fileno())

    atomic_write(pathlib.Path(os.path.abspath(path)), write)


# Queue a WindowEvent for the next frame, or `delay` frames later: a method of the class
# written with CPython's C API (emurust/_core, pyboy_input.rs), the per-step call without a
# Python frame; every form but a known event number without delay goes to _send_input_py.
PyBoy.send_input = _core._send_input_method(PyBoy, [_EVENT_OBJECTS[n] for n in range(len(_EVENT_OBJECTS))])


class _SGB:
    """``PyBoy.sgb`` for a machine without Super Game Boy processing (PyBoy's default)."""

    enabled = False
    detected = False
    border_enabled = False
    _multiplayer_enabled = False
    _multiplayer_players = 1


class _Rumble:
    def __init__(self, pyboy):
        self._pyboy = pyboy

    @property
    def supported(self):
        return self._pyboy._host.cartridge_info()["cartridge_type"] in (0x1C, 0x1D, 0x1E)

    @property
    def enabled(self):
        if not self.supported:
            return False
        raise NotImplementedError("emurust.PyBoy: rumble.enabled")
