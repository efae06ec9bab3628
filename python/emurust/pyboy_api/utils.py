"""PyBoy 2.8.1's ``pyboy.utils`` surface: input events, exceptions and BCD helpers.

The event numbers and exception hierarchy are PyBoy's public contract (scripts store event
numbers, replays depend on them), so they are reproduced value for value. Code written
against ``pyboy.utils.WindowEvent`` works unchanged with :class:`emurust.PyBoy`: the events
are plain integers either way.
"""

from __future__ import annotations

__all__ = [
    "WindowEvent",
    "dec_to_bcd",
    "bcd_to_dec",
    "PyBoyException",
    "PyBoyInternalError",
    "PyBoyAssertException",
    "PyBoyOutOfBoundsException",
    "PyBoyNotImplementedException",
    "PyBoyInvalidInputException",
    "PyBoyInvalidOperationException",
    "PyBoyDependencyError",
    "PyBoyFeatureDisabledError",
    "AccessError",
    "PillowImportError",
    "SoundEnabledError",
    "IntIOInterface",
    "IntIOWrapper",
    "cython_compiled",
    "CLOCK_RATE",
    "FRAME_CYCLES",
    "MAX_CYCLES",
    "INTR_VBLANK",
    "INTR_LCDC",
    "INTR_TIMER",
    "INTR_SERIAL",
    "INTR_HIGHTOLOW",
]

#: PyBoy's save-state format version (what ``save_state`` writes).
STATE_VERSION = 29
#: The opcode PyBoy writes over a hooked instruction.
OPCODE_BRK = 0xDB
#: CPU clock (Hz), cycles per frame, and PyBoy's "no event scheduled" cycle count.
CLOCK_RATE = 4194304
FRAME_CYCLES = 70224
MAX_CYCLES = 1 << 31
#: Interrupt flag bits (IF/IE).
INTR_VBLANK, INTR_LCDC, INTR_TIMER, INTR_SERIAL, INTR_HIGHTOLOW = 1, 2, 4, 8, 16
#: PyBoy's flag for its compiled build, where its internals are not reachable from Python. The
#: same holds for emurust (a compiled core): tests that need PyBoy's internals skip on it.
cython_compiled = True


class PyBoyException(Exception):
    """Base class of the errors PyBoy's API raises."""


class PyBoyInternalError(PyBoyException):
    """An error inside the emulator that a user should never see."""


class PyBoyAssertException(PyBoyException):
    """An internal consistency check failed."""


class PyBoyOutOfBoundsException(PyBoyException):
    """An address, bank or index is outside its range."""


class PyBoyNotImplementedException(PyBoyException):
    """A method a base class leaves to its subclasses."""


class PyBoyInvalidInputException(PyBoyException):
    """An argument has an invalid value or type."""


class PyBoyInvalidOperationException(PyBoyException):
    """The operation is not possible in the current state."""


class PyBoyDependencyError(PyBoyException):
    """An optional dependency (Pillow) is missing."""


class PyBoyFeatureDisabledError(PyBoyException):
    """The feature was disabled when the emulator was created."""


class AccessError(PyBoyException):
    """Stands in for an unavailable feature: falsy, and any use raises its exception."""

    _exception_type = PyBoyException
    _exception_message = "Access Error"

    def __bool__(self):
        return False

    def __getattribute__(self, name):
        if name in ("_exception_type", "_exception_message"):
            return super().__getattribute__(name)
        raise self._exception_type(self._exception_message)

    def __setattribute__(self, *args):
        raise self._exception_type(self._exception_message)

    def __getitem__(self, *args):
        raise self._exception_type(self._exception_message)

    def __setitem__(self, *args):
        raise self._exception_type(self._exception_message)


class PillowImportError(AccessError, PyBoyDependencyError):
    _exception_type = PyBoyDependencyError
    _exception_message = "Missing dependency Pillow!"


class SoundEnabledError(AccessError, PyBoyFeatureDisabledError):
    _exception_type = PyBoyFeatureDisabledError
    _exception_message = "Sound is not enabled!"


class IntIOInterface:
    """PyBoy's byte-stream interface of save states: bytes as ints, little-endian wider reads
    and writes built on ``read``/``write``, which subclasses provide."""

    def __init__(self, buf=None):
        pass

    def write(self, byte):
        raise PyBoyNotImplementedException("Not implemented!")

    def read(self):
        raise PyBoyNotImplementedException("Not implemented!")

    def seek(self, pos):
        raise PyBoyNotImplementedException("Not implemented!")

    def flush(self):
        raise PyBoyNotImplementedException("Not implemented!")

    def tell(self):
        raise PyBoyNotImplementedException("Not implemented!")

    def _write_le(self, value, n):
        for i in range(n):
            self.write((value >> (8 * i)) & 0xFF)

    def _read_le(self, n):
        return sum(self.read() << (8 * i) for i in range(n))

    def write_16bit(self, value):
        self._write_le(value, 2)

    def write_32bit(self, value):
        self._write_le(value, 4)

    def write_64bit(self, value):
        self._write_le(value, 8)

    def read_16bit(self):
        return self._read_le(2)

    def read_32bit(self):
        return self._read_le(4)

    def read_64bit(self):
        return self._read_le(8)


class IntIOWrapper(IntIOInterface):
    """A binary file object read and written one byte (an int 0-255) at a time, as PyBoy's."""

    def __init__(self, buf):
        self.buffer = buf

    def write(self, byte):
        if not isinstance(byte, int):
            raise PyBoyAssertException("Input has to be of type 'int'")
        if not 0 <= byte <= 0xFF:
            raise PyBoyOutOfBoundsException("Input has to be positive and less than or equal to 255")
        return self.buffer.write(bytes((byte,)))

    def read(self):
        data = self.buffer.read(1)
        if len(data) != 1:
            raise PyBoyAssertException("No data")
        return data[0]

    def seek(self, pos):
        self.buffer.seek(pos)

    def flush(self):
        self.buffer.flush()

    def tell(self):
        return self.buffer.tell()


_EVENT_NAMES = (
    "QUIT",
    "PRESS_ARROW_UP",
    "PRESS_ARROW_DOWN",
    "PRESS_ARROW_RIGHT",
    "PRESS_ARROW_LEFT",
    "PRESS_BUTTON_A",
    "PRESS_BUTTON_B",
    "PRESS_BUTTON_SELECT",
    "PRESS_BUTTON_START",
    "RELEASE_ARROW_UP",
    "RELEASE_ARROW_DOWN",
    "RELEASE_ARROW_RIGHT",
    "RELEASE_ARROW_LEFT",
    "RELEASE_BUTTON_A",
    "RELEASE_BUTTON_B",
    "RELEASE_BUTTON_SELECT",
    "RELEASE_BUTTON_START",
    "_INTERNAL_TOGGLE_DEBUG",
    "PRESS_SPEED_UP",
    "RELEASE_SPEED_UP",
    "STATE_SAVE",
    "STATE_LOAD",
    "PASS",
    "SCREEN_RECORDING_TOGGLE",
    "PAUSE",
    "UNPAUSE",
    "PAUSE_TOGGLE",
    "PRESS_REWIND_BACK",
    "PRESS_REWIND_FORWARD",
    "RELEASE_REWIND_BACK",
    "RELEASE_REWIND_FORWARD",
    "WINDOW_FOCUS",
    "WINDOW_UNFOCUS",
    "_INTERNAL_RENDERER_FLUSH",
    "_INTERNAL_MOUSE",
    "_INTERNAL_MARK_TILE",
    "SCREENSHOT_RECORD",
    "DEBUG_MEMORY_SCROLL_DOWN",
    "DEBUG_MEMORY_SCROLL_UP",
    "MOD_SHIFT_ON",
    "MOD_SHIFT_OFF",
    "FULL_SCREEN_TOGGLE",
    "CYCLE_PALETTE",
    "SCREEN_RECORDING_TOGGLE_MP4",
    "DEBUG_GAME_AREA_TOGGLE",
)


class WindowEvent:
    """Input and emulator events for :meth:`PyBoy.send_input`, numbered as in PyBoy 2.8.1.

    The class attributes are plain ``int`` constants (``WindowEvent.PRESS_BUTTON_A == 5``);
    an instance wraps one event number and compares equal to it.
    """

    def __init__(self, event):
        self.__event = event

    def __eq__(self, other):
        if isinstance(other, WindowEvent):
            return self.__event == other.__event
        if isinstance(other, int):
            return self.__event == other
        return NotImplemented

    def __hash__(self):
        return hash(self.__event)

    def __int__(self):
        return self.__event

    def __index__(self):
        return self.__event

    def __str__(self):
        return _EVENT_NAMES[self.__event]


for _number, _name in enumerate(_EVENT_NAMES):
    setattr(WindowEvent, _name, _number)
del _number, _name


def dec_to_bcd(value, byte_width=1, byteorder="little"):
    """``value`` as binary-coded decimal, two digits per byte over ``byte_width`` bytes."""
    digits = []
    for _ in range(byte_width):
        digits.append((((value % 100) // 10) << 4 | value % 10) & 0xFF)
        value //= 100
    return int.from_bytes(bytes(digits), byteorder)


def bcd_to_dec(value, byte_width=1, byteorder="little"):
    """Binary-coded decimal to decimal. As in PyBoy 2.8.1, the bytes of
    ``value.to_bytes(byte_width, byteorder)`` are weighted 1, 100, 10000, ... in that order."""
    result = 0
    scale = 1
    for b in value.to_bytes(byte_width, byteorder):
        result += ((b >> 4) * 10 + (b & 0x0F)) * scale
        scale *= 100
    return result


def _bcd_to_dec(values):
    """Per-byte BCD to decimal, for a sequence of bytes."""
    return [(b >> 4) * 10 + (b & 0x0F) for b in values]
