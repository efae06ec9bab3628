#!/usr/bin/env python3
"""Assemble a ROM: bank 0 from the linker's .ihx, banks 1.. from blobs; fix the header.

usage: mkrom.py OUT.gb IHX TITLE CARTTYPE ROMBANKS RAMSIZECODE [bankN.bin ...]
Bank 0 (code) must fit in 0x0000-0x3FFF because banks 1.. are switched under 0x4000.
"""
import os
import re
import sys


def load_ihx(path):
    mem = {}
    for line in open(path):
        line = line.strip()
        if not line.startswith(':'):
            continue
        raw = bytes.fromhex(line[1:])
        n, addr, typ = raw[0], (raw[1] << 8) | raw[2], raw[3]
        if typ == 0:
            for i in range(n):
                mem[addr + i] = raw[4 + i]
    return mem


def main():
    out, ihx, title, ctype, nbanks, ramcode = sys.argv[1:7]
    blobs = sys.argv[7:]
    nbanks, ctype, ramcode = int(nbanks, 0), int(ctype, 0), int(ramcode, 0)
    rom = bytearray(b"\xff" * (0x4000 * nbanks))
    mem = load_ihx(ihx)
    top = max(mem)
    if top >= 0x4000:
        sys.exit(f"code overflows bank 0: top address 0x{top:04X}")
    for a, v in mem.items():
        rom[a] = v
    for blob in blobs:
        bank = int(re.search(r"bank(\d+)\.bin$", blob).group(1))
        data = open(blob, "rb").read()
        rom[bank * 0x4000:(bank + 1) * 0x4000] = data
    rom[0x104:0x134] = bytes(0x30)          # no Nintendo logo
    t = title.encode()[:15]
    rom[0x134:0x143] = t + bytes(15 - len(t))
    rom[0x143] = 0x00                       # DMG only
    rom[0x144:0x146] = b"00"
    rom[0x146] = 0
    rom[0x147] = ctype
    rom[0x148] = {2: 0, 4: 1, 8: 2, 16: 3}[nbanks]
    rom[0x149] = ramcode
    rom[0x14A] = 1
    rom[0x14B] = 0x33
    rom[0x14C] = 0
    x = 0
    for b in rom[0x134:0x14D]:
        x = (x - b - 1) & 0xFF
    rom[0x14D] = x
    rom[0x14E:0x150] = b"\0\0"
    s = sum(rom) & 0xFFFF
    rom[0x14E], rom[0x14F] = s >> 8, s & 0xFF
    open(out, "wb").write(rom)
    print(f"{os.path.basename(out)}: {len(rom)} bytes, code top 0x{top:04X}, type 0x{ctype:02X}")


if __name__ == "__main__":
    main()
