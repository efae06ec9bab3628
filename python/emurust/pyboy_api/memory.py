"""``PyBoy.memory`` and ``PyBoy.register_file``: PyBoy 2.8.1's views of the memory map and
the CPU registers.

Reads and writes without a bank go through the bus as PyBoy's do (``memory[0xFF04]`` catches
the timer up, writes to 0x2000 switch ROM banks). With a bank (``memory[bank, addr]``) they go
straight to ROM (an override: not saved in states), VRAM, cartridge RAM or work RAM, with
PyBoy's range rules and messages.
"""

from __future__ import annotations

from operator import index

from .. import _core

from .utils import PyBoyInvalidInputException, PyBoyInvalidOperationException, PyBoyOutOfBoundsException

_C_INT_MIN, _C_INT_MAX = -(2**31), 2**31 - 1


def _c_int(value):
    """PyBoy's compiled API takes addresses as C ints (converted through a C long first)."""
    if not -(2**63) <= value < 2**63:
        raise OverflowError("Python int too large to convert to C long")
    if not _C_INT_MIN <= value <= _C_INT_MAX:
        raise OverflowError("value too large to convert to int")
    return value


def _u8(value):
    """A byte as PyBoy's compiled setters accept it (C uint8_t conversion)."""
    if isinstance(value, float):
        value = int(value)
    else:
        try:
            value = index(value)
        except TypeError:
            raise TypeError("an integer is required") from None
    if value < 0:
        raise OverflowError("can't convert negative value to uint8_t")
    if value >= 2**64:
        raise OverflowError("Python int too large to convert to C unsigned long")
    if value > 0xFF:
        raise OverflowError("value too large to convert to uint8_t")
    return value


def _typename(obj):
    t = type(obj)
    return t.__qualname__ if t.__module__ == "builtins" else f"{t.__module__}.{t.__qualname__}"


class PyBoyMemoryView:
    """``memory[addr]``, ``memory[start:stop:step]``, ``memory[bank, addr]``,
    ``memory[bank, start:stop:step]``, and assignment to each."""

    def __init__(self, pyboy):
        self._pyboy = pyboy
        self._gb = pyboy._gb
        self._host = pyboy._host

    # ------------------------------------------------------------------ helpers

    @staticmethod
    def _fix_slice(addr):
        if not isinstance(addr, slice):
            raise TypeError(f"Expected slice, got {_typename(addr)}")
        if addr.start is None:
            return (-1, 0, 0)
        if addr.stop is None:
            return (0, -1, 0)
        start, stop = addr.start, addr.stop
        if start > stop:
            return (-1, -1, 0)
        try:  # C int conversions, as PyBoy's: floats are truncated
            start = int(start) if isinstance(start, float) else index(start)
            stop = int(stop) if isinstance(stop, float) else index(stop)
            step = 1 if addr.step is None else (int(addr.step) if isinstance(addr.step, float) else index(addr.step))
        except TypeError:
            raise PyBoyInvalidInputException("Slice bounds and step must be integers") from None
        if step <= 0:
            raise PyBoyInvalidInputException("Slice step must be a positive integer")
        return start, stop, step

    def _parse(self, key):
        is_bank = isinstance(key, tuple)
        bank = 0
        addr = key
        if is_bank:
            if len(key) != 2:  # PyBoy's (Cython's) unpacking messages
                if len(key) > 2:
                    raise ValueError("too many values to unpack (expected 2)")
                raise ValueError(f"need more than {len(key)} value{'' if len(key) == 1 else 's'} to unpack")
            bank, addr = key
            if not isinstance(bank, int):
                raise PyBoyInvalidInputException("Bank has to be integer. Slicing is not supported.")
            bank = _c_int(bank)  # a C int in PyBoy too: OverflowError past its range
        is_single = isinstance(addr, int)
        if is_single:
            return _c_int(addr), 0, 1, bank, True, is_bank
        start, stop, step = self._fix_slice(addr)
        if not start >= 0:
            raise PyBoyInvalidInputException("Start address required")
        if not stop >= 0:
            raise PyBoyInvalidInputException("End address required")
        if not 0 <= start <= 0xFFFF:
            raise PyBoyOutOfBoundsException("Start address out of bounds")
        if not 0 <= stop <= 0x10000:
            raise PyBoyOutOfBoundsException("End address out of bounds")
        if not start < stop:
            raise PyBoyInvalidInputException("Start address has to come before end address")
        return start, stop, step, bank, False, is_bank

    def __len__(self):
        raise PyBoyInvalidOperationException(
            "It's not possible to define the length of the memory space. See instead https://gbdev.io/pandocs/Memory_Map.html"
        )

    def __iter__(self):
        raise PyBoyInvalidOperationException("It's not possible to iterate over the memory space.")

    # ------------------------------------------------------------------ banked storage

    def _region(self, start, stop, bank, writing):
        """For a banked access: (reader, writer, first offset, end offset) after PyBoy's checks.
        ``stop`` is 0 for single accesses (its checks then always pass)."""
        pb = self._pyboy
        limit = (lambda s, n: s <= n) if writing else (lambda s, n: s < n)
        if start < 0x8000:
            if start >= 0x4000:
                start -= 0x4000
                stop -= 0x4000
            if not limit(stop, 0x4000):
                raise PyBoyOutOfBoundsException("Out of bounds for reading ROM bank")
            if writing and not bank <= pb._rom_banks:
                raise PyBoyOutOfBoundsException("ROM Bank out of range")
            if bank == -1:
                if not start <= 0xFF:
                    raise PyBoyOutOfBoundsException("Start address out of range for bootrom")
                if not stop <= (0x100 if writing else 0xFF):
                    raise PyBoyOutOfBoundsException("Start address out of range for bootrom")
                return pb._boot_byte, pb._set_boot_byte, start, stop
            if not bank <= pb._rom_banks:
                raise PyBoyOutOfBoundsException("ROM Bank out of range")
            if not 0 <= bank < pb._rom_banks or start < 0:
                # PyBoy reads past its bank array here; emurust refuses.
                raise PyBoyOutOfBoundsException("ROM Bank out of range")
            gb = self._gb
            host = self._host
            return (
                lambda x: gb.read_rom_bank(bank, x),
                lambda x, v: host.override_rom(bank, x, _u8(v)),
                start,
                stop,
            )
        if start < 0xA000:
            start -= 0x8000
            stop -= 0x8000
            if not (pb._cgb or bank == 0):
                raise PyBoyInvalidInputException("Selecting bank of VRAM is only supported for CGB mode")
            if not limit(stop, 0x2000):
                raise PyBoyOutOfBoundsException("Out of bounds for reading VRAM bank")
            if not bank <= 1:
                raise PyBoyOutOfBoundsException("VRAM Bank out of range")
            gb = self._gb
            host = self._host
            # The bank asked for, whichever bank VBK shows the CPU.
            return (
                lambda x: gb.read_banked(bank, 0x8000 + x),
                lambda x, v: host.set_vram_bank_byte(bank, x, _u8(v)),
                start,
                stop,
            )
        if start < 0xC000:
            start -= 0xA000
            stop -= 0xA000
            if not limit(stop, 0x2000):
                raise PyBoyOutOfBoundsException("Out of bounds for reading cartridge RAM bank")
            if not bank <= pb._ram_banks:
                raise PyBoyOutOfBoundsException("ROM Bank out of range")
            if bank < 0 or start < 0:
                raise PyBoyOutOfBoundsException("ROM Bank out of range")
            return (lambda x: pb._cart_ram_byte(bank, x), lambda x, v: pb._set_cart_ram_byte(bank, x, _u8(v)), start, stop)
        if start < 0xE000:
            start -= 0xC000
            stop -= 0xC000
            if start >= 0x1000:
                start -= 0x1000
                stop -= 0x1000
            if not (pb._cgb or bank == 0):
                raise PyBoyInvalidInputException("Selecting bank of WRAM is only supported for CGB mode")
            if not limit(stop, 0x1000):
                raise PyBoyOutOfBoundsException("Out of bounds for reading VRAM bank")
            if not bank <= 7:
                raise PyBoyOutOfBoundsException("WRAM Bank out of range")
            gb = self._gb
            host = self._host
            if bank == 0:  # C000-CFFF, also for addresses D000-DFFF (as in PyBoy)
                return (lambda x: host.wram_byte(x), lambda x, v: host.set_wram_byte(x, _u8(v)), start, stop)
            # A CGB bank (1-7) at D000-DFFF, whichever bank SVBK shows the CPU.
            banks = []  # all 32 KiB, bank order, read once per access

            def read(x):
                if not banks:
                    banks.append(gb.wram_banks())
                return banks[0][bank * 0x1000 + x]

            def write(x, v):
                host.set_wram_bank_byte(bank, x, _u8(v))

            return read, write, start, stop
        raise PyBoyInvalidInputException("Invalid memory address for bank")

    # ------------------------------------------------------------------ access

    def __getitem__(self, key):
        start, stop, step, bank, is_single, is_bank = self._parse(key)
        if is_bank:
            read, _, first, end = self._region(start, stop, bank, writing=False)
            if is_single:
                return read(first)
            return [read(x) for x in range(first, end, step)]
        if is_single:
            return self._host.read_cpu(start & 0xFFFF)
        return list(self._host.read_cpu_range(start, stop, step))

    def __setitem__(self, key, value):
        start, stop, step, bank, is_single, is_bank = self._parse(key)
        if is_bank:
            _, write, first, end = self._region(start, stop, bank, writing=True)
            targets = [first] if is_single else range(first, end, step)
        else:
            gb = self._gb

            def write(x, v):
                gb.write(x & 0xFFFF, _u8(v))

            targets = [start] if is_single else range(start, stop, step)
        if is_single:
            write(targets[0], value)
        elif hasattr(value, "__iter__"):
            if (stop - start) // step != len(value):
                raise PyBoyInvalidInputException("slice does not match length of data")
            for x, v in zip(targets, value):
                write(x, v)
        else:
            for x in targets:
                write(x, value)


# CPU registers A, F, B, C, D, E, HL, SP, PC, as attributes (PyBoyRegisterFile(pyboy)): a
# native type (emurust/_core, pyboy_memory.rs) whose attribute slots read the core directly.
# Writes are `value & mask` with Python's `&` (F keeps its upper four bits), as on PyBoy.
PyBoyRegisterFile = _core.PyBoyRegisterFile
