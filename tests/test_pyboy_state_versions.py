"""Older PyBoy save-state format versions (0 to 28), loaded as PyBoy 2.8.1 loads them.

PyBoy 2.8.1 loads every older version (with a warning); what a version lacks it keeps from the
running instance it loads into. For each ROM and version: PyBoy runs to frame K with random
buttons and saves (version 29); tools/pyboy_state_versions.py rewrites that state in the
version's layout (as PyBoy 2.8.1's loaders read it); a fresh PyBoy and a fresh emurust (PyBoy's
boot ROM, so both are the same machine) each run PRE frames without input, load the old state,
then run FRAMES frames side by side with the same random buttons, compared at every frame
(registers, memory, cartridge RAM, screen, sound) and every 100 frames through the whole PyBoy
state (tests/pyboy_state_helpers.py). PRE is 0 (a state loaded right after creating the
emulator, the usual case) and K (a running emulator); K - 1 for versions 12 and 13.
"""

from __future__ import annotations

import io
import os
import sys
import zlib

import pytest

import pyboy  # noqa: F401  (the reference is a test dependency: missing must fail)

import emurust
from emurust.verify.compare import make_pyboy, pyboy_boot_rom_path
from emurust.verify.rollout import button_schedule, pyboy_state_without_wall_clock

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "tools"))
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from pyboy_state_versions import convert  # noqa: E402
from pyboy_state_helpers import pyboy_state, pyboy_state_after  # noqa: E402
from pyboy.logging import log_level  # noqa: E402
from test_pyboy_state import _run_side_by_side  # noqa: E402

K = 300
FRAMES = 300
ALL_VERSIONS = list(range(0, 29))
#: The versions around PyBoy's format changes (see gameboy/pyboy_state_versions.rs).
KEY_VERSIONS = [0, 2, 4, 5, 7, 8, 11, 12, 13, 15, 16, 17, 18, 19, 22, 23, 26, 28]
CGB_VERSIONS = [8, 10, 12, 13, 16, 17, 19, 23, 28]


#: PyBoy's Super Game Boy section, the last in a state; the serial port's (36 bytes) precedes it.
SGB_LEN = 7 + 4 + 0x2000 + 0x800 + 0x80


def _mask(data: bytes, spans) -> bytes:
    out = bytearray(data)
    for start, n in spans:
        out[start : start + n] = bytes(n)
    return bytes(out)


def _path(rel):
    return os.path.join(ROOT, rel)


_SOURCES: dict = {}


def _source_state(rom: str) -> bytes:
    """PyBoy's version 29 state of `rom` at frame K (random buttons, seeded by the ROM's name:
    the same in every run), cached per ROM."""
    if rom not in _SOURCES:
        schedule = button_schedule(zlib.crc32(rom.encode()) & 0xFFFF, K, change_probability=0.2)
        _SOURCES[rom] = pyboy_state_after(_path(rom), schedule, K)
    return _SOURCES[rom]


def _is_cgb(rom: str) -> bool:
    with open(_path(rom), "rb") as f:
        return bool(f.read()[0x143] & 0x80)


def _check(rom: str, version: int, pre: int, frames: int = FRAMES, **as_written) -> int:
    path = _path(rom)
    with open(path, "rb") as f:
        rom_bytes = f.read()
    old = convert(rom_bytes, _source_state(rom), version, **as_written)
    if version >= 2:
        assert old[0] == version
    cgb = _is_cgb(rom)
    schedule = button_schedule(7 * version + 1, K + frames, change_probability=0.2)
    pb = make_pyboy(path)
    try:
        with open(pyboy_boot_rom_path(cgb), "rb") as f:
            boot = f.read()
        gb = emurust.GameBoy(path, boot_rom=boot, cgb=True if cgb else None)
        if pre:
            pb.tick(pre, False)
            gb.tick(pre, False)
        # The same running machine (MBC3: without the host's wall-clock times).
        assert gb.save_pyboy_state() == pyboy_state_without_wall_clock(pyboy_state(pb), gb)
        pb.load_state(io.BytesIO(old))
        gb.load_pyboy_state(old)
        # Right after loading: the same machine, byte for byte. (Before version 15 PyBoy keeps
        # its serial port and brings its clock to the loaded cycle count at its next tick;
        # emurust does that while loading: the port's "last cycles" and clock are compared from
        # the first frame on, below.)
        ours, ref = gb.save_pyboy_state(), pyboy_state_without_wall_clock(pyboy_state(pb), gb)
        if version < 15:
            serial = len(ref) - SGB_LEN - 36
            ours, ref = (_mask(x, [(serial + 4, 8), (serial + 20, 8)]) for x in (ours, ref))
        if ours != ref:
            i = next(i for i in range(len(ref)) if ours[i] != ref[i])
            pytest.fail(f"version {version}: after loading, the PyBoy states differ first at offset {i}")
        # Every I/O register reads as on PyBoy right after the load (DIV included).
        host = emurust._core.Host(gb)
        assert [host.read_cpu(a) for a in range(0xFF00, 0xFF80)] == [pb.memory[a] for a in range(0xFF00, 0xFF80)]
        return _run_side_by_side(gb, pb, schedule, K, frames, cgb=cgb)
    finally:
        pb.stop(save=False)


def _pre(version: int) -> int:
    """Frames run before loading: 0 (fresh), but for versions 12 and 13 (see
    test_version_12_and_13_need_a_nearby_sound_clock) a few frames less than the source ran
    (without input), so the kept sound unit is just behind the state's time (12: PyBoy runs it
    over that gap) and its targets near it (13)."""
    return {12: K - 5, 13: K - 1}.get(version, 0)


@pytest.mark.parametrize(
    "version,pre",
    [(v, 0) for v in ALL_VERSIONS if v not in (12, 13)]
    + [(v, K) for v in ALL_VERSIONS if v not in (12, 13)]
    + [(12, _pre(12)), (13, _pre(13))],
    ids=lambda x: str(x),
)
def test_every_version_dodge(version, pre):
    assert _check("games/dodge.gb", version, pre) == FRAMES


@pytest.mark.parametrize("version", [12, 13])
def test_version_12_and_13_need_a_nearby_sound_clock(version):
    """Version 12 has the CPU's cycle count but no sound; 13 the sound's clocks but not its
    targets. Into a fresh emulator (sound clock 0, the state's clock far on) PyBoy would run
    its sound unit over the whole gap (12; with a clock behind, for ever) or never reach its
    targets again (13: no more samples or frame-sequencer steps). emurust refuses such a load
    with a StateError naming the version, and changes nothing."""
    path = _path("games/dodge.gb")
    with open(path, "rb") as f:
        old = convert(f.read(), _source_state("games/dodge.gb"), version)
    gb = emurust.GameBoy(path, boot_rom=emurust.pyboy_boot_rom())
    before = gb.save_state()
    with pytest.raises(emurust.StateError, match=f"format version {version}"):
        gb.load_pyboy_state(old)
    assert gb.save_state() == before


def test_refusals():
    """Versions PyBoy 2.8.1 refuses (newer than 29), old clock blocks, truncated old states."""
    dodge = _path("games/dodge.gb")
    with open(dodge, "rb") as f:
        state = convert(f.read(), _source_state("games/dodge.gb"), 7)
    gb = emurust.GameBoy(dodge, boot_rom=emurust.pyboy_boot_rom())
    for bad, match in [
        (bytes([30]) + state[1:], "newer PyBoy"),
        (bytes([255]) + state[1:], "newer PyBoy"),
        (state[:-1], "truncated"),
        (state + b"\0", "unexpected bytes"),
    ]:
        with pytest.raises(emurust.StateError, match=match):
            gb.load_pyboy_state(bad)
    mbc3 = _path("roms/mbc3.gb")
    with open(mbc3, "rb") as f:
        rom = f.read()
    with pytest.raises(ValueError):
        convert(rom, _source_state("roms/mbc3.gb"), 20)  # the converter cannot write one either
    v21 = bytearray(convert(rom, _source_state("roms/mbc3.gb"), 21))
    v21[0] = 20  # a version 20 clock block has the same length up to its legacy part
    with pytest.raises(emurust.StateError, match="clock"):
        emurust.GameBoy(mbc3, boot_rom=emurust.pyboy_boot_rom()).load_pyboy_state(bytes(v21))


@pytest.mark.parametrize("version", KEY_VERSIONS)
@pytest.mark.parametrize("rom", ["games/snake.gb", "games/runner.gb", "roms/mbc1.gb", "roms/mbc5.gb", "roms/music.gb", "roms/timer.gb"])
def test_key_versions(rom, version):
    pre = _pre(version)
    assert _check(rom, version, pre) == FRAMES


@pytest.mark.parametrize("version", [21, 22, 25, 28])
def test_clock_cartridge(version):
    """MBC3 with a clock: versions from 21 (older clock blocks depend on the wall clock)."""
    assert _check("roms/mbc3.gb", version, 0) == FRAMES


@pytest.mark.parametrize("version", CGB_VERSIONS)
def test_game_boy_color(version):
    """Game Boy Color states exist from version 8 (the CGB flag and HDMA)."""
    pre = _pre(version)
    assert _check("roms/cgb.gb", version, pre) == FRAMES


@pytest.mark.parametrize("version", ALL_VERSIONS)
def test_stored_values_older_pyboy_wrote(version):
    """Bytes an older PyBoy wrote beside the value they derive from, read back as PyBoy 2.8.1
    reads them: a DIV byte that is not the counter's upper byte (old releases kept DIV apart
    from a sub-counter; PyBoy shows the stored byte until the timer next advances) and, before
    version 16, an FF6C byte of 0 (the object priority mode PyBoy keeps, and saves, on a DMG).
    Compared byte for byte right after the load, register by register, then frame by frame."""
    gb = emurust.GameBoy.from_pyboy_state(_path("games/dodge.gb"), _source_state("games/dodge.gb"))
    div = emurust._core.Host(gb).read_cpu(0xFF04) ^ 0x5A  # never the counter's upper byte
    assert _check("games/dodge.gb", version, _pre(version), 60, div=div, ff6c=0) == 60


def _version_7(rom: str) -> bytes:
    with open(_path(rom), "rb") as f:
        return convert(f.read(), _source_state(rom), 7)


def test_from_pyboy_state_is_a_fresh_pyboy_loading_version_7():
    """`GameBoy.from_pyboy_state(rom, state)` is `PyBoy(rom)` + `load_state(state)`, also for
    an old state: what version 7 lacks comes from a freshly created PyBoy."""
    rom = "games/dodge.gb"
    old = _version_7(rom)
    gb = emurust.GameBoy.from_pyboy_state(_path(rom), old)
    pb = make_pyboy(_path(rom))
    try:
        pb.load_state(io.BytesIO(old))
        assert gb.save_pyboy_state() == pyboy_state(pb)
        schedule = button_schedule(3, K + FRAMES, change_probability=0.2)
        assert _run_side_by_side(gb, pb, schedule, K, FRAMES) == FRAMES
    finally:
        pb.stop(save=False)


def test_pyboy_api_load_state_version_7():
    """`emurust.PyBoy.load_state` takes a version 7 file as PyBoy 2.8.1 does (it warns), and the
    two then run identically through PyBoy's API: screen and memory every frame."""
    rom = "games/dodge.gb"
    old = _version_7(rom)
    ours = emurust.PyBoy(_path(rom), window="null")
    ref = make_pyboy(_path(rom))
    try:
        ours.load_state(io.BytesIO(old))
        ref.load_state(io.BytesIO(old))
        schedule = button_schedule(9, FRAMES, change_probability=0.2)
        for f in range(FRAMES):
            for action, button in schedule[f]:
                getattr(ours, f"button_{action}")(button)
                getattr(ref, f"button_{action}")(button)
            assert ours.tick(1, True) == ref.tick(1, True)
            assert (ours.screen.ndarray == ref.screen.ndarray).all(), f"frame {f + 1}: screen"
            for lo, hi in [(0x8000, 0xA000), (0xC000, 0xE000), (0xFE00, 0xFEA0), (0xFF80, 0xFFFF)]:
                assert bytes(ours.memory[lo:hi]) == bytes(ref.memory[lo:hi]), f"frame {f + 1}: {lo:#x}"
        a, b = io.BytesIO(), io.BytesIO()
        ours.save_state(a)
        ref.save_state(b)
        assert a.getvalue() == b.getvalue()
    finally:
        ours.stop(save=False)
        ref.stop(save=False)


def test_batch_start_state_version_7():
    """The batch's `start_state` takes a PyBoy state of any version: it starts from what
    `GameBoy.from_pyboy_state` (a fresh PyBoy loading it) gives."""
    from emurust import _core

    rom = _path("games/dodge.gb")
    old = _version_7("games/dodge.gb")
    expected = emurust.GameBoy.from_pyboy_state(rom, old).save_state()
    b = _core.Batch(rom, 2, obs="ram", ram=[(0xC000, 8)], start_state=old)
    assert b.start_state(0) == expected and b.start_state(1) == expected
    b.set_start_state(_version_7("games/dodge.gb"), 1)
    assert b.start_state(1) == expected
    b.reset()
    with pytest.raises(emurust.StateError, match="newer PyBoy"):
        b.set_start_state(bytes([30]) + old[1:])
    assert b.start_state(0) == expected


#: Where the LCD section's STAT byte is in a version 29 DMG state (LY and LYC follow).
STAT_AT_DMG = 45 + 0x2000 + 0xA0 + 4


def _old_state_in_vblank(rom: str, version: int, ly: int) -> bytes:
    """The ROM's state at frame K in `version`'s layout, with LY `ly` in mode 1 (VBlank) as an
    old release saved it at the end of its frame (PokemonRedExperiments' version 7 states: LY
    145), STAT's interrupt sources and LYC as the game set them."""
    src = _source_state(rom)
    at = STAT_AT_DMG + (10 if _is_cgb(rom) else 0)  # CGB: the HDMA registers before the CPU
    stat, lyc = src[at], src[at + 2]
    stat = (stat & 0xF8) | (0x04 if lyc == ly else 0) | 1
    with open(_path(rom), "rb") as f:
        return convert(f.read(), src, version, line=(ly, stat))


def _same_state(gb, pb, where: str) -> None:
    ours, ref = gb.save_pyboy_state(), pyboy_state(pb)
    if ours != ref:
        i = next(i for i in range(min(len(ours), len(ref))) if ours[i] != ref[i])
        pytest.fail(f"{where}: the PyBoy states differ first at offset {i} ({ours[i]} vs PyBoy's {ref[i]})")


#: (ROM, sound emulated, sampled in the frames right after the load): a CPU halted for VBlank
#: alone without sound (PyBoy's halted turns then last 2^31 cycles each until the frame ends); a
#: running CPU with sound, its timer waking it, sampled (the turns last as long as the APU's
#: distance, an absolute cycle count: jumps of about 5e9 cycles); a running game with sound.
LINE_CASES = [("roms/halt_wake.gb", False, False), ("roms/music.gb", True, True), ("games/dodge.gb", True, False)]


def _load_old_state_side_by_side(rom: str, version: int, pre: int, ly: int, sound: bool, sampled: bool) -> int:
    path = _path(rom)
    old = _old_state_in_vblank(rom, version, ly)
    cgb = _is_cgb(rom)
    pb = make_pyboy(path, sound_emulated=sound)
    log_level("ERROR")  # PyBoy warns at each sample past its buffer in the long first turns
    try:
        with open(pyboy_boot_rom_path(cgb), "rb") as f:
            boot = f.read()
        gb = emurust.GameBoy(path, boot_rom=boot, cgb=True if cgb else None, sound_emulated=sound)
        if pre:
            pb.tick(pre, False)
            gb.tick(pre, False)
        pb.load_state(io.BytesIO(old))
        gb.load_pyboy_state(old)
        _same_state(gb, pb, "after loading")
        host = emurust._core.Host(gb)
        assert [host.read_cpu(a) for a in range(0xFF00, 0xFF80)] == [pb.memory[a] for a in range(0xFF00, 0xFF80)]
        for frames in (1, 8):
            pb.tick(frames, False, sampled)
            gb.tick(frames, False, sampled)
            _same_state(gb, pb, f"after {frames} more frames")
        schedule = button_schedule(ly + version, K + 60, change_probability=0.2)
        return _run_side_by_side(gb, pb, schedule, K, 60, cgb=cgb)
    finally:
        pb.stop(save=False)


@pytest.mark.parametrize("ly", [144, 145, 147, 151, 153, 200])
@pytest.mark.parametrize("rom,sound,sampled", LINE_CASES, ids=lambda x: str(x))
@pytest.mark.parametrize("version,pre", [(7, K), (7, 0), (5, K)], ids=lambda x: str(x))
def test_old_state_whose_line_disagrees_with_the_lcd(request, version, pre, rom, sound, sampled, ly):
    """Versions 5 to 7 hold STAT and LY but not the LCD's clocks and next mode, which PyBoy
    keeps from the machine it loads into (PokemonRedExperiments v2's reset loads its version 7
    states, LY 145 in VBlank, over the machine that ran the last episode). The machine's next
    mode then starts on the state's line: PyBoy reaches mode 0 on a line past 143 and writes
    that line's record (SCX, SCY, WX, WY, LCDC.4) past its 144-line table, over its LCD's last
    tick cycle and distances (lines 144-147), or VRAM bank 1 (151 on; 153 ends the frame
    first, 200 is no hardware line); its next turns are counted from the altered cycle. Lines
    148-150 land on its colour flags (not followed). Loaded into PyBoy and emurust after `pre`
    frames: the PyBoy states equal byte for byte right after the load, after one frame and
    after 8 more (not drawn: PyBoy draws such a line past its screen buffer), then frame by
    frame for 60 frames (screen, memory, sound)."""
    if rom == "games/dodge.gb" and ly == 200 and pre:
        # The game runs equal through the 209-line first frame and 5 more, then the 7th frame
        # differs by 3 cycles (an OAM DMA's start, at an odd cycle): the same from PyBoy's
        # version 29 state of the 6th frame loaded into a fresh PyBoy and emurust, a core
        # divergence of its own, not this load's.
        request.applymarker(pytest.mark.xfail(strict=True, reason="core: odd-cycle divergence after LY 200's long frame"))
    assert _load_old_state_side_by_side(rom, version, pre, ly, sound, sampled) == 60


def test_old_state_in_vblank_with_sound_halted():
    """The halted CPU of the first case with sound: each turn lasts as long as the APU's
    distance (PyBoy runs its sound unit over about 7e9 cycles; 8 s)."""
    assert _load_old_state_side_by_side("roms/halt_wake.gb", 7, K, 144, True, False) == 60


@pytest.mark.parametrize("ly", [144, 145, 151, 200])
@pytest.mark.parametrize("version,pre", [(8, 0), (8, K), (29, K)], ids=lambda x: str(x))
def test_cgb_state_whose_line_disagrees_with_the_lcd(version, pre, ly):
    """Game Boy Color states (from version 8) hold the LCD's clocks and next mode, so PyBoy's
    own agree with their line; one that does not (LY in VBlank, the clocks of line 0) takes
    the same path as the DMG's old states above: the record of a line past 143 lands on the
    LCD's last tick cycle and distances, or from line 151 on VRAM bank 1, which the colour
    picture shows."""
    assert _load_old_state_side_by_side("roms/cgb.gb", version, pre, ly, True, False) == 60
