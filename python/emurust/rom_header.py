"""Cartridge header checksums (Pan Docs, "The Cartridge Header", 014D and 014E-014F): one
implementation for the package, its tests, tools and benchmarks."""

from __future__ import annotations

from typing import Union

_Rom = Union[bytes, bytearray, memoryview]


def header_checksum(rom: _Rom) -> int:
    """The byte at 0x14D that the boot ROM checks: x = x - rom[i] - 1 over 0x134-0x14C."""
    x = 0
    for b in bytes(rom[0x134:0x14D]):
        x = (x - b - 1) & 0xFF
    return x


def global_checksum(rom: _Rom) -> int:
    """The big-endian word at 0x14E: the sum of every byte but those two (not checked by the
    hardware, nor by PyBoy)."""
    return (sum(bytes(rom)) - rom[0x14E] - rom[0x14F]) & 0xFFFF


def with_checksums(rom: _Rom, *, global_too: bool = False) -> bytes:
    """`rom` with its header checksum (and, with `global_too`, its global checksum) set."""
    out = bytearray(rom)
    out[0x14D] = header_checksum(out)
    if global_too:
        g = global_checksum(out)
        out[0x14E], out[0x14F] = g >> 8, g & 0xFF
    return bytes(out)


def cartridge_title(rom: _Rom) -> str:
    """The header's title as PyBoy reads it (``PyBoy.cartridge_title``): 0x134-0x142 (0x143 too
    on cartridges without the Game Boy Color flag), up to the first NUL."""
    cgb = bool(rom[0x143] >> 7)
    return "".join(chr(b) for b in rom[0x134 : 0x142 if cgb else 0x143]).split("\0")[0]
