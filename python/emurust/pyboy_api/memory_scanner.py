"""``PyBoy.memory_scanner``: find addresses by value, then narrow them down as values change."""

from __future__ import annotations

from enum import Enum

from .utils import bcd_to_dec


class StandardComparisonType(Enum):
    EXACT = 1
    LESS_THAN = 2
    GREATER_THAN = 3
    LESS_THAN_OR_EQUAL = 4
    GREATER_THAN_OR_EQUAL = 5


class DynamicComparisonType(Enum):
    UNCHANGED = 1
    CHANGED = 2
    INCREASED = 3
    DECREASED = 4
    MATCH = 5


class ScanMode(Enum):
    INT = 1
    BCD = 2


def _name(member):
    """Enum members are matched by name, so PyBoy's own enums work here too."""
    return getattr(member, "name", member)


_STANDARD = {
    "EXACT": lambda v, t: v == t,
    "LESS_THAN": lambda v, t: v < t,
    "GREATER_THAN": lambda v, t: v > t,
    "LESS_THAN_OR_EQUAL": lambda v, t: v <= t,
    "GREATER_THAN_OR_EQUAL": lambda v, t: v >= t,
}

# Whether an address stays a candidate, from (cached value, current value, new_value).
_DYNAMIC = {
    "UNCHANGED": lambda old, cur, new: old == cur,
    "CHANGED": lambda old, cur, new: old != cur,
    "INCREASED": lambda old, cur, new: old < cur,
    "DECREASED": lambda old, cur, new: old > cur,
    "MATCH": lambda old, cur, new: cur == new,
}


class MemoryScanner:
    """As ``pyboy.api.memory_scanner.MemoryScanner``."""

    def __init__(self, pyboy):
        self.pyboy = pyboy
        self._memory_cache = {}
        self._memory_cache_byte_width = 1
        self._memory_cache_value_type = ScanMode.INT
        self._memory_cache_byteorder = "little"

    def _value_at(self, addr, byte_width, value_type, byteorder):
        value = int.from_bytes(self.pyboy.memory[addr : addr + byte_width], byteorder)
        if _name(value_type) == "BCD":
            value = bcd_to_dec(value, byte_width, byteorder)
        return value

    def scan_memory(
        self,
        target_value=None,
        start_addr=0x0000,
        end_addr=0xFFFF,
        standard_comparison_type=StandardComparisonType.EXACT,
        value_type=ScanMode.INT,
        byte_width=1,
        byteorder="little",
    ):
        """Addresses from ``start_addr`` to ``end_addr`` (inclusive) whose value compares to
        ``target_value`` as asked (all of them when ``target_value`` is None)."""
        if byte_width <= 0:
            raise ValueError("byte_width must be positive")
        self._memory_cache = {}
        self._memory_cache_byte_width = byte_width
        self._memory_cache_value_type = value_type
        self._memory_cache_byteorder = byteorder
        compare = _STANDARD.get(_name(standard_comparison_type))
        for addr in range(start_addr, end_addr - byte_width + 2):
            value = self._value_at(addr, byte_width, value_type, byteorder)
            if target_value is None:
                self._memory_cache[addr] = value
                continue
            if compare is None:
                raise ValueError("Invalid comparison type")
            if compare(value, target_value):
                self._memory_cache[addr] = value
        return list(self._memory_cache.keys())

    def rescan_memory(self, new_value=None, dynamic_comparison_type=DynamicComparisonType.UNCHANGED, byteorder=None):
        """Keep the candidates whose value changed as ``dynamic_comparison_type`` says."""
        if byteorder is None:
            byteorder = self._memory_cache_byteorder
        keep = _DYNAMIC.get(_name(dynamic_comparison_type))
        for addr, old in self._memory_cache.copy().items():
            current = self._value_at(addr, self._memory_cache_byte_width, self._memory_cache_value_type, byteorder)
            if keep is None:
                raise ValueError("Invalid comparison type")
            if _name(dynamic_comparison_type) == "MATCH" and new_value is None:
                raise ValueError("new_value must be specified when using DynamicComparisonType.MATCH")
            if keep(old, current, new_value):
                self._memory_cache[addr] = current
            else:
                self._memory_cache.pop(addr)
        return list(self._memory_cache.keys())
