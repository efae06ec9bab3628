"""L2/L3: our test ROMs and games on emurust and PyBoy 2.8.1, compared at every frame boundary.

Compared each frame: CPU cycles since power-on, registers, WRAM, VRAM, OAM, I/O registers,
HRAM, IE, cartridge RAM, the screen, and the serial output so far.
"""

import pytest

from conftest import LONG, ROOT, STATE_EVERY
from emurust.verify.rollout import rollout

TEST_ROMS = sorted(p for p in (ROOT / "roms").glob("*.gb"))
GAMES = sorted(p for p in (ROOT / "games").glob("*.gb"))


def test_corpus_present():
    names = {p.stem for p in TEST_ROMS}
    assert {"cpu_instrs", "timer", "interrupts_halt", "dma", "serial", "lcd_timing", "mbc1", "mbc2", "mbc3", "mbc5", "bench", "cgb", "music"} <= names
    assert {"lcd_onoff", "io_sweep", "scenes", "halt_wake", "dma_wait", "vram_race", "short_loops"} <= names
    assert {"idle_vblank", "idle_ly", "idle_joypad", "idle_div", "idle_menu"} <= names
    assert {p.stem for p in GAMES} == {"dodge", "snake", "runner"}


@pytest.mark.parametrize("rom", TEST_ROMS, ids=lambda p: p.stem)
def test_test_rom_identical_to_pyboy(rom):
    frames = 10_000 if LONG else 600
    r = rollout(str(rom), frames, render_every=1 if not LONG else 3, state_every=STATE_EVERY if not LONG else 20)
    assert r.divergence is None, str(r.divergence)
    assert r.frames_identical == frames
    if rom.stem != "bench":
        assert r.serial_emurust.rstrip().endswith(b"PASSED"), r.serial_emurust[-200:]


@pytest.mark.parametrize("name,cgb", [("lcd_timing", False), ("timer", False), ("cgb", None), ("short_loops", True)])
def test_cycles_and_stat_every_frame(name, cgb):
    """The rest of the suite checks CPU cycles and STAT every STATE_EVERY frames; here every frame
    (short_loops also on Game Boy Color hardware, where the short-loop fast path runs too)."""
    frames = 300
    r = rollout(str(ROOT / "roms" / f"{name}.gb"), frames, seed=1, state_every=1, cgb=cgb)
    assert r.divergence is None, str(r.divergence)
    assert r.frames_identical == frames


@pytest.mark.parametrize("rom", GAMES, ids=lambda p: p.stem)
@pytest.mark.parametrize("seed", [1, 2])
def test_game_identical_to_pyboy_with_random_buttons(rom, seed):
    frames = 10_000 if LONG else 1500
    r = rollout(str(rom), frames, seed=seed, render_every=1 if not LONG else 3, state_every=STATE_EVERY if not LONG else 20)
    assert r.divergence is None, str(r.divergence)
    assert r.frames_identical == frames


#: Our ROMs that read the joypad while they exercise the LCD and the I/O map, and the joypad
#: busy-wait of the idle-loop fast-forward and the menu waits of the busy-loop one (roms/README.md).
INPUT_ROMS = ["scenes", "io_sweep", "lcd_onoff", "idle_joypad", "idle_menu"]


@pytest.mark.parametrize("name", INPUT_ROMS)
@pytest.mark.parametrize("seed", [1, 2])
def test_lcd_and_io_roms_identical_to_pyboy_with_random_buttons(name, seed):
    frames = 10_000 if LONG else 1500
    r = rollout(str(ROOT / "roms" / f"{name}.gb"), frames, seed=seed, render_every=1 if not LONG else 3, state_every=STATE_EVERY if not LONG else 20)
    assert r.divergence is None, str(r.divergence)
    assert r.frames_identical == frames


def test_stat_read_with_a_pending_mode_override_matches_pyboys_memory_view():
    """lcd_onoff's case J switches the LCD on after writing LYC with the LCD off and then waits three
    VBlanks before reading STAT, so frames end with PyBoy's one-shot STAT override pending. There,
    emurust's side-effect-free read of FF41 must give what PyBoy's ``memory[0xFF41]`` gives (the mode
    bits cleared), and the stored value (save states) must agree on both sides."""
    import emurust
    from emurust.verify.compare import _PYBOY_STAT_OFFSET, make_pyboy, pyboy_boot_rom_path, snapshot_pyboy

    rom = str(ROOT / "roms" / "lcd_onoff.gb")
    gb = emurust.GameBoy(rom, boot_rom=pyboy_boot_rom_path())
    pb = make_pyboy(rom)
    try:
        for frame in range(1, 400):
            gb.tick(1, False)
            pb.tick(1, False)
            stored = gb.save_pyboy_state()[_PYBOY_STAT_OFFSET]
            snapshot_pyboy(pb, False)  # must not consume the override
            if gb.read(0xFF41) != stored:
                break
        else:
            pytest.fail("no frame ended with the STAT override pending")
        assert gb.read(0xFF41) == stored & 0xFC
        state = snapshot_pyboy(pb, False)
        assert state.regions["IO"][0x41] == stored, "PyBoy's stored STAT"
        assert pb.memory[0xFF41] == gb.read(0xFF41), "the first read: mode bits cleared"
        assert pb.memory[0xFF41] == stored, "the override is spent"
    finally:
        pb.stop(save=False)


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
    # The rollout switched the (opt-in) PC trace on: the report names the last instructions.
    assert "last instructions (emurust PC trace, oldest first): " + " ".join(f"{pc:04X}" for pc in d.trace) in str(d)


def test_the_pc_trace_is_opt_in():
    import emurust
    from emurust import _core

    gb = emurust.GameBoy(str(ROOT / "roms" / "timer.gb"))
    host = _core.Host(gb)
    gb.tick(5, False)
    with pytest.raises(ValueError, match="PC trace is off"):
        host.pc_trace()
    host.set_pc_trace(True)
    assert host.pc_trace() == [], "nothing traced yet"
    gb.tick(5, False)
    trace = host.pc_trace()
    assert len(trace) == 32 and all(0x100 <= pc < 0x8000 for pc in trace), [hex(pc) for pc in trace]
    host.set_pc_trace(False)
    with pytest.raises(ValueError):
        host.pc_trace()


@pytest.mark.parametrize("rom", GAMES, ids=lambda p: p.stem)
def test_random_patterns_of_drawn_and_skipped_frames(rom):
    """tick(n, render) in random batches: PyBoy carries renderer state across skipped frames."""
    r = rollout(str(rom), 800, seed=7, tick_pattern_seed=11, state_every=STATE_EVERY)
    assert r.divergence is None, str(r.divergence)
