"""Black-box pixel oracle for the LCD renderer: PyBoy 2.8.1 draws random scenes.

A tiny hand-made ROM (DI; JR -2 at 0x150) lets PyBoy's boot ROM finish and then does
nothing, so the picture depends only on what this script writes, between frames,
through PyBoy's public memory API: all of VRAM, OAM and the LCD registers. After each
step PyBoy runs one frame (`tick(1, render)`) and its `screen.ndarray` is recorded.

The Rust test `lcd::tests::pyboy_pixel_dump` replays the same steps on `Lcd` (set the
environment variable EMURUST_LCD_DUMP to the file this script writes) and compares
every frame byte for byte.

Usage: python tools/lcd_pixel_dump.py OUT.bin [steps] [seed]

Dump format: b"LCDDUMP2", u32 step count, then per step:
  u8 render, 8192 bytes VRAM, 160 bytes OAM,
  10 register bytes for FF41 FF42 FF43 FF45 FF47 FF48 FF49 FF4A FF4B FF40
  (written in that order, LCDC last), 144*160*4 bytes of expected RGBA, then PyBoy's
  own save-state sections of the LCD (9116 bytes) and of the renderer (115201 bytes),
  cut out of `pyboy.save_state()` (the LCD one starts at byte 45 for a DMG).
"""

import io
import random
import struct
import sys

import numpy as np
from pyboy import PyBoy

LOGO = bytes.fromhex(
    "CEED6666CC0D000B03730083000C000D0008111F8889000EDCCC6EE6DDDDD999BBBB67636E0EECCCDDDC999FBBB9333E"
)
REGS = [0xFF41, 0xFF42, 0xFF43, 0xFF45, 0xFF47, 0xFF48, 0xFF49, 0xFF4A, 0xFF4B, 0xFF40]


def make_rom(path):
    rom = bytearray(0x8000)
    rom[0x100:0x104] = bytes([0x00, 0xC3, 0x50, 0x01])  # NOP; JP 0x150
    rom[0x104:0x134] = LOGO
    rom[0x134:0x13F] = b"LCDTEST".ljust(11, b"\0")
    rom[0x147] = 0x00  # ROM only
    rom[0x148] = 0x00
    rom[0x149] = 0x00
    chk = 0
    for b in rom[0x134:0x14D]:
        chk = (chk - b - 1) & 0xFF
    rom[0x14D] = chk
    rom[0x150:0x153] = bytes([0xF3, 0x18, 0xFE])  # DI; JR -2
    with open(path, "wb") as f:
        f.write(rom)


def random_scene(rng, step):
    """VRAM, OAM and registers of one step. Mixes structured and random content."""
    vram = bytearray(rng.getrandbits(8) for _ in range(0x2000))
    if rng.random() < 0.3:
        # Sparse tiles: lots of colour 0, so priorities and transparency matter.
        for i in range(0x1800):
            if rng.random() < 0.6:
                vram[i] = 0
    oam = bytearray(160)
    crowd = rng.random() < 0.4  # many objects on the same lines (10-per-line limit)
    for n in range(40):
        if crowd:
            y = rng.choice([16, 20, 40, 60, 100, 150, 0, 8, 159, 160])
            x = rng.choice([0, 1, 7, 8, 9, 20, 20, 50, 160, 167, 168, 255, rng.randrange(256)])
        else:
            y = rng.randrange(0, 170)
            x = rng.randrange(0, 176)
        oam[n * 4 : n * 4 + 4] = bytes([y, x, rng.getrandbits(8), rng.getrandbits(8)])
    lcdc = rng.getrandbits(8) | 0x80
    if rng.random() < 0.6:
        lcdc |= 0x03  # background and objects on more often than not
    if rng.random() < 0.05:
        lcdc &= 0x7F  # LCD off
    wx = rng.choice([0, 1, 6, 7, 8, 50, 100, 159, 166, 167, 200, rng.randrange(256)])
    wy = rng.choice([0, 1, 50, 143, 144, 200, rng.randrange(256)])
    regs = [
        rng.getrandbits(8) & 0x78,  # STAT (interrupt enables only)
        rng.getrandbits(8),  # SCY
        rng.getrandbits(8),  # SCX
        rng.getrandbits(8),  # LYC
        rng.getrandbits(8),  # BGP
        rng.getrandbits(8),  # OBP0
        rng.getrandbits(8),  # OBP1
        wy,
        wx,
        lcdc,
    ]
    render = rng.random() > 0.1
    return render, bytes(vram), bytes(oam), regs


LCD_SECTION = 9116
RENDERER_SECTION = 144 * 160 * 5 + 1


def pyboy_sections(pyboy, screen):
    buf = io.BytesIO()
    pyboy.save_state(buf)
    state = buf.getvalue()
    assert state[5] == 0, "DMG state expected"
    lcd = state[45 : 45 + LCD_SECTION]
    assert lcd[:0x2000] == bytes(pyboy.memory[0x8000:0xA000])
    # The renderer section follows the sound's; find it by the screen it holds.
    rgba = screen.reshape(-1, 4)
    first = rgba[0].tobytes()
    start = 45 + LCD_SECTION
    while True:
        o = state.index(first, start)
        sec = state[o : o + RENDERER_SECTION]
        if len(sec) == RENDERER_SECTION:
            pix = np.frombuffer(sec[:-1], np.uint8).reshape(-1, 5)[:, :4]
            if np.array_equal(pix, rgba):
                return lcd, sec
        start = o + 1


def main():
    out = sys.argv[1]
    steps = int(sys.argv[2]) if len(sys.argv) > 2 else 100
    seed = int(sys.argv[3]) if len(sys.argv) > 3 else 1
    rng = random.Random(seed)
    rom = "/tmp/lcd_test_rom.gb"
    make_rom(rom)
    pyboy = PyBoy(rom, window="null", sound_emulated=False)
    # Let the boot ROM finish.
    for _ in range(400):
        pyboy.tick(1, True)
        if 0x150 <= pyboy.register_file.PC <= 0x153:
            break
    else:
        raise SystemExit("boot ROM did not reach 0x150")
    pyboy.tick(2, True)
    with open(out, "wb") as f:
        f.write(b"LCDDUMP2")
        f.write(struct.pack("<I", steps))
        for step in range(steps):
            render, vram, oam, regs = random_scene(rng, step)
            for i, b in enumerate(vram):
                pyboy.memory[0x8000 + i] = b
            for i, b in enumerate(oam):
                pyboy.memory[0xFE00 + i] = b
            for addr, v in zip(REGS, regs):
                pyboy.memory[addr] = v
            pyboy.tick(1, render)
            screen = np.ascontiguousarray(pyboy.screen.ndarray, dtype=np.uint8)
            assert screen.shape == (144, 160, 4)
            f.write(bytes([int(render)]))
            f.write(vram)
            f.write(oam)
            f.write(bytes(regs))
            f.write(screen.tobytes())
            lcd_sec, ren_sec = pyboy_sections(pyboy, screen)
            f.write(lcd_sec)
            f.write(ren_sec)
    pyboy.stop(save=False)


if __name__ == "__main__":
    main()
