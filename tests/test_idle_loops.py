"""The idle-loop and busy-loop fast-forwards through the Python API: on and off give the same machine
at every frame, and their counters show they ran (crates/emurust-core/tests/idle_loops.rs compares
more)."""

import emurust
from conftest import ROOT


def test_idle_loop_fast_forward_switch_and_counters():
    rom = str(ROOT / "roms" / "idle_joypad.gb")
    on, off = emurust.GameBoy(rom), emurust.GameBoy(rom)
    assert on.idle_loop_fast_forward
    off.idle_loop_fast_forward = False
    assert not off.idle_loop_fast_forward
    for frame in range(240):
        for gb in (on, off):
            gb.buttons = (frame // 16) * 0x25 & 0xFF
            gb.tick(1, frame % 4 == 0, True)
        assert on.instructions == off.instructions and on.cycles == off.cycles, frame
        assert on.save_state() == off.save_state(), frame
    stats, stats_off = on.wait_loop_stats(), off.wait_loop_stats()
    assert stats["idle_joypad_skips"] > 100 and stats["idle_skipped_instructions"] > 1000, stats
    assert stats_off["idle_skips"] == 0 and stats_off["idle_looks"] == 0, stats_off


def test_busy_loop_fast_forward_switch_and_counters():
    """roms/idle_menu.gb's menu waits (calls, a bank-switching trampoline, rewritten variables),
    with buttons changing between frames: the same machine every frame with the switch off."""
    rom = str(ROOT / "roms" / "idle_menu.gb")
    on, off = emurust.GameBoy(rom), emurust.GameBoy(rom)
    off.idle_loop_fast_forward = False
    for frame in range(240):
        for gb in (on, off):
            gb.buttons = 0x01 if frame % 40 in (10, 11) else 0
            gb.tick(1, frame % 4 == 0, True)
        assert on.instructions == off.instructions and on.cycles == off.cycles, frame
        assert on.save_state() == off.save_state(), frame
    stats, stats_off = on.wait_loop_stats(), off.wait_loop_stats()
    assert stats["busy_skips"] > 30 and stats["busy_skipped_instructions"] > 100_000, stats
    assert stats_off["busy_skips"] == 0 and stats_off["busy_proofs"] == 0, stats_off
