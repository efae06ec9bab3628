"""Black-box check of cartridge banking against PyBoy 2.8.1.

Builds the same synthetic ROMs as crates/emurust-core/src/cartridge/tests.rs (every bank's bytes
encode the bank number), drives PyBoy's memory bus with the same pseudo-random sequence of MBC
writes, RAM reads/writes and ROM reads as the Rust test `pyboy_differential`, and prints an
FNV-1a digest of every value read plus all external RAM banks afterwards. The digests are pasted
into that Rust test. Carts with a clock are left out: PyBoy advances its RTC by host time when
accessed at an unchanged CPU cycle count, so it is not deterministic through this API.

Usage: python tools/cartridge_pyboy_check.py [steps]
       python tools/cartridge_pyboy_check.py --rtc OUT_TRACE [ops]

The --rtc mode checks the MBC3 clock deterministically instead: a type 0x10 ROM that halts
forever, one bus operation per `tick(frames)`, so every clock access happens at a new CPU cycle
count (which is read back from the save state). It writes a trace, one operation per line:
`cycles kind addr value result` (kind w = write, r = read; result -1 for writes), which
crates/emurust-core/src/cartridge/pyboy_rtc_trace.txt holds and the Rust test `pyboy_rtc_trace`
replays.
"""

import io
import logging
import os
import sys
import tempfile

from emurust.rom_header import with_checksums

M64 = (1 << 64) - 1


def banks_for_code(code):
    return {0x52: 72, 0x53: 80, 0x54: 96}.get(code, 2 << code)


def fix_checksums(rom):
    rom[:] = with_checksums(rom, global_too=True)


def make_rom(cart_type, rom_code, ram_code, multicart=False):
    banks = banks_for_code(rom_code)
    rom = bytearray(banks * 0x4000)
    for b in range(banks):
        pair = bytes([b & 0xFF, (b >> 8) | 0x80])
        rom[b * 0x4000 : (b + 1) * 0x4000] = pair * 0x2000
    rom[0x100:0x150] = bytes(0x50)
    rom[0x134:0x13C] = b"TESTCART"
    rom[0x147] = cart_type
    rom[0x148] = rom_code
    rom[0x149] = ram_code
    if multicart:
        for b in range(banks):
            s = b * 0x4000
            rom[s + 0x104 : s + 0x134] = bytes((i * 7) & 0xFF for i in range(0x30))
    fix_checksums(rom)
    return rom


def fnv(h, byte):
    return ((h ^ byte) * 0x100000001B3) & M64


def run(cart_type, rom_code, ram_code, multicart, seed, steps):
    from pyboy import PyBoy

    rom = make_rom(cart_type, rom_code, ram_code, multicart)
    with tempfile.TemporaryDirectory() as d:
        path = os.path.join(d, "t.gb")
        with open(path, "wb") as f:
            f.write(rom)
        pb = PyBoy(path, window="null", log_level="ERROR")
        mem = pb.memory
        h = 0xCBF29CE484222325
        s = seed | 1
        for _ in range(steps):
            s ^= (s << 13) & M64
            s ^= s >> 7
            s ^= (s << 17) & M64
            addr = (s >> 8) & 0xFFFF
            v = (s >> 32) & 0xFF
            k = s % 6
            if k == 0:
                mem[addr & 0x7FFF] = 0x0A if s & 0x100 else v
            elif k == 1:
                mem[addr & 0x7FFF] = v & 0x1F
            elif k == 2:
                mem[0xA000 | (addr & 0x1FFF)] = v
            elif k == 3:
                h = fnv(h, mem[0xA000 | (addr & 0x1FFF)])
            else:
                a = addr & 0x7FFF
                if a < 0x100:
                    a |= 0x100
                h = fnv(h, mem[a])
        ram_banks = {0: 1, 1: 1, 2: 1, 3: 4, 4: 16, 5: 8}[ram_code]
        for bank in range(ram_banks):
            for b in mem[bank, 0xA000:0xBFFF]:
                h = fnv(h, b)
            h = fnv(h, mem[bank, 0xBFFF])
        pb.stop(save=False)
        return h


SCENARIOS = [
    # (type, rom code, ram code, multicart)
    (0x00, 0x00, 0x00, False),
    (0x08, 0x00, 0x00, False),
    (0x01, 0x06, 0x00, False),
    (0x03, 0x06, 0x03, False),
    (0x03, 0x05, 0x02, False),
    (0x02, 0x01, 0x03, False),
    (0x01, 0x05, 0x00, True),
    (0x05, 0x03, 0x00, False),
    (0x06, 0x01, 0x00, False),
    (0x11, 0x06, 0x00, False),
    (0x13, 0x05, 0x03, False),
    (0x12, 0x02, 0x04, False),
    (0x13, 0x07, 0x05, False),
    (0x19, 0x08, 0x00, False),
    (0x1B, 0x07, 0x04, False),
    (0x1E, 0x05, 0x03, False),
    (0x1C, 0x02, 0x01, False),
]

def cpu_cycles(pb):
    buf = io.BytesIO()
    pb.save_state(buf)
    state = buf.getvalue()
    # DMG state: version, bootrom_enabled, key0, key1, double_speed, cgb (6 bytes), then the
    # CPU: A F B C D E, HL SP PC (16-bit), 7 flag bytes, then cycles (64-bit little-endian).
    assert state[5] == 0, "expected a DMG state"
    return int.from_bytes(state[25:33], "little")


def rtc_trace(out_path, ops, seed=0x5EED_C10C):
    from pyboy import PyBoy

    rom = make_rom(0x10, 0x02, 0x03)
    rom[0x150:0x154] = bytes([0xF3, 0x76, 0x18, 0xFD])  # di; halt; jr -3
    fix_checksums(rom)
    s = seed | 1

    def rnd():
        nonlocal s
        s ^= (s << 13) & M64
        s ^= s >> 7
        s ^= (s << 17) & M64
        return s

    lines = []
    with tempfile.TemporaryDirectory() as d:
        path = os.path.join(d, "rtc.gb")
        with open(path, "wb") as f:
            f.write(rom)
        pb = PyBoy(path, window="null", log_level="ERROR")
        mem = pb.memory
        pb.tick(1, False)
        for _ in range(ops):
            r = rnd()
            frames = [1, 1, 2, 7, 30, 61, 240, 1800, 3700][r % 9]
            pb.tick(frames, False)
            cycles = cpu_cycles(pb)
            r = rnd()
            k = r % 16
            v = (r >> 20) & 0xFF
            if k < 3:  # select an RTC register (mostly) or a RAM bank
                addr, v = 0x4000, [8, 9, 10, 11, 12, 12, 8, 0, 1, 13][v % 10]
            elif k < 7:  # latch sequence pieces
                addr, v = 0x6000, [0, 1, 1, 0, 2][v % 5]
            elif k < 9:  # write the selected register: near-rollover or random values
                addr = 0xA000
                v = [59, 23, 0xFF, 0x01, 0x40, 0x41, 0xC1, 0x00, 62, 31, v, v][(r >> 28) % 12]
            elif k < 10:
                addr, v = 0x0000, [0x0A, 0x0A, 0x0A, 0x00][v % 4]
            else:
                addr = 0xA000 | ((r >> 32) & 0x1FFF)
                lines.append(f"{cycles} r {addr} 0 {mem[addr]}")
                continue
            mem[addr] = v
            lines.append(f"{cycles} w {addr} {v} -1")
        pb.stop(save=False)
    with open(out_path, "w") as f:
        f.write("\n".join(lines) + "\n")


if __name__ == "__main__":
    logging.disable(logging.CRITICAL)
    if len(sys.argv) > 2 and sys.argv[1] == "--rtc":
        rtc_trace(sys.argv[2], int(sys.argv[3]) if len(sys.argv) > 3 else 600)
        sys.exit(0)
    steps = int(sys.argv[1]) if len(sys.argv) > 1 else 20000
    for t, rc, ram, multi in SCENARIOS:
        h = run(t, rc, ram, multi, 0x9E3779B97F4A7C15 ^ (t << 16 | rc << 8 | ram), steps)
        print(f"(0x{t:02X}, 0x{rc:02X}, 0x{ram:02X}, {str(multi).lower()}, 0x{h:016X}),")
