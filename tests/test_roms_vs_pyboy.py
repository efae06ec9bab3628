"""L2/L3: our test ROMs and games on emurust and PyBoy 2.8.1, compared at every frame boundary.

Compared each frame: CPU cycles since power-on, registers, WRAM, VRAM, OAM, I/O registers,
HRAM, IE, cartridge RAM, the screen, and the serial output so far.
"""

import pytest

from conftest import LONG, ROOT
from emurust.verify.rollout import rollout

TEST_ROMS = sorted(p for p in (ROOT / "roms").glob("*.gb"))
GAMES = sorted(p for p in (ROOT / "games").glob("*.gb"))


def test_corpus_present():
    names = {p.stem for p in TEST_ROMS}
    assert {"cpu_instrs", "timer", "interrupts_halt", "dma", "serial", "lcd_timing", "mbc1", "mbc2", "mbc3", "mbc5", "bench", "music"} <= names
    assert {p.stem for p in GAMES} == {"dodge", "snake", "runner"}


@pytest.mark.parametrize("rom", TEST_ROMS, ids=lambda p: p.stem)
def test_test_rom_identical_to_pyboy(rom):
    frames = 10_000 if LONG else 600
    r = rollout(str(rom), frames, render_every=1 if not LONG else 3, state_every=1 if not LONG else 20)
    assert r.divergence is None, str(r.divergence)
    assert r.frames_identical == frames
    if rom.stem != "bench":
        assert r.serial_emurust.rstrip().endswith(b"PASSED"), r.serial_emurust[-200:]


@pytest.mark.parametrize("rom", GAMES, ids=lambda p: p.stem)
@pytest.mark.parametrize("seed", [1, 2])
def test_game_identical_to_pyboy_with_random_buttons(rom, seed):
    frames = 10_000 if LONG else 1500
    r = rollout(str(rom), frames, seed=seed, render_every=1 if not LONG else 3, state_every=1 if not LONG else 20)
    assert r.divergence is None, str(r.divergence)
    assert r.frames_identical == frames


def test_a_divergence_is_caught_and_reported():
    rom = str(ROOT / "roms" / "timer.gb")

    def corrupt(gb, frame):
        if frame == 90:
            gb.write(0xC123, gb.read(0xC123) ^ 0x5A)

    r = rollout(rom, 120, before_frame=corrupt)
    d = r.divergence
    assert d is not None and d.frame == 90
    assert d.component == "WRAM" and d.where == "0xc123"
    assert d.emurust == d.pyboy ^ 0x5A
    assert len(d.trace) == 32
    assert "frame 90: WRAM 0xc123" in str(d)


@pytest.mark.parametrize("rom", GAMES, ids=lambda p: p.stem)
def test_random_patterns_of_drawn_and_skipped_frames(rom):
    """tick(n, render) in random batches: PyBoy carries renderer state across skipped frames."""
    r = rollout(str(rom), 800, seed=7, tick_pattern_seed=11)
    assert r.divergence is None, str(r.divergence)
