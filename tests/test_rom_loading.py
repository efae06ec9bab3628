"""ROM loading as PyBoy 2.8.1 loads: the same files refused (with the reason named), the same
files accepted, and the same bytes seen through the banks of every accepted file.

Every case is run on both emulators: refusals are checked to be PyBoy's refusals too, and
accepted ROMs run a bank-switching program through PyBoy's boot ROM, compared every frame
(registers, WRAM, VRAM, OAM, I/O, HRAM, cartridge RAM), after which the whole 0000-7FFF and
A000-BFFF windows are read on both sides and compared.
"""

import os

import pytest

import emurust
from conftest import make_rom
from emurust.rom_header import with_checksums
from emurust.verify.compare import first_divergence, make_pyboy, pyboy_boot_rom_path, snapshot_emurust, snapshot_pyboy
from emurust.verify.interactions import _Asm


def fix_header_checksum(rom) -> bytes:
    return with_checksums(rom)


def patched(rom, **at) -> bytes:
    """`rom` with header bytes replaced (h147=0x0B sets byte 0x147) and its header checksum fixed."""
    rom = bytearray(rom)
    for k, v in at.items():
        rom[int(k[1:], 16)] = v
    return fix_header_checksum(rom)


# ---------------------------------------------------------------- refused by both

BASE = make_rom(cart_type=0x01, rom_banks=4)

REFUSED = {
    # name: (ROM bytes, what PyBoy raises (type name, message part), words in emurust's RomError)
    "empty": (b"", ("PyBoyException", "Empty ROM file"), ["empty"]),
    "header-only-0x150": (BASE[:0x150], ("PyBoyException", "doesn't divide evenly"), ["336 bytes", "not a multiple of the 16 KiB", "too small"]),
    "16KiB+1": (BASE[:0x4001], ("PyBoyException", "doesn't divide evenly"), ["16385 bytes", "not a multiple", "1 trailing bytes"]),
    "48KiB-512": (BASE[: 0xC000 - 512], ("PyBoyException", "doesn't divide evenly"), ["48640 bytes", "not a multiple"]),
    "header-checksum": (bytes(BASE[:0x14D]) + bytes([BASE[0x14D] ^ 1]) + BASE[0x14E:], ("PyBoyException", "checksum mismatch"), ["checksum mismatch", "0x014D"]),
    "ram-code-0x06": (patched(BASE, h149=0x06), ("KeyError", "6"), ["RAM size code 0x06"]),
    "ram-code-0xFF-before-type": (patched(BASE, h149=0xFF, h147=0xFC), ("KeyError", "255"), ["RAM size code 0xFF"]),
    "mbc2-ram-code-0x07": (patched(BASE, h147=0x06, h149=0x07), ("KeyError", "7"), ["RAM size code 0x07"]),
    "type-0x04": (patched(BASE, h147=0x04), ("PyBoyException", "Catridge type invalid: 4"), ["type 0x04", "not supported"]),
    "type-MMM01": (patched(BASE, h147=0x0B), ("PyBoyException", "Catridge type invalid: 11"), ["0x0B MMM01", "not supported"]),
    "type-MBC6": (patched(BASE, h147=0x20), ("PyBoyException", "Catridge type invalid: 32"), ["0x20 MBC6"]),
    "type-MBC7": (patched(BASE, h147=0x22), ("PyBoyException", "Catridge type invalid: 34"), ["0x22 MBC7"]),
    "type-camera": (patched(BASE, h147=0xFC), ("PyBoyException", "Catridge type invalid: 252"), ["POCKET CAMERA"]),
    "type-HuC1": (patched(BASE, h147=0xFF), ("PyBoyException", "Catridge type invalid: 255"), ["HuC1"]),
}


@pytest.mark.parametrize("name", sorted(REFUSED))
def test_refused_where_pyboy_refuses(name, tmp_path):
    rom, (exc_name, exc_text), words = REFUSED[name]
    path = tmp_path / "rom.gb"
    path.write_bytes(rom)
    with pytest.raises(Exception) as pyboy_error:
        pb = make_pyboy(str(path))
        pb.stop(save=False)
    assert type(pyboy_error.value).__name__ == exc_name, repr(pyboy_error.value)
    assert exc_text in str(pyboy_error.value)
    for source in (str(path), rom):
        with pytest.raises(emurust.RomError) as e:
            emurust.GameBoy(source)
        for w in words:
            assert w in str(e.value), str(e.value)
        assert "PyBoy 2.8.1 refuses it too" in str(e.value) or "PyBoy refuses it too" in str(e.value)


# ---------------------------------------------------------------- accepted by both: banking


def marked_rom(cart_type, file_banks, program, rom_code=None, ram_code=0x00, title=b"LOADTEST", cgb_flag=0x00, logo_everywhere=False):
    """A ROM of `file_banks` 16 KiB banks whose bytes name their bank (even offsets: bank & 0xFF,
    odd offsets: bank >> 8 | 0x80), with `program` at 0x150 of every bank (so that it survives
    MBC1's remapping of 0000-3FFF) and the header in bank 0. `rom_code` (0x148) defaults to the
    code of the file's size when there is one."""
    rom = bytearray(0x4000 * file_banks)
    for b in range(file_banks):
        rom[b * 0x4000 : (b + 1) * 0x4000 : 2] = bytes([b & 0xFF]) * 0x2000
        rom[b * 0x4000 + 1 : (b + 1) * 0x4000 : 2] = bytes([(b >> 8) | 0x80]) * 0x2000
        rom[b * 0x4000 + 0x150 : b * 0x4000 + 0x150 + len(program)] = program
    rom[0x100:0x150] = bytes(0x50)
    rom[0x100:0x104] = b"\x00\xc3\x50\x01"
    rom[0x134 : 0x134 + len(title)] = title
    rom[0x143] = cgb_flag
    rom[0x147] = cart_type
    if rom_code is None:
        rom_code = {1: 0x00, 2: 0x00, 4: 1, 8: 2, 16: 3, 32: 4, 64: 5, 128: 6, 256: 7, 512: 8}.get(file_banks, 0x00)
    rom[0x148] = rom_code
    rom[0x149] = ram_code
    if logo_everywhere:  # what PyBoy's MBC1 multicart test looks for
        for b in range(1, file_banks):
            rom[b * 0x4000 + 0x104 : b * 0x4000 + 0x134] = rom[0x104:0x134]
    return fix_header_checksum(rom)


def program(ops) -> bytes:
    """("w", addr, value): LD A,value; LD (addr),A. ("r", addr): LD A,(addr); LD (HL+),A, from
    C100 up. Then JR to itself."""
    a = _Asm(0x150).ld_hl(0xC100)
    for op in ops:
        if op[0] == "w":
            a.ld_a(op[2]).st(op[1])
        else:
            a.ld(op[1])(0x22)
    return a.label("end").jr(0x18, "end").bytes()


def rom_reads():
    return [("r", 0x1000), ("r", 0x1001), ("r", 0x3FFF), ("r", 0x5000), ("r", 0x5001), ("r", 0x7FFE)]


def ops_rom_only(banks):
    # A single-bank file has no bank 1 (PyBoy reads past its ROM buffer there): even values only.
    ops = [("w", 0x2000, 2)] + rom_reads()
    for v in (0, 1, 2, 3, 0xFE, 0xFF, 2) if banks > 1 else (2, 0xFE, 4, 2):
        ops += [("w", 0x2000, v)] + rom_reads()
    ops += [("w", 0xA000, 0x5A), ("r", 0xA000), ("w", 0xBFFF, 0xA5), ("r", 0xBFFF)]
    return ops


def ops_mbc1(banks):
    ops = [("w", 0x2000, 2)] + rom_reads()  # leave bank 1 first (a single-bank file has none)
    for v in (0, 1, 3, 4, 5, 7, 0x1F, 0x20, 0x21, 0x60, 0xFF):
        ops += [("w", 0x2000, v)] + rom_reads()
    for upper in (1, 2, 3, 0):
        ops += [("w", 0x4000, upper), ("w", 0x2000, 1)] + rom_reads()
    ops += [("w", 0x0000, 0x0A), ("w", 0x6000, 1)]
    for upper in (1, 2, 3):
        ops += [("w", 0x4000, upper)] + rom_reads() + [("w", 0xA000, 0x40 + upper), ("w", 0xBFFF, 0x50 + upper), ("r", 0xA000), ("r", 0xBFFF)]
    for upper in (0, 1, 2, 3):
        ops += [("w", 0x4000, upper), ("r", 0xA000), ("r", 0xBFFF)]
    ops += [("w", 0x6000, 0), ("w", 0x4000, 0), ("w", 0x2000, 2), ("r", 0xA000), ("w", 0x0000, 0x1A), ("r", 0xA000), ("w", 0x0000, 0x00), ("r", 0xA000)]
    return ops


def ops_mbc2(banks):
    ops = [("w", 0x2100, 2)] + rom_reads()
    for v in (0, 1, 3, 4, 5, 7, 0x0F, 0x10, 0xFF):
        ops += [("w", 0x2100, v)] + rom_reads()
    ops += [("w", 0x0000, 0x0A), ("w", 0xA000, 0x37), ("w", 0xA1FF, 0x0C), ("r", 0xA000), ("r", 0xA200), ("r", 0xBFFF), ("w", 0x0000, 0x00), ("r", 0xA000)]
    return ops


def ops_mbc3(banks):
    ops = [("w", 0x2000, 2)] + rom_reads()
    for v in (0, 1, 3, 4, 5, 7, 0x7F, 0x80, 0x81, 0xC7, 0xFF):
        ops += [("w", 0x2000, v)] + rom_reads()
    ops += [("w", 0x0000, 0x0A)]
    for b in (0, 1, 2, 3, 4, 5, 7, 8, 0x0C, 0x0D, 0xFF):
        ops += [("w", 0x4000, b), ("w", 0xA000, 0x60 + (b & 0x0F)), ("w", 0xBFFF, 0x70 + (b & 0x0F))]
    for b in (0, 1, 2, 3, 4, 5, 7, 8, 0x0C, 0x0D, 0xFF):
        ops += [("w", 0x4000, b), ("r", 0xA000), ("r", 0xBFFF)]
    ops += [("w", 0x4000, 0), ("w", 0x0000, 0x00), ("r", 0xA000)]
    return ops


def ops_mbc5(banks):
    ops = [("w", 0x2000, 2)] + rom_reads()
    for v in (0, 1, 3, 4, 5, 7, 0x7F, 0x80, 0xC7, 0xFF):
        ops += [("w", 0x2000, v)] + rom_reads()
    for hi, lo in ((1, 0), (1, 1), (1, 0xFF), (0, 2), (3, 4), (0, 0x10)):
        ops += [("w", 0x3000, hi), ("w", 0x2000, lo)] + rom_reads()
    ops += [("w", 0x0000, 0x0A)]
    for b in (0, 1, 2, 3, 4, 7, 8, 0x0F, 0x10, 0xFF):
        ops += [("w", 0x4000, b), ("w", 0xA000, 0x20 + (b & 0x0F)), ("w", 0xBFFF, 0x30 + (b & 0x0F))]
    for b in (0, 1, 2, 3, 4, 7, 8, 0x0F, 0x10, 0xFF):
        ops += [("w", 0x4000, b), ("r", 0xA000), ("r", 0xBFFF)]
    ops += [("w", 0x4000, 0), ("w", 0x0000, 0x1A), ("r", 0xA000)]
    return ops


OPS = {0x00: ops_rom_only, 0x08: ops_rom_only, 0x01: ops_mbc1, 0x03: ops_mbc1, 0x06: ops_mbc2, 0x11: ops_mbc3, 0x13: ops_mbc3, 0x10: ops_mbc3, 0x19: ops_mbc5, 0x1B: ops_mbc5, 0x1E: ops_mbc5}

ACCEPTED = {
    # name: (cart type, file banks, ROM size code or None for the file's, RAM size code, extra)
    "rom-only-1-bank": (0x00, 1, 0x00, 0x00, {}),
    "rom-only-4-banks-header-2": (0x00, 4, 0x00, 0x00, {}),
    "rom+ram-1-bank-unknown-size-code": (0x08, 1, 0x77, 0x02, {}),
    "mbc1-1-bank": (0x01, 1, 0x00, 0x00, {}),
    "mbc1-3-banks-header-4": (0x03, 3, 0x01, 0x03, {}),
    "mbc1-8-banks-header-2": (0x03, 8, 0x00, 0x02, {}),
    "mbc1-5-banks-unknown-code-ram-2KiB": (0x03, 5, 0x99, 0x01, {}),
    "mbc1-48-banks-header-0x52": (0x01, 48, 0x52, 0x00, {}),
    "mbc1-multicart-64-banks": (0x03, 64, 0x05, 0x03, {"logo_everywhere": True}),
    "mbc1-64-banks-header-2MiB": (0x03, 64, 0x06, 0x03, {}),
    "mbc2-3-banks-header-16": (0x06, 3, 0x03, 0x00, {}),
    "mbc2-20-banks-ram-code-5": (0x06, 20, 0x03, 0x05, {}),
    "mbc3-1-bank": (0x11, 1, 0x00, 0x00, {}),
    "mbc3-3-banks-ram-4-banks": (0x13, 3, 0x00, 0x03, {}),
    "mbc3-12-banks-ram-8-banks-mbc30": (0x13, 12, 0x03, 0x05, {}),
    "mbc3-130-banks-header-2MiB-mbc30": (0x13, 130, 0x06, 0x03, {}),
    "mbc3-timer-6-banks-header-0x54": (0x10, 6, 0x54, 0x03, {}),
    "mbc5-3-banks-ram-16-banks": (0x1B, 3, 0x00, 0x04, {}),
    "mbc5-300-banks-header-8MiB": (0x19, 300, 0x08, 0x00, {}),
    "mbc5-rumble-5-banks-ram-1": (0x1E, 5, 0x02, 0x02, {}),
    "mbc5-1-bank": (0x19, 1, 0x00, 0x00, {}),
    "odd-header-bytes": (0x01, 4, None, 0x00, {"title": b"\xe9T\x7f\x00Z\xff", "sgb": 0x03, "licensee": 0x33, "global_checksum": 0x1234}),
}

#: Frames: PyBoy's boot ROM (64 full frames, unmapped during the 65th), then the program.
FRAMES = 68


def run_both(rom: bytes, path, frames=FRAMES, cgb=None):
    """Run `rom` on both from power-on through PyBoy's boot ROM; compare every frame; return
    (gb, pb) still running. Fails at the first divergence."""
    path.write_bytes(rom)
    with open(pyboy_boot_rom_path(), "rb") as f:
        boot = f.read()
    gb = emurust.GameBoy(str(path), boot_rom=boot)
    pb = make_pyboy(str(path), cgb=cgb)
    ram_banks = len(gb.cartridge_ram()) // 0x2000
    for frame in range(1, frames + 1):
        render = frame % 8 == 0 or frame == frames
        gb.tick(1, render)
        pb.tick(1, render)
        d = first_divergence(frame, snapshot_emurust(gb, render, frame == frames), snapshot_pyboy(pb, render, ram_banks, frame == frames))
        if d is not None:
            pb.stop(save=False)
            pytest.fail(f"diverged: {d}")
    return gb, pb


@pytest.mark.parametrize("name", list(ACCEPTED))
def test_accepted_and_banked_like_pyboy(name, tmp_path):
    cart_type, banks, rom_code, ram_code, extra = ACCEPTED[name]
    ops = OPS[cart_type](banks)
    rom = bytearray(marked_rom(cart_type, banks, program(ops), rom_code=rom_code, ram_code=ram_code, title=extra.get("title", b"LOADTEST"), logo_everywhere=extra.get("logo_everywhere", False)))
    if "sgb" in extra:
        rom[0x146], rom[0x14B] = extra["sgb"], extra["licensee"]
        rom[0x14E:0x150] = extra["global_checksum"].to_bytes(2, "big")
        rom = bytearray(fix_header_checksum(rom))
    gb, pb = run_both(bytes(rom), tmp_path / f"{name}.gb")
    try:
        assert gb.title == pb.cartridge_title
        reads = len([op for op in ops if op[0] == "r"])
        mine, ref = gb.read(0xC100, reads), bytes(pb.memory[0xC100 : 0xC100 + reads])
        assert mine == ref  # (compared every frame already; here for the message)
        # The program really switched banks: 5000 showed more than one bank (one on a
        # single-bank file).
        reads_only = [op for op in ops if op[0] == "r"]
        seen = {mine[i] for i, op in enumerate(reads_only) if op == ("r", 0x5000)}
        assert len(seen) >= min(banks, 2), (name, seen)
        # Both whole windows through the final banking.
        assert gb.read(0x0000, 0x8000) == bytes(pb.memory[0x0000:0x8000])
        assert gb.read(0xA000, 0x2000) == bytes(pb.memory[0xA000:0xA000 + 0x1FFF]) + bytes([pb.memory[0xBFFF]])
    finally:
        pb.stop(save=False)


def test_file_size_not_header_size_counts(tmp_path):
    """The bank count is the file's: the same header on files of 3 and 6 banks maps different
    banks for the same register value (7 % 3 = 1, 7 % 6 = 1; 5 % 3 = 2, 5 % 6 = 5)."""
    ops = [("w", 0x2000, 5), ("r", 0x5000)]
    got = {}
    for banks in (3, 6):
        gb, pb = run_both(marked_rom(0x01, banks, program(ops), rom_code=0x01), tmp_path / f"r{banks}.gb")
        got[banks] = (gb.read(0xC100), pb.memory[0xC100])
        pb.stop(save=False)
    assert got == {3: (2, 2), 6: (5, 5)}


def test_cgb_flagged_rom_against_pyboy_as_dmg(tmp_path):
    """A ROM with the CGB flag loads on emurust (DMG) and matches PyBoy(cgb=False)."""
    ops = ops_mbc5(4)
    rom = marked_rom(0x1B, 4, program(ops), ram_code=0x03, cgb_flag=0x80, title=b"CGBTITLE0123456")
    gb, pb = run_both(rom, tmp_path / "cgb.gb", cgb=False)
    try:
        assert gb.title == pb.cartridge_title == "CGBTITLE012345"
        assert gb.read(0x0000, 0x8000) == bytes(pb.memory[0x0000:0x8000])
    finally:
        pb.stop(save=False)


def test_huge_file_loads(tmp_path):
    """No size cap (PyBoy has none): a 16 MiB MBC5 file loads and wraps its 9-bit bank number."""
    rom = marked_rom(0x19, 1024, program([("w", 0x3000, 1), ("w", 0x2000, 0xFF), ("r", 0x5000), ("r", 0x5001)]), rom_code=0x08)
    gb, pb = run_both(rom, tmp_path / "huge.gb")
    try:
        assert gb.read(0xC100, 2) == bytes(pb.memory[0xC100:0xC102]) == bytes([0xFF, 0x81])
    finally:
        pb.stop(save=False)
    assert os.path.getsize(tmp_path / "huge.gb") == 16 << 20
