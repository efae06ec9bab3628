"""A batch environment is the same machine as PyBoy driven by the equivalent calls:
reset script = tick() per segment; step = button_press, tick(press_frames, False),
button_release, tick(frame_skip - press_frames, True). Compared after every step."""

import numpy as np
import pytest

import emurust
from emurust import _core
from conftest import ROOT
from emurust.verify.compare import make_pyboy
from emurust.verify.rollout import BOOT_FRAMES

BUTTONS = {1 << i: name for i, name in enumerate(emurust.BUTTONS)}


@pytest.mark.parametrize("game", ["dodge", "runner"])
def test_batch_env_equals_pyboy_call_for_call(game):
    rom = str(ROOT / "games" / f"{game}.gb")
    script = [(0, 10), ("start", 2), (0, 12)]
    b = _core.Batch(rom, 2, frame_skip=24, press_frames=8, obs=["rgb"], reset_script=script, num_threads=2)
    b.reset()
    pb = make_pyboy(rom)
    pb.tick(BOOT_FRAMES, False)  # the batch starts from the post-boot state
    for mask, frames in script:
        if mask:
            pb.button_press(mask)
        pb.tick(frames, True)
        if mask:
            pb.button_release(mask)
    rng = np.random.default_rng(1)
    masks = b.action_masks
    compared_screens = 0
    for step in range(60):
        actions = rng.integers(0, b.num_actions, 2)
        b.step(actions)
        held = [BUTTONS[bit] for bit in BUTTONS if masks[actions[0]] & bit]
        for name in held:
            pb.button_press(name)
        pb.tick(8, False)
        for name in held:
            pb.button_release(name)
        pb.tick(16, True)
        assert b.read(0, 0xC000, 0x2000) == bytes(pb.memory[0xC000:0xE000]), f"WRAM differs after step {step}"
        assert b.read(0, 0xFF80, 0x7F) == bytes(pb.memory[0xFF80:0xFFFF]), f"HRAM differs after step {step}"
        if step >= 2:  # the first frames still show what the post-boot state does not carry
            np.testing.assert_array_equal(b.buffers["rgb"][0], pb.screen.ndarray[..., :3], err_msg=f"step {step}")
            compared_screens += 1
    assert compared_screens == 58
    pb.stop(save=False)
