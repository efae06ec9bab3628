"""L2: components working together, each compared with PyBoy 2.8.1 at every frame and checked
for actually doing what it claims (on PyBoy's side): a button press reaching P1 and the game's
RAM, MBC1 ROM/RAM bank switches, STAT/LYC/timer/VBlank/joypad interrupts arriving at the same
points, OAM DMA copies."""

import pytest

from emurust.verify.interactions import CHECKS


@pytest.mark.parametrize("name", sorted(CHECKS))
def test_interaction_identical_to_pyboy(name):
    r = CHECKS[name]()
    assert r.passed, f"{name}: {r.details}"
