"""PyBoy save states for the state-interop tests (test_pyboy_state.py, test_pyboy_state_versions.py)."""

from __future__ import annotations

import io

import emurust
from emurust.verify.compare import make_pyboy
from emurust.verify.rollout import pyboy_state_without_wall_clock


def pyboy_state(pb) -> bytes:
    """PyBoy's own save state of the running `pb` (format version 29)."""
    buf = io.BytesIO()
    pb.save_state(buf)
    return buf.getvalue()


def pyboy_state_after(path: str, schedule, frames: int, **pyboy_options) -> bytes:
    """The state a fresh PyBoy of `path` saves after `frames` frames pressing and releasing
    the buttons of `schedule` (rollout.button_schedule; the last frame rendered). MBC3 clock
    times are set as emurust writes them (PyBoy adds the host time since saving when it
    loads; emurust runs on emulated time)."""
    src = make_pyboy(path, **pyboy_options)
    try:
        for f in range(frames):
            for action, button in schedule[f]:
                getattr(src, f"button_{action}")(button)
            src.tick(1, f == frames - 1)
        state = pyboy_state(src)
    finally:
        src.stop(save=False)
    return pyboy_state_without_wall_clock(state, emurust.GameBoy(path))
