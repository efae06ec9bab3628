"""L2 interaction checks: small purpose-built programs on emurust and PyBoy 2.8.1, compared every frame.

Each check exercises one interaction between components (joypad -> P1 -> the program's RAM;
MBC bank switching reaching ROM and RAM banks; STAT/LYC, timer, VBlank and joypad interrupts
arriving on the same cycles; OAM DMA), runs it on both emulators with the same inputs, and
compares the full observable state (cycles, registers, WRAM, VRAM, OAM, I/O, HRAM, IE,
cartridge RAM; the screen every few frames) after every frame. A *sanity* condition checked on
PyBoy's side makes sure the program really exercised what it claims: a check that exercises
nothing fails instead of passing.

Each check returns an :class:`InteractionResult`; :func:`run_all` runs them all. The test
programs are assembled here from bytes (comments give the instructions) into minimal ROMs.
"""

from __future__ import annotations

import os
import tempfile
import time
from dataclasses import asdict, dataclass
from typing import Callable, Optional

from ..rom_header import with_checksums
from .compare import Divergence, first_divergence, make_pyboy, pyboy_boot_rom_path, snapshot_emurust, snapshot_pyboy

#: Frames PyBoy's boot ROM takes; the programs start running in the frame after.
BOOT_FRAMES = 65


@dataclass
class InteractionResult:
    name: str
    description: str
    passed: bool
    details: str
    frames: int
    frames_identical: int
    divergence: Optional[Divergence] = None
    seconds: float = 0.0

    def to_dict(self) -> dict:
        d = asdict(self)
        d["divergence"] = divergence_dict(self.divergence)
        d["seconds"] = round(self.seconds, 2)
        return d


def divergence_dict(d: Optional[Divergence]) -> Optional[dict]:
    if d is None:
        return None

    def plain(v):
        if isinstance(v, (bytes, bytearray)):
            return repr(bytes(v))
        if isinstance(v, tuple):
            return [int(x) for x in v]
        return int(v) if hasattr(v, "__index__") and not isinstance(v, bool) else v

    return {"frame": d.frame, "component": d.component, "where": d.where, "emurust": plain(d.emurust), "pyboy": plain(d.pyboy), "trace": [int(pc) for pc in d.trace]}


# ---------------------------------------------------------------- a tiny assembler


class _Asm:
    """Bytes with labels for relative jumps. Instructions are written as opcode bytes."""

    def __init__(self, origin: int):
        self.origin = origin
        self.code = bytearray()
        self.labels: dict[str, int] = {}
        self.fixups: list[tuple[int, str]] = []

    def __call__(self, *bs: int) -> "_Asm":
        self.code += bytes(bs)
        return self

    def label(self, name: str) -> "_Asm":
        self.labels[name] = self.origin + len(self.code)
        return self

    def jr(self, opcode: int, name: str) -> "_Asm":  # 18 JR, 20 JR NZ, 28 JR Z
        self.code += bytes([opcode, 0])
        self.fixups.append((len(self.code) - 1, name))
        return self

    # Shorthands (SM83 encodings, Pan Docs "CPU Instruction Set").
    def ld_a(self, n):  # LD A,n8
        return self(0x3E, n & 0xFF)

    def ldh_to(self, a8):  # LDH (FF00+a8),A
        return self(0xE0, a8 & 0xFF)

    def ldh_from(self, a8):  # LDH A,(FF00+a8)
        return self(0xF0, a8 & 0xFF)

    def st(self, addr):  # LD (a16),A
        return self(0xEA, addr & 0xFF, addr >> 8)

    def ld(self, addr):  # LD A,(a16)
        return self(0xFA, addr & 0xFF, addr >> 8)

    def ld_hl(self, n16):  # LD HL,n16
        return self(0x21, n16 & 0xFF, n16 >> 8)

    def jp(self, addr):  # JP a16
        return self(0xC3, addr & 0xFF, addr >> 8)

    def call(self, addr):  # CALL a16
        return self(0xCD, addr & 0xFF, addr >> 8)

    def bytes(self) -> bytes:
        out = bytearray(self.code)
        for pos, name in self.fixups:
            rel = self.labels[name] - (self.origin + pos + 1)
            if not -128 <= rel <= 127:
                raise ValueError(f"jump to {name} out of range")
            out[pos] = rel & 0xFF
        return bytes(out)


def _handler(counter: int, records: list[tuple[int, int]]) -> bytes:
    """Interrupt routine at its own address: count, record I/O registers into WRAM, RETI."""
    a = _Asm(0)
    a(0xF5)(0xE5)  # PUSH AF; PUSH HL
    a.ld_hl(counter)(0x34)  # LD HL,counter; INC (HL)
    for io, dest in records:
        a.ldh_from(io).st(dest)
    a(0xE1)(0xF1)(0xD9)  # POP HL; POP AF; RETI
    return a.bytes()


def build_rom(program: bytes, *, cart_type=0x00, rom_banks=2, ram_code=0x00, blocks: Optional[dict] = None, bank_marks: bool = False) -> bytes:
    """A minimal ROM: entry jumps to `program` at 0x150; `blocks` maps addresses (bank 0) to bytes;
    with `bank_marks`, byte 0x4000 of bank n (n >= 1) is 0x10 + n. Header checksums are correct."""
    rom = bytearray(0x4000 * rom_banks)
    rom[0x100:0x104] = b"\x00\xc3\x50\x01"
    rom[0x134:0x13C] = b"EMURUSTL"
    rom[0x147] = cart_type
    rom[0x148] = {2: 0, 4: 1, 8: 2, 16: 3, 32: 4, 64: 5, 128: 6}[rom_banks]
    rom[0x149] = ram_code
    rom[0x150 : 0x150 + len(program)] = program
    for addr, data in (blocks or {}).items():
        rom[addr : addr + len(data)] = data
    if bank_marks:
        for n in range(1, rom_banks):
            rom[n * 0x4000] = (0x10 + n) & 0xFF
    return with_checksums(rom, global_too=True)


# ---------------------------------------------------------------- running both emulators


@dataclass
class _Run:
    frames_identical: int
    divergence: Optional[Divergence]
    wram: dict  # frame -> PyBoy's WRAM after that frame (only frames listed in `keep`)
    final_ref: object  # PyBoy's last Snapshot


def run_pair(
    rom: bytes,
    frames: int,
    events: Optional[dict] = None,
    render_every: int = 10,
    before_frame: Optional[Callable[[object, int], None]] = None,
) -> _Run:
    """Run `rom` on both emulators through PyBoy's boot ROM for `frames` frames, sending
    `events` ({frame: [("press"|"release", button), ...]}) before those frames, and compare
    everything after every frame. `before_frame(gb, frame)` may tamper with emurust (tests)."""
    import emurust

    events = events or {}
    with open(pyboy_boot_rom_path(), "rb") as f:
        boot = f.read()
    fd, path = tempfile.mkstemp(suffix=".gb", prefix="emurust-l2-")
    with os.fdopen(fd, "wb") as f:
        f.write(rom)
    pb = None
    try:
        gb = emurust.GameBoy(path, boot_rom=boot)
        emurust._core.Host(gb).set_pc_trace(True)  # a divergence report lists the last instructions
        pb = make_pyboy(path)
        wram = {}
        ref = None
        for frame in range(1, frames + 1):
            for action, button in events.get(frame, []):
                getattr(gb, f"button_{action}")(button)
                getattr(pb, f"button_{action}")(button)
            render = render_every > 0 and (frame % render_every == 0 or frame == frames)
            if before_frame:
                before_frame(gb, frame)
            gb.tick(1, render)
            pb.tick(1, render)
            ours = snapshot_emurust(gb, render)
            ref = snapshot_pyboy(pb, render, len(gb.cartridge_ram()) // 0x2000)
            wram[frame] = ref.regions["WRAM"]
            d = first_divergence(frame, ours, ref)
            if d is not None:
                d.trace = emurust._core.Host(gb).pc_trace()
                return _Run(frame - 1, d, wram, ref)
        return _Run(frames, None, wram, ref)
    finally:
        if pb is not None:
            pb.stop(save=False)
        os.unlink(path)


def _w(run: _Run, addr: int, frame: Optional[int] = None) -> int:
    """PyBoy's WRAM byte at `addr` after `frame` (default: the last frame run)."""
    frame = frame if frame is not None else max(run.wram)
    return run.wram[frame][addr - 0xC000]


def _result(name: str, description: str, frames: int, run: _Run, sanity: list[tuple[bool, str]], t0: float) -> InteractionResult:
    if run.divergence is not None:
        return InteractionResult(name, description, False, f"diverged: {run.divergence}", frames, run.frames_identical, run.divergence, time.perf_counter() - t0)
    failed = [msg for ok, msg in sanity if not ok]
    if failed:
        return InteractionResult(name, description, False, "identical, but the program did not exercise what it should (on PyBoy): " + "; ".join(failed), frames, frames, None, time.perf_counter() - t0)
    return InteractionResult(name, description, True, f"identical for {frames} frames; " + "; ".join(msg for _, msg in sanity), frames, frames, None, time.perf_counter() - t0)


# ---------------------------------------------------------------- the checks


def check_joypad(frames: int = 120, before_frame=None) -> InteractionResult:
    """Button presses reach P1 (both select groups) and the program copies them into WRAM."""
    t0 = time.perf_counter()
    a = _Asm(0x150).label("loop")
    a.ld_a(0x10).ldh_to(0x00).ldh_from(0x00).st(0xC000)  # select action buttons, read P1
    a.ld_a(0x20).ldh_to(0x00).ldh_from(0x00).st(0xC001)  # select directions, read P1
    a.ld_hl(0xC002)(0x34)  # INC (C002): loop counter
    a.jr(0x18, "loop")
    rom = build_rom(a.bytes())
    b = BOOT_FRAMES
    events = {
        b + 5: [("press", "a")],
        b + 10: [("release", "a"), ("press", "down")],
        b + 15: [("press", "start")],
        b + 20: [("release", "down")],
        b + 25: [("release", "start"), ("press", "left"), ("press", "select")],
        b + 35: [("release", "left"), ("release", "select")],
    }
    frames = max(frames, b + 40)
    run = run_pair(rom, frames, events, before_frame=before_frame)
    sanity = []
    if run.divergence is None:
        sanity = [
            (_w(run, 0xC000, b + 7) & 0x01 == 0, "A seen as pressed in P1 (action group)"),
            (_w(run, 0xC001, b + 12) & 0x08 == 0, "DOWN seen as pressed in P1 (direction group)"),
            (_w(run, 0xC000, b + 17) & 0x08 == 0, "START seen as pressed"),
            (_w(run, 0xC000, frames) & 0x0F == 0x0F and _w(run, 0xC001, frames) & 0x0F == 0x0F, "all released at the end"),
        ]
    return _result("joypad", "button press -> P1 -> game RAM", frames, run, sanity, t0)


def check_mbc1_banking(frames: int = 80, before_frame=None) -> InteractionResult:
    """MBC1: every ROM bank (0 -> 1 included) and every RAM bank reached, RAM disable reads 0xFF."""
    t0 = time.perf_counter()
    a = _Asm(0x150)
    a.ld_a(0x0A).st(0x0000)  # enable RAM
    a.ld_a(0x01).st(0x6000)  # banking mode 1 (4000-5FFF selects the RAM bank)
    for n in range(8):  # ROM bank n (0 selects 1) -> C000+n
        a.ld_a(n).st(0x2000).ld(0x4000).st(0xC000 + n)
    for r in range(4):  # write two marks into every RAM bank
        a.ld_a(r).st(0x4000).ld_a(0xA0 + r).st(0xA000).ld_a(0xB0 + r).st(0xBFFF)
    for r in range(4):  # read them back -> C010+r
        a.ld_a(r).st(0x4000).ld(0xA000).st(0xC010 + r)
    a.ld_a(0x00).st(0x0000).ld(0xA000).st(0xC020)  # RAM disabled reads 0xFF
    a.ld_a(0x00).st(0x6000)  # back to mode 0
    a.label("end").jr(0x18, "end")
    # MBC1+RAM+BATTERY, 8 ROM banks, 4 RAM banks (32 KiB)
    rom = build_rom(a.bytes(), cart_type=0x03, rom_banks=8, ram_code=0x03, bank_marks=True)
    frames = max(frames, BOOT_FRAMES + 10)
    run = run_pair(rom, frames, before_frame=before_frame)
    sanity = []
    if run.divergence is None:
        got_rom = [_w(run, 0xC000 + n) for n in range(8)]
        got_ram = [_w(run, 0xC010 + r) for r in range(4)]
        cart = run.final_ref.cart_ram
        sanity = [
            (got_rom == [0x11] + [0x10 + n for n in range(1, 8)], f"ROM banks read {[hex(v) for v in got_rom]}"),
            (got_ram == [0xA0 + r for r in range(4)], f"RAM banks read {[hex(v) for v in got_ram]}"),
            (all(cart[r * 0x2000] == 0xA0 + r and cart[r * 0x2000 + 0x1FFF] == 0xB0 + r for r in range(4)), "marks in all 4 RAM banks"),
            (_w(run, 0xC020) == 0xFF, "disabled RAM reads 0xFF"),
        ]
    return _result("mbc1_banking", "bank switch reaching ROM and RAM banks (MBC1)", frames, run, sanity, t0)


def check_interrupts(frames: int = 110, before_frame=None) -> InteractionResult:
    """STAT (HBlank + LYC, with STAT blocking), timer (period = 2 lines, so it meets LCD events on
    the same cycles), VBlank and joypad interrupts; each routine counts and records DIV/LY/TIMA."""
    t0 = time.perf_counter()
    routines = {
        0x0200: _handler(0xC040, [(0x04, 0xC041), (0x44, 0xC042), (0x05, 0xC043)]),  # VBlank
        0x0240: _handler(0xC020, [(0x04, 0xC021), (0x44, 0xC022), (0x05, 0xC023), (0x41, 0xC024)]),  # STAT
        0x0280: _handler(0xC030, [(0x04, 0xC031), (0x44, 0xC032), (0x41, 0xC033)]),  # timer
        0x02C0: _handler(0xC010, [(0x04, 0xC011), (0x44, 0xC012), (0x00, 0xC013)]),  # joypad
    }
    vectors = {0x40: 0x0200, 0x48: 0x0240, 0x50: 0x0280, 0x60: 0x02C0}
    blocks = dict(routines)
    for vec, target in vectors.items():
        blocks[vec] = _Asm(vec).jp(target).bytes()
    a = _Asm(0x150)
    a(0xF3)  # DI
    a.ld_a(0x48).ldh_to(0x41)  # STAT: LYC=LY and mode-0 (HBlank) interrupt sources
    a.ld_a(0x30).ldh_to(0x45)  # LYC = 48
    a.ld_a(0xC7).ldh_to(0x06)  # TMA: 57 ticks of 16 cycles = 912 cycles = two lines
    a.ld_a(0x05).ldh_to(0x07)  # TAC: on, 262144 Hz
    a(0xAF).ldh_to(0x00)  # XOR A; P1: select both groups (joypad interrupt on any press)
    a.ld_a(0x17).ldh_to(0xFF)  # IE: VBlank | STAT | timer | joypad
    a(0xAF).ldh_to(0x0F)  # clear IF
    a(0xFB)  # EI
    a.label("loop")(0x76)(0x00)  # HALT; NOP
    a.ld_hl(0xC050)(0x34)  # count wake-ups
    a.jr(0x18, "loop")
    rom = build_rom(a.bytes(), blocks=blocks)
    b = BOOT_FRAMES
    events = {b + 15: [("press", "a")], b + 18: [("release", "a")], b + 25: [("press", "right")], b + 30: [("release", "right")]}
    frames = max(frames, b + 35)
    run = run_pair(rom, frames, events, before_frame=before_frame)
    sanity = []
    if run.divergence is None:
        sanity = [
            (_w(run, 0xC040) > 0, f"VBlank interrupts: {_w(run, 0xC040)} (mod 256)"),
            (_w(run, 0xC020) > 0, f"STAT interrupts: {_w(run, 0xC020)} (mod 256)"),
            (_w(run, 0xC030) > 0, f"timer interrupts: {_w(run, 0xC030)} (mod 256)"),
            (_w(run, 0xC010) > 0, f"joypad interrupts: {_w(run, 0xC010)}"),
        ]
    return _result("interrupts", "STAT/LYC, timer, VBlank and joypad interrupts on the same cycles", frames, run, sanity, t0)


def check_oam_dma(frames: int = 90, before_frame=None) -> InteractionResult:
    """OAM DMA from WRAM and from ROM, started from an HRAM routine in VBlank and mid-frame."""
    t0 = time.perf_counter()
    table = bytes((i * 3) & 0xFF for i in range(0xA0))
    routine = bytes([0x3E, 0xC1, 0xE0, 0x46, 0x3E, 0x28, 0x3D, 0x20, 0xFD, 0xC9])  # LD A,C1; LDH (46),A; wait 40 loops; RET
    a = _Asm(0x150)
    a.ld_hl(0xC100)(0x06, 0xA0)  # LD HL,C100; LD B,A0
    a.label("fill")(0x7D)(0xEE, 0x5A)(0x22)(0x05).jr(0x20, "fill")  # LD A,L; XOR 5A; LD (HL+),A; DEC B; JR NZ
    for i, byte in enumerate(routine):
        a.ld_a(byte).ldh_to(0x80 + i)
    a.label("w1").ldh_from(0x44)(0xFE, 0x90).jr(0x20, "w1")  # wait for LY == 144
    a.call(0xFF80)
    a.ld(0xFE05).st(0xC300).ld(0xFE9F).st(0xC301)
    a.ld_a(0x04).ldh_to(0x81)  # next DMA source: ROM 0x0400
    a.label("w2").ldh_from(0x44)(0xFE, 0x91).jr(0x20, "w2")
    a.call(0xFF80)
    a.ld(0xFE05).st(0xC302)
    a.ld_a(0xC1).ldh_to(0x81)  # DMA from WRAM again, mid-frame
    a.label("w3").ldh_from(0x44)(0xFE, 0x20).jr(0x20, "w3")
    a.call(0xFF80)
    a.ld_a(0xAA).st(0xC303)
    a.label("end").jr(0x18, "end")
    rom = build_rom(a.bytes(), blocks={0x0400: table})
    frames = max(frames, BOOT_FRAMES + 10)
    run = run_pair(rom, frames, before_frame=before_frame)
    sanity = []
    if run.divergence is None:
        oam = run.final_ref.regions["OAM"]
        sanity = [
            (_w(run, 0xC300) == 0x05 ^ 0x5A and _w(run, 0xC301) == 0x9F ^ 0x5A, "DMA from WRAM reached OAM"),
            (_w(run, 0xC302) == 15, "DMA from ROM reached OAM"),
            (_w(run, 0xC303) == 0xAA and oam == bytes((i ^ 0x5A) & 0xFF for i in range(0xA0)), "mid-frame DMA completed"),
        ]
    return _result("oam_dma", "OAM DMA copy (from WRAM and ROM, in VBlank and mid-frame)", frames, run, sanity, t0)


CHECKS: dict[str, Callable[..., InteractionResult]] = {
    "joypad": check_joypad,
    "mbc1_banking": check_mbc1_banking,
    "interrupts": check_interrupts,
    "oam_dma": check_oam_dma,
}


def run_all(names: Optional[list[str]] = None, progress: Optional[Callable[[InteractionResult], None]] = None) -> list[InteractionResult]:
    out = []
    for name in names or list(CHECKS):
        try:
            r = CHECKS[name]()
        except Exception as e:  # a crash is a failed check, reported with its reason
            r = InteractionResult(name, CHECKS[name].__doc__.strip().splitlines()[0] if CHECKS[name].__doc__ else name, False, f"error: {type(e).__name__}: {e}", 0, 0)
        out.append(r)
        if progress:
            progress(r)
    return out
