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

Trace events (all numbers decimal), each followed by PyBoy's sound._cycles_to_interrupt after it
(stored compacted, see `compact`):
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

from emurust.rom_header import header_checksum

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
        # Never let an instruction (or a loop, emitted in one call) straddle 0x4000: the
        # pure-Python PyBoy misreads an operand that lies across that boundary (the compiled
        # one does not), which would make the two runs differ for reasons outside the APU.
        start = 0x150 + len(self.code)
        if start < 0x4000 < start + len(xs):
            self.code += bytes(0x4000 - start)
        self.code += bytes(xs)

    def ldh_r(self, reg):  # LDH A,(n)
        self.b(0xF0, reg & 0xFF)

    def write(self, reg, v):  # LD A,n ; LDH (n),A
        self.b(0x3E, v & 0xFF, 0xE0, reg & 0xFF)

    def read_store(self, reg):  # LDH A,(n) ; LD (HL+),A
        self.b(0xF0, reg & 0xFF, 0x22)

    def delay(self, outer, inner):
        # LD B,outer ; L1: LD C,inner ; L2: DEC C ; JR NZ,L2 ; DEC B ; JR NZ,L1
        self.b(0x06, outer & 0xFF, 0x0E, inner & 0xFF, 0x0D, 0x20, 0xFD, 0x05, 0x20, 0xF8)

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
    rom[0x14D] = header_checksum(rom)
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


def poll_loop(a, reg, count, outer, inner, store=True):
    """Read `reg` `count` times (store each into (HL+)), with a delay loop between reads."""
    body = bytearray([0xF0, reg & 0xFF])  # LDH A,(reg)
    if store:
        body += bytes([0x22])  # LD (HL+),A
    if outer:
        body += bytes([0x06, outer, 0x0E, inner, 0x0D, 0x20, 0xFD, 0x05, 0x20, 0xF8])
    body += bytes([0x15])  # DEC D
    body += bytes([0x20, (-(len(body) + 2)) & 0xFF])  # JR NZ,start
    a.b(0x16, count & 0xFF, *body)  # LD D,count ; body


def build_directed2(variant):
    """Second batch of edge cases, watched closely (polling loops)."""
    a = Asm()
    a.b(0x31, 0xFE, 0xFF)
    a.b(0x21, 0x00, 0xC0)
    pad = variant

    def repower():
        a.write(0x26, 0x00)
        a.write(0x26, 0x80)
        a.write(0x25, 0xFF)

    # I. Sweep reaching 0x7FF: the delayed overflow check, polled every 12 cycles around the
    #    first sweep clock (frame-sequencer event 3 after power-on).
    for k in range(0, 3):
        for nr10, freq in ((0x11, 0x555), (0x12, 0x666), (0x13, 0x71C)):
            repower()
            a.write(0x10, nr10)
            a.write(0x12, 0xF0)
            a.write(0x13, freq & 0xFF)
            a.write(0x14, 0x80 | freq >> 8)
            a.delay(24, 62)
            a.nops(k + pad)
            for _ in range(110):
                a.ldh_r(0x26)
            a.read_store(0x26)
    # G. FF04 write on the APU bit, power-on with the bit high: the sequencer's skip shows in
    #    when CH1's sweep overflows (0x500 -> 0x780 -> overflow at the first sweep clock), and
    #    in the extra length clock of an NR24 write after the first event.
    for w1 in (16, 20):
        for w2 in (0, 3, 17, 20, 24):
            a.write(0x04, 0)
            a.delay(w1, 60)
            a.write(0x04, 0)
            a.write(0x26, 0x00)
            a.delay(w2 + 1, 60)
            a.write(0x26, 0x80)
            a.write(0x10, 0x11)
            a.write(0x12, 0xF0)
            a.write(0x13, 0x00)
            a.write(0x14, 0x85)
            a.write(0x17, 0xF0)
            a.write(0x16, 0x3F)
            a.write(0x19, 0x80)
            poll_loop(a, 0x26, 6, 1, 60)  # ~6000 cycles
            a.write(0x19, 0x40)  # length enable: extra clock if the step is odd
            poll_loop(a, 0x26, 40, 1, 60)
    # F. Length: expiry by the extra clock, reload by the trigger, clocked again (63 left).
    for wait in (9, 10):
        repower()
        for dac, v in ((0x12, 0xF0), (0x17, 0xF0), (0x1A, 0x80), (0x21, 0xF0)):
            a.write(dac, v)
        for nrx1, nrx4 in ((0x11, 0x14), (0x16, 0x19), (0x1B, 0x1E), (0x20, 0x23)):
            a.write(nrx1, 0xFF)
            a.write(nrx4, 0x87)
        a.delay(wait, 60)  # into the odd step
        for nrx4 in (0x14, 0x19, 0x1E, 0x23):
            a.write(nrx4, 0xC7)
        a.read_store(0x26)
        poll_loop(a, 0x26, 200, 6, 40)  # ~200 * 4000 cycles
        poll_loop(a, 0x26, 150, 2, 60)  # ~150 * 2000 cycles: the 63rd/64th length clocks
    # H. Wave RAM read in tight loops while CH3 plays (many phases, with and without sampling).
    for freq in (0x7F7, 0x7F3, 0x7EE, 0x7FB):
        repower()
        for i in range(16):
            a.write(0x30 + i, (0x10 * i + freq) & 0xFF)
        a.write(0x1A, 0x80)
        a.write(0x1C, 0x20)
        a.write(0x1D, freq & 0xFF)
        a.write(0x1E, 0x80 | freq >> 8)
        a.nops(pad)
        for reg in (0x30, 0x35, 0x3A):
            poll_loop(a, reg, 255, 0, 0, store=False)
            poll_loop(a, reg, 255, 0, 0, store=False)
            for _ in range(40):
                a.ldh_r(reg)
                a.b(0x22)
        a.write(0x1A, 0x00)
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
        # seeds >= 100 / 200 select the directed ROMs (variant = seed - 100 / 200)
        if seed >= 200:
            f.write(build_directed2(seed - 200))
        elif seed >= 100:
            f.write(build_directed(seed - 100))
        else:
            f.write(build_rom(seed))
    return path


# ----------------------------------------------------------------------------------------------


def compact(lines):
    """The stored form: cycle stamps as deltas from the previous event's, hints relative to
    the event's cycle (gzip then shrinks the trace about 4x). See the module docstring."""
    last = 0
    for ln in lines:
        f = ln.split()
        k, v = f[0], [int(x) for x in f[1:]]
        if k == "T":
            yield f"T{v[0] - last} {v[1]} {v[2] - v[0]}"
            last = v[0]
        elif k == "R":
            yield f"R{v[0]} {v[1]} {v[2] - last} {v[3] - v[2]}"
            last = v[2]
        elif k == "W":
            yield f"W{v[0]} {v[1]} {v[2] - last} {v[3]} {v[4] - v[2]}"
            last = v[2]
        elif k == "D":
            yield f"D{v[0] - last} {v[1]} {v[2] - v[0]}"
            last = v[0]
        elif k == "B":
            yield "B" + " ".join(str(x) for x in v[:-1]) + f" {v[-1] - last}"
        else:
            yield ln


def schedule(p, i):
    """Frame i of a run: vary the sampling flag the way PyBoy.tick(count, sound=...) does
    (sampling changes where PyBoy's sound catch-up chunks end)."""
    if i % 7 == 3:
        p.tick(2, False, i % 2 == 0)
    else:
        p.tick(1, False, i % 3 != 1)


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
        schedule(p, i)
    with gzip.open(out, "wt", compresslevel=9) as f:
        for ln in compact(lines):
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
        schedule(p, i)
        snap = bytes(p.memory[0xC000:0xE000])
        if os.environ.get("APU_SNAP_IO", "1") == "1":
            # Reading FF10-FF3F from outside catches the sound unit up (as a CPU read would).
            snap += bytes(p.memory[0xFF10:0xFF40]) + p.sound.ndarray.tobytes()
        snaps.append(snap)
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
