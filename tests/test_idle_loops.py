"""The idle-loop and busy-loop fast-forwards and the short-loop fast path through the Python API: on
and off give the same machine at every frame, and their counters show they ran
(crates/emurust-core/tests/idle_loops.rs and gameboy/short_loop.rs's tests compare more)."""

import emurust
from conftest import ROOT


def _run_on_and_off(rom, buttons, switch="idle_loop_fast_forward"):
    """Run `rom` (a path, or the name of one of roms/) 240 frames with `switch` on and off,
    `buttons(frame)` pressed, comparing the machines every frame; returns both runs' wait-loop
    counters."""
    rom = str(rom if "/" in str(rom) else ROOT / "roms" / f"{rom}.gb")
    on, off = emurust.GameBoy(rom), emurust.GameBoy(rom)
    assert getattr(on, switch)
    setattr(off, switch, False)
    assert not getattr(off, switch)
    for frame in range(240):
        for gb in (on, off):
            gb.buttons = buttons(frame)
            gb.tick(1, frame % 4 == 0, True)
        assert on.instructions == off.instructions and on.cycles == off.cycles, frame
        assert on.save_state() == off.save_state(), frame
    return on.wait_loop_stats(), off.wait_loop_stats()


def test_idle_loop_fast_forward_switch_and_counters():
    stats, stats_off = _run_on_and_off("idle_joypad", lambda frame: (frame // 16) * 0x25 & 0xFF)
    assert stats["idle_joypad_skips"] > 100 and stats["idle_skipped_instructions"] > 1000, stats
    assert stats_off["idle_skips"] == 0 and stats_off["idle_looks"] == 0, stats_off


def test_busy_loop_fast_forward_switch_and_counters():
    """roms/idle_menu.gb's menu waits (calls, a bank-switching trampoline, rewritten variables),
    with buttons changing between frames: the same machine every frame with the switch off."""
    stats, stats_off = _run_on_and_off("idle_menu", lambda frame: 0x01 if frame % 40 in (10, 11) else 0)
    assert stats["busy_skips"] > 30 and stats["busy_skipped_instructions"] > 100_000, stats
    assert stats_off["busy_skips"] == 0 and stats_off["busy_proofs"] == 0, stats_off


def test_short_loop_fast_path_switch_and_counters():
    """games/snake.gb clears its shadow OAM every frame with `LD (HL+),A / DEC C / JR NZ`: the short-loop
    fast path runs it (crates/emurust-core/src/gameboy/short_loop.rs), and with every wait-loop fast path
    off the machine is the same at every frame."""
    stats, stats_off = _run_on_and_off(
        ROOT / "games" / "snake.gb",
        lambda frame: 0x08 if frame % 60 in (30, 31) else (frame // 7) * 0x11 & 0xF0,
        switch="wait_loop_fast_paths",
    )
    assert stats["short_loops"] > 100 and stats["short_loop_instructions"] > 10_000, stats
    assert stats_off["short_loops"] == 0, stats_off
