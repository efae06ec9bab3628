"""The sound unit as programs see it, against PyBoy 2.8.1, in both of PyBoy's sound modes.

- Our ROMs and games compared with PyBoy frame by frame with sound not emulated
  (``PyBoy(sound_emulated=False)``) and at other sample rates (the rate decides where the
  APU's catch-ups end, which PyBoy lets decide when CH3's wave RAM is reachable).
- ``roms/music.gb``: a sound driver as games have them (see roms/src/music.s), whose WRAM log
  of what it reads back makes any difference in the sound unit a memory difference; here it
  is also checked to actually exercise what it is for.
- Real programs (``/work/shared/data/roms-dev`` or ``$EMURUST_TEST_ROMS``): Shock Lobster
  (DMG, music) and SameSuite's APU tests, compared with PyBoy in DMG mode (the SameSuite ROMs
  set the CGB flag; emurust is a DMG). ``EMURUST_LONG=1`` runs them longer, with more seeds.
"""

from __future__ import annotations

import glob
import os

import numpy as np
import pytest

import emurust
from conftest import LONG, ROOT, STATE_EVERY, corpus_dir, corpus_path, require_corpus
from emurust.verify.compare import make_pyboy
from emurust.verify.rollout import BOOT_FRAMES, rollout

ROMS_DEV = str(corpus_dir())
MUSIC = str(ROOT / "roms" / "music.gb")

#: (sound_emulated, sound_sample_rate) besides PyBoy's default (True, 48000).
MODES = [(False, None), (True, 44100), (True, 22050)]


def mode_id(m):
    return ("on" if m[0] else "off") + f"-{m[1] or 48000}"


def sound_kwargs(mode):
    return dict(sound_emulated=mode[0], sound_sample_rate=mode[1])


def roms_dev(*parts) -> str:
    return corpus_path(*parts)


# ---------------------------------------------------------------- our ROMs, other sound modes


@pytest.mark.parametrize("mode", MODES, ids=mode_id)
@pytest.mark.parametrize("rom", ["roms/music.gb", "roms/timer.gb", "roms/lcd_timing.gb", "roms/vram_race.gb", "roms/apu_power.gb"])
def test_rom_in_other_sound_modes(rom, mode):
    frames = 3000 if LONG else 600
    r = rollout(str(ROOT / rom), frames, state_every=STATE_EVERY if not LONG else 20, **sound_kwargs(mode))
    assert r.divergence is None, str(r.divergence)
    assert r.frames_identical == frames
    serial = r.serial_emurust.rstrip()
    if rom == "roms/music.gb" and not mode[0]:
        # Without a sound unit NR52 reads 0: the ROM's first check fails, in PyBoy as here.
        assert serial.endswith(b"got 00\nFAILED 1"), serial[-100:]
    else:
        assert serial.endswith(b"PASSED"), serial[-200:]


@pytest.mark.parametrize("mode", MODES, ids=mode_id)
@pytest.mark.parametrize("game", ["dodge", "runner"])
def test_game_in_other_sound_modes(game, mode):
    frames = 3000 if LONG else 800
    r = rollout(str(ROOT / "games" / f"{game}.gb"), frames, seed=3, state_every=STATE_EVERY if not LONG else 20, **sound_kwargs(mode))
    assert r.divergence is None, str(r.divergence)


@pytest.mark.parametrize("sound", [True, False], ids=["sound-on", "sound-off"])
@pytest.mark.parametrize("cgb", [True, False], ids=["cgb", "dmg"])
def test_wave_ram_while_ch3_plays(cgb, sound):
    """roms/wave_cgb.gb leaves CH3 playing: between frames PyBoy's memory view of FF30-FF3F
    shows the byte CH3 is at on Game Boy Color hardware, 0xFF on a DMG (found on Shock Lobster
    as a Game Boy Color by tools/equiv_campaign.py)."""
    r = rollout(str(ROOT / "roms" / "wave_cgb.gb"), 100, cgb=cgb, state_every=10, sound_emulated=sound)
    assert r.divergence is None, str(r.divergence)
    assert r.serial_emurust.rstrip().endswith(b"PASSED" if sound else b"FAILED 1"), r.serial_emurust[-100:]


@pytest.mark.parametrize("mode", MODES + [(True, None)], ids=mode_id)
def test_postboot_state_in_every_sound_mode(mode):
    """Without a boot ROM emurust starts in its post-boot state, converted to the sound mode;
    PyBoy runs its boot ROM with the same options."""
    r = rollout(MUSIC, 300, boot_rom=False, **sound_kwargs(mode))
    assert r.divergence is None, str(r.divergence)


@pytest.mark.parametrize("mode", MODES + [(True, None)], ids=mode_id)
def test_random_tick_batches_in_every_sound_mode(mode):
    """tick(n) batches sample only their last frame: the catch-up chunks change with it."""
    r = rollout(MUSIC, 500, tick_pattern_seed=4, **sound_kwargs(mode))
    assert r.divergence is None, str(r.divergence)


def test_postboot_equals_running_the_boot_rom_in_every_sound_mode():
    """The post-boot state of each sound mode is what running PyBoy's boot ROM in that mode
    leaves: same registers, memory, sound registers and samples, frame after frame."""
    boot = emurust.pyboy_boot_rom()
    rom = ROOT / "roms" / "timer.gb"
    for mode in MODES + [(True, 8000), (True, 96000)]:
        a = emurust.GameBoy(rom, **sound_kwargs(mode))
        b = emurust.GameBoy(rom, boot_rom=boot, **sound_kwargs(mode))
        assert b._run_until_boot_rom_unmapped(200)
        assert a.cycles == b.cycles and a.registers() == b.registers()
        for frame in range(120):
            for lo, n in [(0xC000, 0x2000), (0xFE00, 0xA0), (0xFF00, 0x80), (0xFF80, 0x80)]:
                assert a.read(lo, n) == b.read(lo, n), (mode, frame, hex(lo))
            if mode[0]:
                assert np.array_equal(a.sound_samples(), b.sound_samples()), (mode, frame)
            a.tick(1, False, sound=frame % 3 != 1)
            b.tick(1, False, sound=frame % 3 != 1)


def test_first_frame_after_postboot_unsampled_has_no_samples():
    """PyBoy's frame in which its boot ROM exits starts before the exit; ticked without sound
    it has no samples at all (emurust finishes that frame: it must drop what it holds)."""
    pb = make_pyboy(MUSIC)
    try:
        pb.tick(BOOT_FRAMES, False)
        pb.tick(1, True, False)
        gb = emurust.GameBoy(MUSIC)
        gb.tick(1, True, False)
        assert gb.sound_samples().shape == pb.sound.ndarray.shape == (0, 2)
        pb.tick(1, True, True)
        gb.tick(1, True, True)
        assert np.array_equal(gb.sound_samples(), pb.sound.ndarray)
    finally:
        pb.stop(save=False)


# ---------------------------------------------------------------- the music ROM exercises the APU

COUNTERS = [
    "wave_reads", "wave_hits", "nr52_changes", "retriggers", "expired", "div_writes",
    "power_cycles", "vbl_runs", "timer_runs", "corrupted_storms", "storms", "log_hits",
]  # fmt: skip


def music_counters(gb) -> dict:
    ram = gb.read(0xC010, 2 * len(COUNTERS))
    return {name: ram[2 * i] | ram[2 * i + 1] << 8 for i, name in enumerate(COUNTERS)}


def test_music_rom_exercises_what_it_is_for():
    """Identical to PyBoy for 700 frames, and in them the driver did what it is there for:
    wave RAM read while CH3 plays, with hits of the fetch window (not 0xFF); CH3 retriggered
    while playing, with DMG wave RAM corruption; lengths and sweeps that switched channels off;
    DIV writes; APU power cycles; both the VBlank and the timer driver."""
    seen = {}

    def keep(gb, frame):
        seen["gb"] = gb

    r = rollout(MUSIC, 700, before_frame=keep, state_every=10)
    assert r.divergence is None, str(r.divergence)
    c = music_counters(seen["gb"])
    assert c["wave_reads"] > 1000 and c["wave_hits"] >= 10, c
    assert c["log_hits"] > 0, c
    assert c["retriggers"] > 20 and c["storms"] >= 5 and c["corrupted_storms"] >= 3, c
    assert c["expired"] > 20 and c["nr52_changes"] > 50, c
    assert c["div_writes"] > 50 and c["power_cycles"] >= 2, c
    assert c["vbl_runs"] >= 100 and c["timer_runs"] >= 100, c
    hits = seen["gb"].read(0xC040, 64)  # the single reads' hits: the bytes CH3 fetched
    assert len(set(hits) - {0}) >= 2, hits.hex()


def test_music_rom_at_another_rate_sees_other_wave_ram_hits():
    """The sample rate is observable by a program (PyBoy's catch-up chunks end at sample
    times): the music ROM's wave RAM hits differ between rates, in PyBoy as in emurust."""
    counts = {}
    for rate in (48000, 22050):
        gb = emurust.GameBoy(MUSIC, sound_sample_rate=rate)
        for _ in range(700):
            gb.tick(1, False)
        counts[rate] = music_counters(gb)["wave_hits"], gb.read(0xC040, 64)
    assert counts[48000] != counts[22050]


# ---------------------------------------------------------------- real programs


@pytest.mark.parametrize("seed", [1, 2] if LONG else [1])
@pytest.mark.parametrize("mode", [(True, None)] + (MODES if LONG else [(False, None)]), ids=mode_id)
def test_shock_lobster(seed, mode):
    frames = 3000 if LONG else 1000
    rom = roms_dev("games", "shock-lobster.gb")
    r = rollout(rom, frames, seed=seed, render_every=1 if not LONG else 3, state_every=STATE_EVERY if not LONG else 20, **sound_kwargs(mode))
    assert r.divergence is None, str(r.divergence)
    assert r.frames_identical == frames


SAMESUITE_APU = sorted(glob.glob(os.path.join(ROMS_DEV, "samesuite", "apu_*.gb")))
#: Without the corpus one stand-in parameter per test, so that each skips with the corpus's reason
#: (an empty parameter list would skip with pytest's own "got empty parameter set").
SAMESUITE_PARAMS = SAMESUITE_APU or [os.path.join(ROMS_DEV, "samesuite", "apu_(corpus missing).gb")]
FIB = (3, 5, 8, 13, 21, 34)


def samesuite_verdict(regs) -> str:
    t = tuple(regs)
    return "pass" if t == FIB else "fail" if t == (0x42,) * 6 else "unfinished"


def test_samesuite_present():
    require_corpus()
    assert len(SAMESUITE_APU) >= 30, f"SameSuite APU ROMs not found under {ROMS_DEV}/samesuite"


@pytest.mark.parametrize("rom", SAMESUITE_PARAMS, ids=lambda p: os.path.basename(p)[4:-3])
def test_samesuite_apu_verdict_as_pyboy_dmg(rom):
    """Each SameSuite APU test ends with the same verdict (registers B-L) in PyBoy (DMG mode)
    and emurust, and both ran identically (compared every frame)."""
    import pyboy

    require_corpus()
    frames = 300
    pb = pyboy.PyBoy(rom, window="null", cgb=False)
    try:
        pb.tick(frames, False)
        rf = pb.register_file
        theirs = samesuite_verdict([rf.B, rf.C, rf.D, rf.E, rf.HL >> 8, rf.HL & 0xFF])
    finally:
        pb.stop(save=False)
    gb = emurust.GameBoy(rom, boot_rom=emurust.pyboy_boot_rom())
    gb.tick(frames, False)
    r = gb.registers()
    ours = samesuite_verdict([r["b"], r["c"], r["d"], r["e"], r["hl"] >> 8, r["hl"] & 0xFF])
    assert ours == theirs != "unfinished"


@pytest.mark.parametrize(
    "rom",
    [p for p in SAMESUITE_PARAMS if LONG or "channel_3" in p or "div_write" in p or not SAMESUITE_APU],
    ids=lambda p: os.path.basename(p)[4:-3],
)
def test_samesuite_apu_rollout(rom):
    require_corpus()
    frames = 3000 if LONG else 400
    for seed in [1, 2] if LONG else [1]:
        # DMG hardware on both sides, whatever the cartridge header asks for (PyBoy's cgb=False).
        r = rollout(rom, frames, seed=seed, render_every=1 if not LONG else 3, state_every=STATE_EVERY if not LONG else 30,
                    cgb=False)
        assert r.divergence is None, str(r.divergence)
