#!/usr/bin/env python3
"""Random I/O programs for hunting LCD/PPU, timer, DMA and interrupt differences with PyBoy.

``make_rom(seed)`` builds a 32 KiB ROM (no assembler needed) whose program is a random but
reproducible loop of what programs do with the I/O registers outside the APU: writes of random
values to LCDC (the LCD switched off and on at random points), STAT, LYC, scroll, palettes, window,
DMA, DIV/TIMA/TMA/TAC, IF, IE, P1, SB/SC, LY and unmapped addresses; reads of every register
through LDH, LD A,(nn) and LD A,(C) and read-modify-write instructions on them; OAM and VRAM reads
and writes; delays, LY and STAT polling loops, HALT, EI/DI. Every value read is stored into work
RAM (C000-CFFF, a ring) and every interrupt handler records its source, LY, STAT and DIV (D000-D0FF),
so a rollout against PyBoy that compares memory at every frame stops at the first difference.

    python tools/iofuzz.py --seeds 0-49 --frames 600      # hunt; prints the diverging seeds
    python tools/iofuzz.py --write 17 /tmp/fuzz17.gb       # the ROM of one seed
"""
from __future__ import annotations

import argparse
import os
import random
import sys
import tempfile

# Registers and what values to write (None: any byte).
_LCDC_ON = (0x91, 0x93, 0x83, 0x87, 0xE3, 0xB1, 0xF3, 0x81, 0x80, 0xD3, 0x97, 0xA3)
_LCDC_OFF = (0x00, 0x11, 0x13, 0x63)


def _lcdc_value(rng):
    return rng.choice(_LCDC_OFF) if rng.random() < 0.3 else rng.choice(_LCDC_ON)


WRITES = {
    0x40: _lcdc_value,
    0x41: lambda r: r.choice((0x00, 0x08, 0x10, 0x20, 0x40, 0x48, 0x60, 0x78, 0xFF)),
    0x42: None,
    0x43: None,
    0x44: None,
    0x45: lambda r: r.randrange(0, 156),
    0x46: lambda r: r.choice((0xC0, 0xC1, 0xD0, 0x80, 0x98, 0x00, 0x40, 0xE0, 0xFE, 0xFF, 0xA0)),
    0x47: None,
    0x48: None,
    0x49: None,
    0x4A: lambda r: r.randrange(0, 150),
    0x4B: lambda r: r.randrange(0, 170),
    0x04: None,
    0x05: None,
    0x06: None,
    0x07: lambda r: r.randrange(0, 8),
    0x0F: lambda r: r.randrange(0, 32),
    0xFF: lambda r: r.randrange(0, 32),
    0x00: lambda r: r.choice((0x00, 0x10, 0x20, 0x30)),
    0x01: None,
    0x02: lambda r: r.choice((0x00, 0x01, 0x81, 0x80, 0x7E)),
    0x03: None,
    0x08: None,
    0x4C: None,
    0x50: lambda r: r.choice((0x00, 0xFF)),
    0x7F: None,
}
READS = [0x00, 0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07, 0x08, 0x0F] + list(range(0x40, 0x4C)) + [0x4C, 0x4F, 0x50, 0x7F, 0xFF]
HOT_READS = (0x41, 0x44, 0x41, 0x44, 0x04, 0x05, 0x0F)


def _u16(v):
    return [v & 0xFF, v >> 8]


class _Program:
    def __init__(self, rng):
        self.rng = rng
        self.code: list[int] = []
        self.lcd_on = True  # the boot ROM leaves it on

    def emit(self, *b):
        self.code.extend(b)

    def log_a(self):
        # LD (HL+),A; RES 4,H  (HL stays in C000-CFFF)
        self.emit(0x22, 0xCB, 0xA4)

    def write(self, reg, value):
        if reg == 0x40:
            self.lcd_on = bool(value & 0x80)
        self.emit(0x3E, value)
        form = self.rng.random()
        if reg == 0xFF or form < 0.6:
            self.emit(0xE0, reg)  # LDH (n),A
        elif form < 0.8:
            self.emit(0xEA, *_u16(0xFF00 | reg))  # LD (nn),A
        else:
            self.emit(0x0E, reg, 0xE2)  # LD C,n; LD (C),A

    def read(self, reg):
        form = self.rng.random()
        if reg == 0xFF or form < 0.6:
            self.emit(0xF0, reg)
        elif form < 0.8:
            self.emit(0xFA, *_u16(0xFF00 | reg))
        else:
            self.emit(0x0E, reg, 0xF2)
        self.log_a()

    def ensure_lcd_on(self):
        if not self.lcd_on:
            self.write(0x40, self.rng.choice(_LCDC_ON))

    def op(self):
        r = self.rng
        k = r.random()
        if k < 0.28:
            reg = r.choice(list(WRITES))
            gen = WRITES[reg]
            self.write(reg, gen(r) if gen else r.randrange(256))
        elif k < 0.50:
            self.read(r.choice(HOT_READS) if r.random() < 0.5 else r.choice(READS))
        elif k < 0.56:
            # a burst of STAT/LY reads
            for _ in range(r.randrange(2, 8)):
                self.read(r.choice((0x41, 0x44)))
        elif k < 0.62:
            # OAM or VRAM read (LD A,(DE)) / write (LD (DE),A)
            addr = r.choice((0xFE00 + r.randrange(0xA0), 0x8000 + r.randrange(0x2000), 0xFEA0 + r.randrange(0x60)))
            self.emit(0x11, *_u16(addr))
            if r.random() < 0.6:
                self.emit(0x1A)
                self.log_a()
            else:
                self.emit(0x3E, r.randrange(256), 0x12)
        elif k < 0.67:
            # read-modify-write on a register: PUSH HL; LD HL,FFnn; op (HL); POP HL
            reg = r.choice((0x40, 0x41, 0x0F, 0x07, 0x05, 0x45, 0x42, 0x4A, 0x00, 0xFF))
            opc = r.choice((0x34, 0x35)) if r.random() < 0.3 else 0xCB
            self.emit(0xE5, 0x21, *_u16(0xFF00 | reg))
            if opc == 0xCB:
                bit = r.randrange(8)
                if reg == 0x40 and bit == 7:
                    bit = r.randrange(7)
                self.emit(0xCB, r.choice((0x86, 0xC6, 0x46)) | (bit << 3))
            elif reg != 0x40:
                self.emit(opc)
            self.emit(0xE1)
        elif k < 0.77:
            # delay: LD B,n; DEC B; JR NZ,-3   or a few NOPs
            if r.random() < 0.5:
                self.emit(0x06, r.randrange(1, 256), 0x05, 0x20, 0xFD)
            else:
                self.emit(*([0x00] * r.randrange(1, 6)))
        elif k < 0.82:
            # poll LY == n (LCD on) or STAT mode == m
            self.ensure_lcd_on()
            if r.random() < 0.5:
                self.emit(0xF0, 0x44, 0xFE, r.randrange(0, 154), 0x20, 0xFA)
            else:
                self.emit(0xF0, 0x41, 0xE6, 0x03, 0xFE, r.randrange(4), 0x20, 0xF8)
            self.read(0x41)
        elif k < 0.87:
            self.emit(r.choice((0xFB, 0xF3)))  # EI / DI
        elif k < 0.90:
            # HALT until VBlank (LCD on, VBlank enabled)
            self.ensure_lcd_on()
            self.emit(0xF0, 0xFF, 0xF6, 0x01, 0xE0, 0xFF)  # IE |= 1
            self.emit(0x76, 0x00)
            self.read(0x41)
            self.read(0x44)
        elif k < 0.93:
            # OAM DMA then reads while it runs
            self.write(0x46, WRITES[0x46](r))
            for _ in range(r.randrange(1, 5)):
                self.emit(0xFA, *_u16(0xFE00 + r.randrange(0xA0)))
                self.log_a()
        else:
            # a serial transfer with the internal clock
            self.emit(0x3E, r.randrange(256), 0xE0, 0x01, 0x3E, 0x81, 0xE0, 0x02)


def _handler(source: int) -> list[int]:
    # PUSH AF; PUSH HL; LD H,D0; LDH A,(80); LD L,A; LD (HL),src; INC L;
    # LDH A,(44); LD (HL),A; INC L; LDH A,(41); LD (HL),A; INC L; LDH A,(04); LD (HL),A; INC L;
    # LD A,L; LDH (80),A; POP HL; POP AF; RETI
    return [
        0xF5, 0xE5, 0x26, 0xD0, 0xF0, 0x80, 0x6F, 0x36, source, 0x2C,
        0xF0, 0x44, 0x77, 0x2C, 0xF0, 0x41, 0x77, 0x2C, 0xF0, 0x04, 0x77, 0x2C,
        0x7D, 0xE0, 0x80, 0xE1, 0xF1, 0xD9,
    ]


def make_rom(seed: int, ops: int = 400) -> bytes:
    rng = random.Random(seed)
    rom = bytearray(0x8000)
    for v in range(8):
        rom[v * 8 : v * 8 + 3] = bytes([0xC3, 0x50, 0x01])  # RST n: restart
    handlers = 0x0200
    for i in range(5):
        h = handlers + 0x20 * i
        rom[0x40 + 8 * i : 0x43 + 8 * i] = bytes([0xC3, *_u16(h)])
        code = _handler(i)
        rom[h : h + len(code)] = bytes(code)
    rom[0x100:0x104] = bytes([0x00, 0xC3, 0x50, 0x01])
    rom[0x134:0x13C] = b"IOFUZZ\x00\x00"
    # 0x150: DI; LD SP,DFF0; LD HL,C000; XOR A; LDH (80),A; JP 0x400
    rom[0x150:0x15D] = bytes([0xF3, 0x31, 0xF0, 0xDF, 0x21, 0x00, 0xC0, 0xAF, 0xE0, 0x80, 0xC3, 0x00, 0x04])
    p = _Program(rng)
    for _ in range(ops):
        p.op()
    p.ensure_lcd_on()  # the loop starts as the boot ROM left it: LCD on
    p.emit(0xC3, 0x00, 0x04)
    assert len(rom) == 0x8000
    if 0x400 + len(p.code) > 0x8000:
        raise ValueError("program too long")
    rom[0x400 : 0x400 + len(p.code)] = bytes(p.code)
    # DMA sources in ROM pages 00 and 40 hold code and data: fine. Header checksums:
    x = 0
    for b in rom[0x134:0x14D]:
        x = (x - b - 1) & 0xFF
    rom[0x14D] = x
    g = (sum(rom) - rom[0x14E] - rom[0x14F]) & 0xFFFF
    rom[0x14E], rom[0x14F] = g >> 8, g & 0xFF
    return bytes(rom)


def _seeds(spec: str) -> list[int]:
    out = []
    for part in spec.split(","):
        if "-" in part:
            a, b = part.split("-")
            out += range(int(a), int(b) + 1)
        else:
            out.append(int(part))
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--seeds", default="0-19")
    ap.add_argument("--frames", type=int, default=600)
    ap.add_argument("--state-every", type=int, default=10)
    ap.add_argument("--write", nargs=2, metavar=("SEED", "PATH"))
    args = ap.parse_args()
    if args.write:
        with open(args.write[1], "wb") as f:
            f.write(make_rom(int(args.write[0])))
        return
    from emurust.verify.rollout import rollout

    bad = []
    with tempfile.TemporaryDirectory() as d:
        for seed in _seeds(args.seeds):
            path = os.path.join(d, f"iofuzz{seed}.gb")
            with open(path, "wb") as f:
                f.write(make_rom(seed))
            r = rollout(path, args.frames, seed=seed, state_every=args.state_every)
            if r.divergence is not None:
                bad.append(seed)
                print(f"seed {seed}: DIVERGED after {r.frames_identical} frames: {r.divergence}", flush=True)
            else:
                print(f"seed {seed}: {args.frames} frames identical", flush=True)
    print("diverging seeds:", bad)
    sys.exit(1 if bad else 0)


if __name__ == "__main__":
    main()
