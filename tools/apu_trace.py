#!/usr/bin/env python3
"""Black-box oracle for the APU: build a tiny test ROM by hand, run it in PyBoy 2.8.1 and
record every interaction between PyBoy's Motherboard and its sound unit.

Usage:
    python tools/apu_trace.py trace SEED FRAMES OUT.gz   # record a trace (pure-Python PyBoy)
    python tools/apu_trace.py compare SEED FRAMES        # compiled vs pure-Python PyBoy: same WRAM?

The trace is replayed by the unit tests in crates/emurust-core/src/apu/ (see `replay`), which
feed the same calls into our `Apu` and compare every value.

Why pure Python: PyBoy's compiled (Cython) build hides the sound unit's attributes, so we run
a copy of the same package with its compiled modules removed (the identical .py sources run
under CPython).  `compare` checks that the compiled build and the pure-Python build produce
the same work RAM for the same ROM (the ROM stores every sound-register read into WRAM), so
that the pure-Python oracle can be trusted.

Trace lines (all numbers decimal), each followed by PyBoy's sound._cycles_to_interrupt after it:
    T now sampling cti           sound.tick(now) with disable_sampling = not sampling
    R off value now cti          sound.get(off) returned value (sound was just ticked to now)
    W off value now divc cti     sound.set(off, value) via the bus; divc = timer.DIV_counter
                                 as the Motherboard sees it at that moment (not caught up!)
    D now divc cti               FF04 write: divc = timer.DIV_counter before the reset
    B head b0 b1 ... cti         clear_buffer(): the audio buffer's first `head` bytes
"""

import gzip
import os
import random
import shutil
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
PURE = "/tmp/pyboy_pure"


def pure_pyboy_path():
    """Copy the installed PyBoy without its compiled extension modules."""
    import importlib.util

    spec = importlib.util.find_spec("pyboy")
    src = os.path.dirname(spec.origin)
    dst = os.path.join(PURE, "pyboy")
    if not os.path.exists(dst):
        shutil.copytree(src, dst, ignore=shutil.ignore_patterns("*.so", "*.c", "__pycache__"))
    return PURE


# ----------------------------------------------------------------------------------------------
# A tiny assembler for the few instructions the test ROM uses
# ----------------------------------------------------------------------------------------------


class Asm:
    def __init__(self):
        self.code = bytearray()

    def b(self, *xs):
        self.code += bytes(xs)

    def ld_a(self, v):  # LD A,n
        self.b(0x3E, v & 0xFF)

    def ldh_w(self, reg):  # LDH (n),A
        self.b(0xE0, reg & 0xFF)

    def ldh_r(self, reg):  # LDH A,(n)
        self.b(0xF0, reg & 0xFF)

    def store(self):  # LD (HL+),A
        self.b(0x22)

    def write(self, reg, v):
        self.ld_a(v)
        self.ldh_w(reg)

    def read_store(self, reg):
        self.ldh_r(reg)
        self.store()

    def delay(self, outer, inner):
        # LD B,outer ; L1: LD C,inner ; L2: DEC C ; JR NZ,L2 ; DEC B ; JR NZ,L1
        self.b(0x06, outer & 0xFF)
        self.b(0x0E, inner & 0xFF)
        self.b(0x0D, 0x20, 0xFD)
        self.b(0x05, 0x20, 0xF8)

    def nops(self, n):
        self.b(*([0x00] * n))


REGS = list(range(0x10, 0x27))  # NR10..NR52
WAVE = list(range(0x30, 0x40))


def build_rom(seed, n_ops=2500):
    rng = random.Random(seed)
    a = Asm()
    a.b(0x31, 0xFE, 0xFF)  # LD SP,FFFE
    a.b(0x21, 0x00, 0xC0)  # LD HL,C000
    # 1. Everything after the boot ROM
    for r in range(0x10, 0x40):
        a.read_store(r)
    # 2. All ones, all zeros (power stays on: NR52 written last / skipped)
    for v in (0xFF, 0x00):
        for r in list(range(0x10, 0x26)) + list(range(0x27, 0x40)):
            a.write(r, v)
        for r in range(0x10, 0x40):
            a.read_store(r)
    # Power off, read, write while off, read, power on, read
    a.write(0x26, 0x00)
    for r in range(0x10, 0x40):
        a.read_store(r)
    for r in range(0x10, 0x26):
        a.write(r, 0xFF)
    for r in range(0x10, 0x40):
        a.read_store(r)
    a.write(0x26, 0x80)
    for r in range(0x10, 0x40):
        a.read_store(r)
    # 3. Random phase
    for _ in range(n_ops):
        if len(a.code) > 0x7E00 - 0x150 - 64:
            break
        k = rng.random()
        if k < 0.30:
            reg = rng.choice(REGS)
            if reg in (0x14, 0x19, 0x1E, 0x23):
                v = rng.choice([0x80, 0xC0, 0x40, 0x00, 0x87, 0xC7]) | rng.randrange(8)
            elif reg == 0x26:
                if rng.random() < 0.25:
                    v = 0x00
                else:
                    v = 0x80
            elif reg in (0x12, 0x17, 0x21):
                v = rng.choice([0xF0, 0xF8, 0x08, 0x00, rng.randrange(256), 0xA3, 0x19])
            elif reg == 0x1A:
                v = rng.choice([0x80, 0x80, 0x00])
            else:
                v = rng.randrange(256)
                if reg in (0x11, 0x16, 0x20) and rng.random() < 0.5:
                    v |= 0x3C  # short lengths, so that they run out
            a.write(reg, v)
        elif k < 0.35:
            a.write(rng.choice(WAVE), rng.randrange(256))
        elif k < 0.38:
            a.write(0x04, 0)  # DIV
        elif k < 0.65:
            a.read_store(rng.choice(REGS + [0x26, 0x26, 0x26] + WAVE))
        elif k < 0.88:
            a.nops(rng.randrange(1, 40))
        else:
            if rng.random() < 0.85:
                a.delay(rng.randrange(1, 4), rng.randrange(1, 100))
            else:
                a.delay(rng.randrange(1, 60), rng.randrange(1, 256))
        # keep HL inside C000-DFFF
    a.b(0x18, 0xFE)  # JR -2 (spin)
    rom = bytearray(0x8000)
    rom[0x100:0x104] = bytes([0x00, 0xC3, 0x50, 0x01])  # NOP; JP 0150
    rom[0x134:0x13F] = b"APUTEST\0\0\0\0"
    rom[0x147] = 0x00
    rom[0x148] = 0x00
    rom[0x149] = 0x00
    x = 0
    for i in range(0x134, 0x14D):
        x = (x - rom[i] - 1) & 0xFF
    rom[0x14D] = x
    assert len(a.code) < 0x8000 - 0x150, len(a.code)
    rom[0x150 : 0x150 + len(a.code)] = a.code
    return bytes(rom)


def poll(a, reg, n):
    for _ in range(n):
        a.read_store(reg)


def build_directed(variant):
    """Edge cases the random ROM rarely reaches, each swept over several phases."""
    a = Asm()
    a.b(0x31, 0xFE, 0xFF)
    a.b(0x21, 0x00, 0xC0)
    pad = variant  # shifts every phase by 4*variant cycles

    def repower():
        a.write(0x26, 0x00)
        a.write(0x26, 0x80)
        a.write(0x25, 0xFF)
        a.write(0x24, 0x77)

    # A. Wave RAM while CH3 plays: reads and writes at every phase of short periods.
    for freq in (0x7F8, 0x7FB, 0x7F3):
        for k in range(0, 16):
            repower()
            for i in range(0, 16, 4):
                a.write(0x30 + i, (i * 0x11 + k) & 0xFF)
            a.write(0x1A, 0x80)
            a.write(0x1C, 0x20)
            a.write(0x1D, freq & 0xFF)
            a.write(0x1E, 0x80 | freq >> 8)
            a.nops(k + pad)
            a.read_store(0x30 + (k % 16))
            a.read_store(0x31)
            a.write(0x30 + (k % 16), 0xA5)
            a.read_store(0x3F)
            a.write(0x1E, 0x80 | freq >> 8)  # retrigger while playing (corruption quirk)
            a.nops(k % 5)
            a.write(0x1E, 0x80 | freq >> 8)
            a.read_store(0x26)
            a.write(0x1A, 0x00)
            for i in range(0, 16, 3):
                a.read_store(0x30 + i)
    # B. Extra length clocks on NRx4 writes in the first half of a length period.
    for ch_base, dac_reg, dac_val in ((0x10, 0x12, 0xF0), (0x15, 0x17, 0xF0), (0x1A, 0x1A, 0x80), (0x1F, 0x21, 0xF0)):
        nrx1, nrx4 = ch_base + 1, ch_base + 4
        for load in (0x3F, 0x3E, 0x00, 0xFF):
            for v4 in (0xC0, 0x40, 0x80, 0xC7):
                for wait in (0, 1):
                    repower()
                    a.write(dac_reg, dac_val)
                    a.write(nrx1, load)
                    a.write(nrx4, 0x80)
                    if wait:
                        a.delay(9, 60)  # ~8700 cycles: past the first sequencer event (odd step)
                    a.write(nrx4, v4)
                    a.read_store(0x26)
                    a.write(nrx4, v4 & 0x7F)
                    a.read_store(0x26)
                    a.delay(9, 60)
                    a.read_store(0x26)
                    a.delay(9, 60)
                    a.read_store(0x26)
    # C. DIV writes on the APU bit's edge, then power-on while the bit is high.
    for w1 in (16, 17, 24, 30):
        for w2 in (0, 8, 17, 20):
            a.write(0x04, 0)
            a.delay(w1, 60)  # DIV bit 4 high after 4096 cycles
            a.write(0x04, 0)
            a.write(0x26, 0x00)
            a.delay(w2 + 1, 60)
            a.write(0x26, 0x80)
            a.write(0x21, 0xF0)
            a.write(0x20, 0x3F)
            a.write(0x23, 0xC0)
            for _ in range(12):
                a.read_store(0x26)
                a.delay(2, 100)
            a.write(0x26, 0x80 | pad)  # power-on write while already on
            a.write(0x23, 0xC0)
            for _ in range(8):
                a.read_store(0x26)
                a.delay(2, 100)
    # D. Sweep: overflow, the delayed check after reaching 0x7FF, negate then clear negate.
    for nr10, freq in ((0x11, 0x555), (0x11, 0x554), (0x12, 0x666), (0x19, 0x400), (0x71, 0x555), (0x09, 0x700), (0x00, 0x555)):
        for k in range(0, 8, 2):
            repower()
            a.write(0x10, nr10)
            a.write(0x12, 0xF0)
            a.write(0x13, freq & 0xFF)
            a.write(0x14, 0x80 | freq >> 8)
            a.delay(5 + k, 100)
            poll(a, 0x26, 30)
            a.write(0x10, nr10 & ~0x08)
            a.read_store(0x26)
            a.write(0x14, 0x80 | freq >> 8)
            a.nops(k)
            poll(a, 0x26, 4)
    # E. Envelope + DAC, NR52 status over a long stretch.
    repower()
    a.write(0x12, 0x19)
    a.write(0x14, 0x80)
    a.write(0x21, 0xA1)
    a.write(0x23, 0x80)
    for _ in range(40):
        poll(a, 0x26, 1)
        a.delay(20, 200)
    a.b(0x18, 0xFE)
    return finish_rom(a)


def finish_rom(a):
    rom = bytearray(0x8000)
    rom[0x100:0x104] = bytes([0x00, 0xC3, 0x50, 0x01])  # NOP; JP 0150
    rom[0x134:0x13F] = b"APUTEST\0\0\0\0"
    x = 0
    for i in range(0x134, 0x14D):
        x = (x - rom[i] - 1) & 0xFF
    rom[0x14D] = x
    assert len(a.code) < 0x8000 - 0x150, len(a.code)
    rom[0x150 : 0x150 + len(a.code)] = a.code
    return bytes(rom)


def write_rom(seed):
    path = f"/tmp/apu_test_{seed}.gb"
    with open(path, "wb") as f:
        # seeds >= 100 select the directed ROM (variant = seed - 100)
        f.write(build_directed(seed - 100) if seed >= 100 else build_rom(seed))
    return path


# ----------------------------------------------------------------------------------------------


def run_trace(seed, frames, out):
    sys.path.insert(0, pure_pyboy_path())
    import pyboy as pb
    import pyboy.core.sound as snd

    assert not pb.utils.cython_compiled
    lines = []
    S = snd.Sound
    orig_tick, orig_get, orig_set, orig_reset, orig_clear = S.tick, S.get, S.set, S.reset_apu_div, S.clear_buffer
    state = {"mb": None, "in_power_off": False}

    def tick(self, c):
        orig_tick(self, c)
        lines.append(f"T {c} {0 if self.disable_sampling else 1} {self._cycles_to_interrupt}")

    def get(self, off):
        v = orig_get(self, off)
        lines.append(f"R {off} {v} {self.last_cycles} {self._cycles_to_interrupt}")
        return v

    def set_(self, off, v):
        if state["in_power_off"]:  # the recursive writes inside _power_off are not bus writes
            return orig_set(self, off, v)
        divc = state["mb"].timer.DIV_counter
        rec = len(lines)
        lines.append(None)
        if off == 22 and not (v & 0x80):
            state["in_power_off"] = True
            try:
                orig_set(self, off, v)
            finally:
                state["in_power_off"] = False
        else:
            orig_set(self, off, v)
        lines[rec] = f"W {off} {v} {self.last_cycles} {divc} {self._cycles_to_interrupt}"

    def reset(self, edge):
        lines.append(f"D {self.cycles} {state['mb'].timer.DIV_counter} {self._cycles_to_interrupt}")
        orig_reset(self, edge)

    def clear(self):
        head = self.audiobuffer_head
        data = " ".join(str(self.audiobuffer[i]) for i in range(head))
        lines.append(f"B {head} {data} {self._cycles_to_interrupt}".replace("  ", " "))
        orig_clear(self)

    S.tick, S.get, S.set, S.reset_apu_div, S.clear_buffer = tick, get, set_, reset, clear
    rom = write_rom(seed)
    p = pb.PyBoy(rom, window="null")
    state["mb"] = p.mb
    p.set_emulation_speed(0)
    lines.insert(0, f"I {p.mb.sound._cycles_to_interrupt}")
    for i in range(frames):
        # vary the sampling flag the way PyBoy.tick(count, sound=...) does
        if i % 7 == 3:
            p.tick(2, False, i % 2 == 0)
        else:
            p.tick(1, False, True)
    with gzip.open(out, "wt") as f:
        for ln in lines:
            f.write(ln + "\n")
    wram = bytes(p.memory[0xC000:0xE000])
    p.stop(save=False)
    print(f"{len(lines)} events, rom {rom}, final cpu cycles unknown; wram head {wram[:16].hex()}")
    return wram


def run_wram(seed, frames, pure):
    if pure:
        sys.path.insert(0, pure_pyboy_path())
    import pyboy as pb

    assert pb.utils.cython_compiled != pure
    rom = write_rom(seed)
    p = pb.PyBoy(rom, window="null")
    p.set_emulation_speed(0)
    snaps = []
    for i in range(frames):
        if i % 7 == 3:
            p.tick(2, False, i % 2 == 0)
        else:
            p.tick(1, False, True)
        snaps.append(
            bytes(p.memory[0xC000:0xE000]) + bytes(p.memory[0xFF10:0xFF40]) + p.sound.ndarray.tobytes()
        )
    p.stop(save=False)
    return snaps


if __name__ == "__main__":
    cmd = sys.argv[1]
    if cmd == "trace":
        run_trace(int(sys.argv[2]), int(sys.argv[3]), sys.argv[4])
    elif cmd == "wram":
        import pickle

        snaps = run_wram(int(sys.argv[2]), int(sys.argv[3]), sys.argv[4] == "pure")
        with open(sys.argv[5], "wb") as f:
            pickle.dump(snaps, f)
    elif cmd == "compare":
        import pickle
        import subprocess

        seed, frames = sys.argv[2], sys.argv[3]
        res = {}
        for mode in ("compiled", "pure"):
            out = f"/tmp/apu_wram_{seed}_{mode}.pkl"
            subprocess.run([sys.executable, __file__, "wram", seed, frames, mode, out], check=True)
            with open(out, "rb") as f:
                res[mode] = pickle.load(f)
        bad = [i for i, (x, y) in enumerate(zip(res["compiled"], res["pure"])) if x != y]
        print(f"frames compared: {len(res['pure'])}, differing frames: {bad[:10]}")
        sys.exit(1 if bad else 0)
