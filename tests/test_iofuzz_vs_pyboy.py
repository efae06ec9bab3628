"""Random I/O programs (tools/iofuzz.py) on emurust and PyBoy 2.8.1, compared at every frame.

The generator is deterministic: each seed is a fixed program. These seeds each found a
divergence class before it was fixed: 0 (the memory view of OAM during an OAM DMA), 28 and 36
(HRAM and IE accesses let a running DMA catch up in PyBoy); 1 has none, as a control of a long run.
"""

import sys

import pytest

from conftest import LONG, ROOT
from emurust.verify.rollout import rollout

sys.path.insert(0, str(ROOT / "tools"))
import iofuzz  # noqa: E402


@pytest.mark.parametrize("seed", [0, 1, 28, 36])
def test_random_io_program_identical_to_pyboy(tmp_path, seed):
    path = tmp_path / f"iofuzz{seed}.gb"
    path.write_bytes(iofuzz.make_rom(seed))
    frames = 3000 if LONG else 400
    r = rollout(str(path), frames, seed=seed)
    assert r.divergence is None, str(r.divergence)
    assert r.frames_identical == frames


def test_the_generator_is_deterministic_and_makes_valid_roms():
    import emurust

    a, b = iofuzz.make_rom(5), iofuzz.make_rom(5)
    assert a == b and len(a) == 0x8000
    assert iofuzz.make_rom(6) != a
    emurust.GameBoy(a)  # header and size accepted
