#!/usr/bin/env python3
"""Fill in the cartridge header checksum (0x14D) and global checksum
(0x14E-0x14F, big endian) of a Game Boy ROM image in place.

Pan Docs "The Cartridge Header":
  0x14D = (-(sum of bytes 0x134..0x14C) - 25) & 0xFF, i.e. x = x - b - 1 per byte
  0x14E/F = 16-bit sum of every byte of the ROM except the two checksum bytes.
Also checks that the file size matches the ROM size code at 0x148.
"""
import sys


def fix(path: str) -> None:
    data = bytearray(open(path, "rb").read())
    size_code = data[0x148]
    expected = 0x8000 << size_code
    if len(data) != expected:
        sys.exit(f"{path}: size {len(data)} != {expected} from ROM size code {size_code:#x}")
    x = 0
    for b in data[0x134:0x14D]:
        x = (x - b - 1) & 0xFF
    data[0x14D] = x
    data[0x14E] = 0
    data[0x14F] = 0
    total = sum(data) & 0xFFFF
    data[0x14E] = total >> 8
    data[0x14F] = total & 0xFF
    open(path, "wb").write(data)


if __name__ == "__main__":
    for p in sys.argv[1:]:
        fix(p)
