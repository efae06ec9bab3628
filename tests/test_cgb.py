"""Game Boy Color hardware: mode selection as PyBoy 2.8.1 makes it, frame-by-frame identity with
PyBoy on CGB programs (with the boot ROM, from the post-boot state, after save states), and the
grey picture on CGB hardware."""

import io

import numpy as np
import pytest

import emurust
from conftest import LONG, ROOT, STATE_EVERY, corpus_path, make_rom
from emurust.rom_header import with_checksums
from emurust.verify.compare import make_pyboy, pyboy_boot_rom_path
from emurust.verify.rollout import rollout

CGB_ROM = ROOT / "roms" / "cgb.gb"
DMG_GAME = ROOT / "games" / "dodge.gb"


def dev_rom(rel):
    return corpus_path(rel)


def with_flag(flag):
    rom = bytearray(make_rom())
    rom[0x143] = flag
    return with_checksums(rom)


# ---------------------------------------------------------------- mode selection


@pytest.mark.parametrize("flag,cgb", [(0x00, False), (0x80, True), (0xC0, True), (0x40, False)])
def test_header_chooses_the_hardware(flag, cgb):
    gb = emurust.GameBoy(with_flag(flag))
    assert gb.cgb == cgb
    assert gb.cgb_mode == cgb


def test_cgb_argument_overrides_the_header():
    gb = emurust.GameBoy(with_flag(0xC0), cgb=False)
    assert not gb.cgb and not gb.cgb_mode
    gb = emurust.GameBoy(with_flag(0x00), cgb=True)
    assert gb.cgb and not gb.cgb_mode  # a DMG game on CGB hardware


def test_a_user_boot_rom_decides_by_its_size():
    # PyBoy: with a boot ROM file and cgb=None the boot ROM's size picks the hardware.
    dmg_boot = open(pyboy_boot_rom_path(False), "rb").read()
    assert not emurust.GameBoy(with_flag(0xC0), boot_rom=dmg_boot).cgb
    big = bytes(0x900)
    assert emurust.GameBoy(with_flag(0x00), boot_rom=big).cgb
    with pytest.raises(emurust.RomError):
        emurust.GameBoy(with_flag(0x00), boot_rom=big, cgb=False)
    with pytest.raises(emurust.RomError):
        emurust.GameBoy(with_flag(0x00), boot_rom=bytes(0x200))


def test_a_big_cgb_boot_rom_is_mapped_at_0200_08ff():
    boot = bytearray(0x900)
    boot[0x000:0x003] = b"\xc3\x00\x02"  # JP 0x0200
    boot[0x200:0x204] = b"\x3e\x11\xe0\x50"  # LD A,0x11; LDH (0x50),A
    gb = emurust.GameBoy(with_flag(0x80), boot_rom=bytes(boot))
    assert gb.read(0x0201) == 0x11
    gb.tick(1, False)
    assert gb.read(0x0201) == 0x00  # unmapped: the cartridge again
    assert gb.registers()["pc"] >= 0x100


def test_banks_through_the_registers_and_banked_reads():
    gb = emurust.GameBoy(with_flag(0x80))
    gb.write(0xFF70, 3)
    gb.write(0xD010, 0x33)
    gb.write(0xFF70, 0)  # bank 0 selects bank 1
    gb.write(0xD010, 0x11)
    gb.write(0xFF4F, 1)
    gb.write(0x8000, 0x77)
    gb.write(0xFF4F, 0)
    assert gb.read(0xFF70) == 0xF8 and gb.read(0xFF4F) == 0xFE
    assert gb.read(0xD010) == 0x11 and gb.read(0xF010) == 0x11  # echo
    assert gb.read_banked(3, 0xD010) == 0x33 and gb.read_banked(1, 0xD010) == 0x11
    assert gb.wram_banks()[3 * 0x1000 + 0x10] == 0x33
    assert gb.read_banked(1, 0x8000) == 0x77 and gb.read(0x8000) == 0
    assert gb.vram_bank1()[0] == 0x77


# ---------------------------------------------------------------- identity with PyBoy


def test_cgb_test_rom_with_random_buttons():
    frames = 10_000 if LONG else 1200
    r = rollout(str(CGB_ROM), frames, seed=3, state_every=STATE_EVERY)
    assert r.divergence is None, str(r.divergence)
    assert r.frames_identical == frames
    assert r.serial_emurust.rstrip().endswith(b"PASSED"), r.serial_emurust[-200:]


@pytest.mark.parametrize(
    "rel,frames",
    [
        ("acid2/cgb-acid2.gb", 600),
        ("games/libbet.gb", 3000),
        ("samesuite/dma_gbc_dma_cont.gb", 300),
        ("samesuite/dma_hdma_lcd_off.gb", 300),
    ],
)
def test_community_cgb_roms(rel, frames):
    r = rollout(dev_rom(rel), 10_000 if LONG else frames, seed=5, state_every=STATE_EVERY)
    assert r.divergence is None, str(r.divergence)


def test_dmg_game_on_cgb_hardware():
    r = rollout(str(DMG_GAME), 1500, seed=2, cgb=True, state_every=STATE_EVERY)
    assert r.divergence is None, str(r.divergence)


def test_cgb_game_forced_to_dmg():
    r = rollout(str(CGB_ROM), 300, seed=2, cgb=False, state_every=STATE_EVERY)
    assert r.divergence is None, str(r.divergence)


@pytest.mark.parametrize("rom,cgb", [(CGB_ROM, None), (DMG_GAME, True)], ids=["cgb-rom", "dmg-game-on-cgb"])
def test_post_boot_state_matches_pyboy(rom, cgb):
    # Without a boot ROM emurust starts where PyBoy's CGB boot ROM leaves the machine.
    r = rollout(str(rom), 600, seed=4, boot_rom=False, cgb=cgb, state_every=STATE_EVERY)
    assert r.divergence is None, str(r.divergence)


# ---------------------------------------------------------------- save states


def test_save_state_round_trip_in_cgb_mode():
    gb = emurust.GameBoy(str(CGB_ROM))
    for f in range(150):
        if f % 7 == 0:
            gb.button_press("right")
        if f % 11 == 0:
            gb.button_release("right")
        gb.tick(1, True)
    state = gb.save_state()
    gb.tick(90, True)
    after = (gb.screen_rgba().copy(), gb.registers(), bytes(gb.wram_banks()), bytes(gb.vram_bank1()), gb.cycles)
    gb2 = emurust.GameBoy(str(CGB_ROM))
    gb2.load_state(state)
    gb2.tick(90, True)
    again = (gb2.screen_rgba().copy(), gb2.registers(), bytes(gb2.wram_banks()), bytes(gb2.vram_bank1()), gb2.cycles)
    assert np.array_equal(after[0], again[0])
    assert after[1:] == again[1:]


def test_states_do_not_cross_hardware():
    dmg = emurust.GameBoy(str(CGB_ROM), cgb=False)
    cgb = emurust.GameBoy(str(CGB_ROM))
    with pytest.raises(emurust.StateError, match="DMG"):
        cgb.load_state(dmg.save_state())
    with pytest.raises(emurust.StateError, match="Game Boy Color"):
        dmg.load_state(cgb.save_state())


# ---------------------------------------------------------------- picture


def test_colour_screen_and_grey_as_pyboy_users_get_them():
    gb = emurust.GameBoy(str(CGB_ROM), boot_rom=open(pyboy_boot_rom_path(True), "rb").read(), cgb=True)
    pb = make_pyboy(str(CGB_ROM))
    try:
        gb.tick(260, True)
        pb.tick(260, True)
        assert np.array_equal(gb.screen_rgba(), pb.screen.ndarray)
        colours = {tuple(px) for px in gb.screen_rgba().reshape(-1, 4)}
        assert len(colours) > 8  # a colour picture, not greys
        want = np.asarray(pb.screen.image.convert("L"))
        assert np.array_equal(np.asarray(gb.screen_grey), want)
    finally:
        pb.stop(save=False)


def test_batch_observations_on_cgb():
    from PIL import Image

    from emurust import _core

    b = _core.Batch(str(CGB_ROM), 2, obs=["grey", "grey_half", "rgb"], frame_skip=30)
    b.reset()
    for _ in range(6):
        b.step(np.array([0, 1]))
    buf = b.buffers
    for i in range(2):
        rgb = np.ascontiguousarray(buf["rgb"][i])
        grey = np.asarray(Image.fromarray(rgb).convert("L"))
        np.testing.assert_array_equal(buf["grey"][i, 0], grey)
        half = (grey.reshape(72, 2, 80, 2).astype(int).sum(axis=(1, 3)) + 2) // 4
        np.testing.assert_array_equal(buf["grey_half"][i, 0], half)
    assert len(np.unique(buf["grey"][0])) > 4
    # cgb=False runs the same cartridge on DMG hardware: greys from PyBoy's DMG palette only.
    d = _core.Batch(str(CGB_ROM), 1, obs=["grey"], frame_skip=30, cgb=False)
    d.reset()
    d.step(np.array([0]))
    assert set(np.unique(d.buffers["grey"][0])) <= {0, 0x55, 0x99, 0xFF}


# ---------------------------------------------------------------- PyBoy save states


@pytest.mark.parametrize("rom,cgb", [(CGB_ROM, None), (DMG_GAME, True)], ids=["colour-mode", "dmg-mode"])
def test_pyboy_state_from_pyboy_continues_identically(rom, cgb):
    pb = make_pyboy(str(rom), cgb)
    try:
        for f in range(240):
            if f % 13 == 0:
                pb.button_press("left")
            if f % 17 == 0:
                pb.button_release("left")
            pb.tick(1, False)
        buf = io.BytesIO()
        pb.save_state(buf)
    finally:
        pb.stop(save=False)
    r = rollout(str(rom), 300, seed=6, start_state=buf.getvalue(), cgb=cgb, state_every=STATE_EVERY)
    assert r.divergence is None, str(r.divergence)


@pytest.mark.parametrize("rom,cgb", [(CGB_ROM, None), (DMG_GAME, True)], ids=["colour-mode", "dmg-mode"])
def test_pyboy_state_exported_by_emurust_loads_in_pyboy(rom, cgb):
    gb = emurust.GameBoy(str(rom), cgb=cgb)
    gb.tick(200, True)
    exported = bytes(gb.save_pyboy_state())
    pb = make_pyboy(str(rom), cgb)
    try:
        pb.load_state(io.BytesIO(exported))
        again = io.BytesIO()
        pb.save_state(again)
    finally:
        pb.stop(save=False)
    # PyBoy writes back exactly what it loaded, and both continue identically from it.
    assert again.getvalue() == exported
    r = rollout(str(rom), 300, seed=8, start_state=exported, cgb=cgb, state_every=STATE_EVERY)
    assert r.divergence is None, str(r.divergence)
