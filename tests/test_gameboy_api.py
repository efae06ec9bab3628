"""The one-emulator Python API: construction errors, memory, input, states, post-boot start."""

import hashlib

import numpy as np
import pytest

import emurust
from conftest import ROOT, make_rom
from emurust.verify.rollout import rollout

TIMER = ROOT / "roms" / "timer.gb"
DODGE = ROOT / "games" / "dodge.gb"


# ---------------------------------------------------------------- bad input


@pytest.mark.parametrize(
    "rom, words",
    [
        (b"", "empty"),
        (make_rom()[:0x100], "too small"),
        (make_rom(rom_banks=4)[: 0x4000 * 3 - 1], "not a multiple of the 16 KiB"),
        (make_rom(cart_type=0xFC), "not supported"),
        (make_rom(cart_type=0x22), "not supported"),
        (make_rom(ram_code=0x06), "RAM size code 0x06"),
    ],
    ids=["empty", "no-header", "not-whole-banks", "camera", "mbc7", "ram-size-code"],
)
def test_bad_roms_raise_rom_error(rom, words):
    with pytest.raises(emurust.RomError) as e:
        emurust.GameBoy(rom)
    assert words.lower() in str(e.value).lower()


def test_file_size_not_the_header_size_decides():
    # As in PyBoy 2.8.1: truncated, over-sized and single-bank files load; banks come from the file.
    for rom in (make_rom(rom_banks=4)[: 0x4000 * 3], make_rom(rom_banks=2) + bytes(0x8000), make_rom()[:0x4000]):
        gb = emurust.GameBoy(rom)
        gb.tick(2)


def test_bad_header_checksum():
    rom = bytearray(make_rom())
    rom[0x14D] ^= 0xFF
    with pytest.raises(emurust.RomError, match="checksum"):
        emurust.GameBoy(bytes(rom))


def test_missing_file_and_bad_types():
    with pytest.raises(FileNotFoundError):
        emurust.GameBoy("/nonexistent/rom.gb")
    with pytest.raises(ValueError):
        emurust.GameBoy(12345)


def test_boot_rom_of_wrong_size():
    with pytest.raises(emurust.RomError, match="256 bytes"):
        emurust.GameBoy(make_rom(), boot_rom=b"\x00" * 100)


def test_argument_errors():
    gb = emurust.GameBoy(make_rom())
    with pytest.raises(ValueError):
        gb.tick(-1)
    with pytest.raises(ValueError):
        gb.read(0x10000)
    with pytest.raises(ValueError):
        gb.write(0xC000, 256)
    with pytest.raises(ValueError):
        gb.button_press("turbo")
    with pytest.raises(ValueError):
        gb.set_register("x", 1)
    with pytest.raises(ValueError):
        gb.read_rom_bank(99, 0)


# ---------------------------------------------------------------- basics


def test_memory_registers_and_serial():
    gb = emurust.GameBoy(TIMER)
    assert gb.title
    gb.tick(300, render=False)
    assert gb.serial_output().rstrip().endswith(b"PASSED")
    assert gb.read(0xC000) == ord("P")
    gb.write(0xC100, 0xAB)
    assert gb.read(0xC100) == 0xAB and gb.read(0xE100) == 0xAB  # echo RAM
    assert gb.read(0xC100, 2)[0] == 0xAB
    gb.set_register("hl", 0x1234)
    r = gb.registers()
    assert (r["h"], r["l"], r["hl"]) == (0x12, 0x34, 0x1234)
    assert gb.read_rom_bank(0, 0x147) == gb.read(0x147)
    assert gb.frame_count == 300 and gb.cycles > 300 * 70000


def test_screen_arrays():
    gb = emurust.GameBoy(DODGE)
    gb.tick(30)
    rgba, shades = gb.screen_rgba(), gb.screen_shades()
    assert rgba.shape == (144, 160, 4) and rgba.dtype == np.uint8
    assert shades.shape == (144, 160) and set(np.unique(shades)) <= {0, 1, 2, 3}
    assert (rgba[..., 3] == 255).all()


# ---------------------------------------------------------------- states


def _digest(gb):
    return hashlib.sha256(gb.save_state()).hexdigest()


def test_save_load_continues_identically():
    a = emurust.GameBoy(DODGE)
    a.tick(100)
    a.button_press("start")
    a.tick(5)
    state = a.save_state()
    b = emurust.GameBoy(DODGE)
    b.load_state(state)
    for gb in (a, b):
        gb.button_press("left")
        gb.tick(50)
        gb.button_release("left")
        gb.tick(200)
    assert a.save_state() == b.save_state()
    assert np.array_equal(a.screen_rgba(), b.screen_rgba())


def test_deterministic_runs():
    digests = set()
    for _ in range(2):
        gb = emurust.GameBoy(DODGE)
        gb.tick(90)
        gb.button_press("start")
        gb.tick(300)
        digests.add(_digest(gb))
    assert len(digests) == 1


@pytest.mark.parametrize("damage", ["truncate", "magic", "flip"])
def test_corrupt_state_raises_and_changes_nothing(damage):
    gb = emurust.GameBoy(DODGE)
    gb.tick(60)
    good = gb.save_state()
    gb.tick(10)
    before = gb.save_state()
    bad = bytearray(good)
    if damage == "truncate":
        bad = bad[: len(bad) // 2]
    elif damage == "magic":
        bad[0] ^= 1
    else:
        bad[-1000:] = b"\xff" * 1000  # cartridge section garbage / trailing mismatch
        bad += b"\x00"
    with pytest.raises(emurust.StateError):
        gb.load_state(bytes(bad))
    assert gb.save_state() == before


def test_state_of_another_rom_is_refused():
    a = emurust.GameBoy(DODGE)
    b = emurust.GameBoy(TIMER)
    with pytest.raises(emurust.StateError, match="different ROM"):
        b.load_state(a.save_state())


def test_banked_reads():
    gb = emurust.GameBoy(ROOT / "roms" / "mbc1.gb")
    for bank in (1, 5, 63):
        assert gb.read_banked(bank, 0x4000) == gb.read_rom_bank(bank, 0x4000)
    gb.set_cartridge_ram(bytes(range(256)) * (len(gb.cartridge_ram()) // 256))
    assert gb.read_banked(2, 0xA001) == 1
    with pytest.raises(ValueError, match="does not exist"):
        gb.read_banked(99, 0xA000)
    with pytest.raises(ValueError, match="banked reads"):
        gb.read_banked(0, 0xE000)
    # VRAM and work RAM as PyBoy's memory[bank, addr]: bank 0 only on the DMG.
    gb.write(0xC123, 0x5A)
    assert gb.read_banked(0, 0xC123) == 0x5A
    assert gb.read_banked(0, 0x8000) == gb.read(0x8000)
    with pytest.raises(ValueError, match="does not exist"):
        gb.read_banked(1, 0x8000)
    with pytest.raises(ValueError, match="does not exist"):
        gb.read_banked(1, 0xD000)


def test_cartridge_ram_round_trip():
    gb = emurust.GameBoy(ROOT / "games" / "snake.gb")
    ram = gb.cartridge_ram()
    assert len(ram) == 0x2000
    gb.set_cartridge_ram(b"\x5a" * len(ram))
    assert gb.cartridge_ram() == b"\x5a" * len(ram)
    with pytest.raises(ValueError, match="bytes of RAM"):
        gb.set_cartridge_ram(b"\x00" * 10)
    save = gb.battery_save()
    assert save is not None and len(save) == len(ram)
    gb.load_battery_save(save)


# ---------------------------------------------------------------- power-on without boot ROM


def test_postboot_equals_running_pyboys_boot_rom():
    """The post-boot state is what PyBoy's boot ROM leaves (VRAM and picture aside)."""
    boot = emurust.pyboy_boot_rom()
    a = emurust.GameBoy(TIMER)
    b = emurust.GameBoy(TIMER, boot_rom=boot)
    assert b._run_until_boot_rom_unmapped(200)
    assert a.registers() == b.registers()
    assert a.cycles == b.cycles
    for lo, n in [(0xC000, 0x2000), (0xFE00, 0xA0), (0xFF00, 0x80), (0xFF80, 0x80)]:
        assert a.read(lo, n) == b.read(lo, n), hex(lo)
    a.tick(200)
    b.tick(200)
    assert a.read(0xC000, 0x2000) == b.read(0xC000, 0x2000) and a.registers() == b.registers()


@pytest.mark.parametrize("rom", [TIMER, DODGE], ids=lambda p: p.stem)
def test_postboot_matches_pyboy_after_its_boot(rom):
    r = rollout(str(rom), 400, seed=5, boot_rom=False)
    assert r.divergence is None, str(r.divergence)


def test_zero_copy_screen_views():
    gb = emurust.GameBoy(DODGE)
    screen, grey, shade = gb.screen, gb.screen_grey, gb.screen_shade
    assert screen.shape == (144, 160, 4) and not screen.flags.owndata and not screen.flags.writeable
    assert grey.shape == (144, 160) and shade.shape == (144, 160)
    gb.tick(40)
    assert np.array_equal(screen, gb.screen_rgba())  # the old view sees the new frame
    assert np.array_equal(grey, screen[..., 0]) and np.array_equal(shade, gb.screen_shades())
    state = gb.save_state()
    kept = screen.copy()
    gb.tick(30)
    gb.load_state(state)
    assert np.array_equal(screen, kept)  # still valid and restored after a state load
    with pytest.raises(ValueError):
        screen[0, 0, 0] = 1
    del gb
    assert screen.sum() > 0  # the view keeps the emulator alive
