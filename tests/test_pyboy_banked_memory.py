"""Every banked region of ``PyBoy.memory`` (ROM banks, VRAM 0/1, WRAM banks 0-7, cartridge RAM
banks), written and read through every API form, on PyBoy 2.8.1 and ``emurust.PyBoy``.

Each bank gets its own values before any bank is read back, so a write that lands in the wrong
bank, or a read that shows another bank (issue 28: ``memory[0, 0x8000:...]`` read VRAM bank 1
after a bank-1 write), changes what is recorded. The forms: ``memory[bank, addr]``,
``memory[bank, a:b]``, ``memory[bank, a:b:step]``; writes of an int and of a list to each; and
the unbanked bus view of the same addresses. Out-of-range banks and addresses record the
exception each implementation raises.
"""

from __future__ import annotations

import io

import pytest

from conftest import make_rom
from pyboy_api_harness import assert_same

pytest.importorskip("pyboy")

#: (name, first address, length of one bank's window, banks to fill).
CGB_REGIONS = (
    ("ROM bank 0 window", 0x0000, 0x4000, (0, 1, 2, 7)),
    ("ROM bank N window", 0x4000, 0x4000, (1, 2, 7)),
    ("VRAM", 0x8000, 0x2000, (0, 1)),
    ("cartridge RAM", 0xA000, 0x2000, (0, 1, 2, 3)),
    ("WRAM C000", 0xC000, 0x1000, (0,)),
    ("WRAM D000", 0xD000, 0x1000, (0, 1, 2, 3, 4, 5, 6, 7)),
)

#: Offsets within a bank's window: the start, the middle, the last bytes.
OFFSETS = (0x0000, 0x0010, 0x07F0, 0x0FF0)


def _value(bank: int, form: int, i: int = 0) -> int:
    return (0x11 * (bank + 1) + 0x40 * form + i) & 0xFF


def banked_script(pb_api, rec, rom: bytes, regions, ticks_before: int = 120, cgb=None):
    c = rec.call
    pyboy = pb_api.PyBoy(io.BytesIO(rom), window="null", cgb=cgb)
    pyboy.tick(ticks_before, False)
    mem = pyboy.memory
    for name, base, size, banks in regions:
        for bank in banks:
            for off in (o for o in OFFSETS if o + 0x30 <= size):
                a = base + off
                c(f"{name} [{bank},{a:#x}]=int", lambda: mem.__setitem__((bank, a), _value(bank, 0)))
                c(f"{name} [{bank},a+1:a+9]=list", lambda: mem.__setitem__((bank, slice(a + 1, a + 9)), [_value(bank, 1, i) for i in range(8)]))
                c(f"{name} [{bank},a+9:a+16]=int", lambda: mem.__setitem__((bank, slice(a + 9, a + 16)), _value(bank, 2)))
                c(f"{name} [{bank},a+16:a+32:2]=list", lambda: mem.__setitem__((bank, slice(a + 16, a + 32, 2)), [_value(bank, 3, i) for i in range(8)]))
                c(f"{name} [{bank},a+17:a+33:4]=int", lambda: mem.__setitem__((bank, slice(a + 17, a + 33, 4)), _value(bank, 3, 7)))
        # Read back only after every bank of the region was written.
        for bank in banks:
            for off in (o for o in OFFSETS if o + 0x30 <= size):
                a = base + off
                c(f"{name} read [{bank},{a:#x}]", lambda: mem[bank, a])
                c(f"{name} read [{bank},a:a+48]", lambda: mem[bank, a : a + 48])
                c(f"{name} read [{bank},a:a+48:3]", lambda: mem[bank, a : a + 48 : 3])
                c(f"{name} read [{bank},a+1:a+41:2]", lambda: mem[bank, a + 1 : a + 41 : 2])  # PyBoy crashes on a step that does not divide the range
            c(f"{name} read [{bank}] whole window, sum", lambda: sum(mem[bank, base : base + size]))
        c(f"{name} bus view", lambda: mem[base : base + 48])
    # The machine runs on with what was written (the program only loops).
    pyboy.tick(2, False)
    for name, base, size, banks in regions:
        for bank in banks:
            c(f"{name} after ticks [{bank},a:a+48]", lambda: mem[bank, base : base + 48])
    pyboy.stop(save=False)


def edges_script(pb_api, rec, rom: bytes):
    """Banks and addresses at and past each region's end, reads and writes, single and sliced."""
    c = rec.call
    pyboy = pb_api.PyBoy(io.BytesIO(rom), window="null")
    pyboy.tick(120, False)
    mem = pyboy.memory
    # ROM bank = bank count and past: PyBoy reads past its bank array (docs/pyboy_api.md); not compared.
    for base, size, banks in ((0x4000, 0x4000, (6, 7)), (0x8000, 0x2000, (1, 2)), (0xA000, 0x2000, (3, 4, 15, 16)), (0xD000, 0x1000, (7, 8))):
        for bank in banks:  # not -1: PyBoy writes outside its buffers there (heap corruption)
            end = base + size
            c(f"read [{bank},{end - 1:#x}]", lambda: mem[bank, end - 1])
            c(f"read [{bank},{end - 4:#x}:{end:#x}]", lambda: mem[bank, end - 4 : end])
            c(f"read [{bank},{end - 4:#x}:{end + 1:#x}]", lambda: mem[bank, end - 4 : end + 1])
            c(f"write [{bank},{end - 1:#x}]", lambda: mem.__setitem__((bank, end - 1), 0x5A))
            c(f"write [{bank},{end - 4:#x}:{end:#x}]", lambda: mem.__setitem__((bank, slice(end - 4, end)), [1, 2, 3, 4]))
            c(f"write [{bank},{end - 4:#x}:{end + 1:#x}]", lambda: mem.__setitem__((bank, slice(end - 4, end + 1)), 9))
            c(f"read back [{bank},{end - 4:#x}:{end:#x}]", lambda: mem[bank, end - 4 : end])
    c("wrong list length", lambda: mem.__setitem__((1, slice(0x8000, 0x8004)), [1, 2, 3]))
    pyboy.stop(save=False)


def _cgb_rom() -> bytes:
    # MBC5 + RAM + battery, 8 ROM banks, 4 RAM banks (32 KiB), CGB flag 0x80 (header byte 0x143).
    return make_rom(cart_type=0x1B, rom_banks=8, ram_code=0x03, title=b"BANKTEST".ljust(15, b"\0") + b"\x80")


def _dmg_rom() -> bytes:
    return make_rom(cart_type=0x1B, rom_banks=8, ram_code=0x03, title=b"BANKTEST")


def test_every_banked_region_every_form_cgb():
    assert_same(banked_script, _cgb_rom(), CGB_REGIONS)


def test_every_banked_region_every_form_dmg():
    # On a DMG only bank 0 of VRAM and WRAM exists: PyBoy's exceptions for the others.
    assert_same(banked_script, _dmg_rom(), CGB_REGIONS)


def test_every_banked_region_every_form_dmg_cartridge_on_cgb():
    # A DMG cartridge on Game Boy Color hardware (compatibility mode, SVBK fixed at bank 1): the
    # API still reaches every work RAM and VRAM bank.
    assert_same(banked_script, _dmg_rom(), CGB_REGIONS, cgb=True)


def test_banked_edges_cgb():
    assert_same(edges_script, _cgb_rom())


def test_banked_edges_dmg():
    assert_same(edges_script, _dmg_rom())


def test_vram_bank0_unchanged_by_bank1_write():
    """Issue 28's case, as PyBoy's test_memoryview states it, on emurust alone."""
    import emurust

    pyboy = emurust.PyBoy(io.BytesIO(_cgb_rom()), window="null")
    pyboy.tick(120, False)
    pyboy.memory[0, 0x8000:0x8010] = [1] * 16
    pyboy.memory[1, 0x8000:0x8010] = [2] * 16
    assert pyboy.memory[0, 0x8000:0x8010] == [1] * 16
    assert pyboy.memory[1, 0x8000:0x8010] == [2] * 16
