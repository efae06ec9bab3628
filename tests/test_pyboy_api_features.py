"""PyBoy 2.8.1 features of issue 28, each run on PyBoy and ``emurust.PyBoy`` and compared:
malformed save states (exception classes), the log lines a user sees, ``randomize=True``,
``rtc_lock_experimental`` and palette cycling (``CYCLE_PALETTE``, ``_cycle_palette``)."""

from __future__ import annotations

import contextlib
import io
import pathlib

import numpy as np
import pytest

from conftest import make_rom
from pyboy_api_harness import api, assert_same

pytest.importorskip("pyboy")

ROOT = pathlib.Path(__file__).resolve().parent.parent
DODGE = str(ROOT / "games" / "dodge.gb")


def _both():
    return [api("pyboy"), api("emurust")]


# ------------------------------------------------------------------ malformed states


MALFORMED_STATES = {
    "version 0, 5 bytes": b"\x001234",
    "empty": b"",
    "version 29, 100 bytes": b"\x1d" + bytes(99),
    "version 28, 51 bytes": b"\x1c" + bytes(50),
    "version 21, 11 bytes": b"\x15" + bytes(10),
    "newer version": b"991234",
}


@pytest.mark.parametrize("name", sorted(MALFORMED_STATES))
def test_malformed_state_raises_pyboys_exception_class(name):
    """PyBoy raises PyBoyAssertException where a state ends early, PyBoyException for a newer
    version; the class (and that it derives from PyBoyException) must be the same."""
    raised = []
    for pb in _both():
        pyboy = pb.PyBoy(DODGE, window="null")
        with contextlib.redirect_stdout(io.StringIO()):  # the older-version warning line
            with pytest.raises(Exception) as info:
                pyboy.load_state(io.BytesIO(MALFORMED_STATES[name]))
        raised.append([c.__name__ for c in type(info.value).__mro__])
        pyboy.stop(save=False)
    assert raised[0] == raised[1]


# ------------------------------------------------------------------ log lines




def logging_script(pb_api, rec):
    def out(label, fn):
        buf = io.StringIO()
        with contextlib.redirect_stdout(buf):
            rec.call(label, fn)
        rec(label + " stdout", buf.getvalue())

    # Not DEBUG: there PyBoy also prints traces of its internals (cartridge loading, ...),
    # some without its logger (docs/pyboy_api.md).
    for level in ("INFO", "WARNING", "ERROR", "CRITICAL", "DISABLE"):
        out(f"dummy window at {level}", lambda: pb_api.PyBoy(DODGE, window="dummy", log_level=level) and None)
        out(f"headless window at {level}", lambda: pb_api.PyBoy(DODGE, window="headless", log_level=level) and None)
    out("bootrom_file", lambda: pb_api.PyBoy(DODGE, window="null", bootrom_file=None) and None)
    out("window_type", lambda: pb_api.PyBoy(DODGE, window_type="null") and None)
    out("sound=True", lambda: pb_api.PyBoy(DODGE, window="null", sound=True) and None)
    out("unknown kwarg", lambda: pb_api.PyBoy(DODGE, window="null", no_such_option=1))
    out("bad level", lambda: pb_api.PyBoy(DODGE, window="null", log_level="LOUD"))
    with open(DODGE, "rb") as f:
        pyboy = pb_api.PyBoy(io.BytesIO(f.read()), window="null")  # no path: STATE_SAVE logs an error
    out("speed 6", lambda: pyboy.set_emulation_speed(6))
    out("save without path", lambda: (pyboy.send_input(pb_api.WindowEvent.STATE_SAVE), pyboy.tick(1, False))[1])
    pyboy.stop(save=False)


def test_log_lines_as_pyboys():
    assert_same(logging_script)


# ------------------------------------------------------------------ randomize


@pytest.mark.parametrize("cgb", [False, True])
def test_randomize_ram(cgb):
    """``randomize=True`` fills VRAM, WRAM, OAM, FEA0-FEFF and HRAM with random bytes at power-on
    (what PyBoy's own test checks), ``randomize=False`` leaves them zero; and the machine runs."""
    for pb in _both():
        flags = {} if not cgb else {"cgb": True}
        regions = ((0x8000, 0xA000), (0xC000, 0xE000), (0xFE00, 0xFEA0), (0xFEA0, 0xFF00), (0xFF80, 0xFFFF))
        plain = pb.PyBoy(DODGE, window="null", randomize=False, **flags)
        assert [any(plain.memory[a:b]) for a, b in regions] == [False] * 5, pb.name
        plain.stop(save=False)
        rnd = pb.PyBoy(DODGE, window="null", randomize=True, **flags)
        assert [any(rnd.memory[a:b]) for a, b in regions] == [True] * 5, pb.name
        if cgb:
            assert all(any(rnd.memory[bank, 0xD000:0xDFFF]) for bank in range(1, 8)), pb.name
        assert rnd.tick(120, False)
        rnd.stop(save=False)


# ------------------------------------------------------------------ RTC lock


def _rtc_rom() -> bytes:
    return make_rom(cart_type=0x10, rom_banks=2, ram_code=0x03, title=b"RTC LOCK")


def rtc_lock_script(pb_api, rec):
    c = rec.call
    pyboy = pb_api.PyBoy(io.BytesIO(_rtc_rom()), window="null")
    mem = pyboy.memory

    def latch():
        mem[0x6000] = 0
        mem[0x6000] = 1

    def regs():
        out = []
        for reg in (0x08, 0x09, 0x0A, 0x0B, 0x0C):
            mem[0x4000] = reg
            out.append(mem[0xA000])
        return out

    mem[0x0000] = 0x0A
    # Set the clock to 1 day 2:03:04 and let it run 3 emulated seconds.
    for reg, value in ((0x08, 4), (0x09, 3), (0x0A, 2), (0x0B, 1)):
        mem[0x4000] = reg
        mem[0xA000] = value
    pyboy.tick(180, False)
    latch()
    rec("running", regs())
    c("lock", lambda: pyboy.rtc_lock_experimental(True))
    rec("locked, latched before", regs())
    latch()
    rec("locked, latched", regs())
    mem[0x4000] = 0x08
    mem[0xA000] = 30
    pyboy.tick(120, False)
    latch()
    rec("locked, after a write and 2 s", regs())
    state = io.BytesIO()
    pyboy.save_state(state)
    state.seek(0)
    pyboy.load_state(state)
    latch()
    rec("locked, after load_state", regs())
    c("unlock", lambda: pyboy.rtc_lock_experimental(False))
    pyboy.tick(120, False)
    latch()
    rec("unlocked, 2 s later", regs())
    pyboy.stop(save=False)
    plain = pb_api.PyBoy(DODGE, window="null")
    c("no clock", lambda: plain.rtc_lock_experimental(True))
    plain.stop(save=False)


def test_rtc_lock_as_pyboys():
    # PyBoy's clock adds host time on load_state and between ticks only through emulated cycles
    # here (no .rtc file), so the values are exact on both.
    assert_same(rtc_lock_script)


# ------------------------------------------------------------------ palette cycling


def palette_script(pb_api, rec, rom, cgb):
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        pyboy = pb_api.PyBoy(rom, window="null", cgb=cgb)
        pyboy.tick(60, True, False)
        rec("start", pyboy.screen.ndarray.copy())
        for i in range(6):
            pyboy._cycle_palette()
            pyboy.tick(1, False, False)
            rec(f"cycle {i}, frame not drawn", pyboy.screen.ndarray.copy())
            pyboy.tick(1, True, False)
            rec(f"cycle {i}, drawn", pyboy.screen.ndarray.copy())
            rec(f"cycle {i}, image", pyboy.screen.image)
        pyboy.send_input(pb_api.WindowEvent.CYCLE_PALETTE)
        # PyBoy's renderer keeps tiles coloured in its cache until the game rewrites BGP or the
        # tile: its first drawn frame after the change can show the old colours (as here, at
        # frame 73; docs/pyboy_api.md). From the second drawn frame on the two agree.
        pyboy.tick(2, True, False)
        rec("event", pyboy.screen.ndarray.copy())
        state = io.BytesIO()
        pyboy.save_state(state)
        state.seek(0)
        pyboy.tick(5, True, False)
        pyboy.load_state(state)
        rec("after load_state", pyboy.screen.ndarray.copy())
        pyboy.stop(save=False)
    rec("stdout", out.getvalue())


@pytest.mark.parametrize("cgb", [False, True])
def test_palette_cycling_as_pyboys(cgb):
    assert_same(palette_script, DODGE, cgb)


def test_palette_cycling_changes_the_picture():
    """The comparison above is not vacuous: the colours do change."""
    import emurust

    pyboy = emurust.PyBoy(DODGE, window="null")
    pyboy.tick(60, True, False)
    before = pyboy.screen.ndarray.copy()
    pyboy._cycle_palette()
    pyboy.tick(1, True, False)
    assert not np.array_equal(before, pyboy.screen.ndarray)


# ------------------------------------------------------------------ screen recorder


def _record_gif(pb_api, folder: pathlib.Path, monkeypatch):
    from PIL import Image, ImageSequence

    monkeypatch.chdir(folder)
    pyboy = pb_api.PyBoy(DODGE, window="null")
    pyboy.tick(100, True, False)
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        pyboy.send_input(pb_api.WindowEvent.SCREEN_RECORDING_TOGGLE)
        for frames in (1, 3, 1, 5, 2):
            pyboy.tick(frames, True, False)
        pyboy.send_input(pb_api.WindowEvent.SCREEN_RECORDING_TOGGLE)
        pyboy.tick(1, True, False)
    pyboy.stop(save=False)
    files = sorted(p.name for p in (folder / "recordings").iterdir())
    assert len(files) == 1 and files[0].startswith("EMURUST DODGE-") and files[0].endswith(".gif"), files
    with Image.open(folder / "recordings" / files[0]) as gif:
        frames = [np.asarray(f.convert("RGB")) for f in ImageSequence.Iterator(gif)]
        info = (gif.format, gif.info.get("loop"), gif.info.get("duration"), gif.size)
    log = [line.split("  ")[0] + line[30:].split(" in ")[0] for line in out.getvalue().splitlines()]
    return frames, info, log


def test_screen_recorder_gif_as_pyboys(tmp_path, monkeypatch):
    """SCREEN_RECORDING_TOGGLE writes the same GIF as PyBoy: one frame per tick() call, the same
    pictures, file name, frame time, loop, log lines; its scratch folder is removed."""
    results = []
    for pb in _both():
        folder = tmp_path / pb.name
        folder.mkdir()
        results.append(_record_gif(pb, folder, monkeypatch))
        assert [p.name for p in (folder / "recordings").iterdir() if p.name.startswith("screenrec-")] == []
    (p_frames, p_info, p_log), (e_frames, e_info, e_log) = results
    assert len(p_frames) == len(e_frames) >= 2  # Pillow merges identical consecutive frames
    assert all(np.array_equal(a, b) for a, b in zip(p_frames, e_frames))
    assert p_info == e_info
    assert p_log == e_log


def test_screen_recorder_mp4_command_as_pyboys(tmp_path, monkeypatch):
    """SCREEN_RECORDING_TOGGLE_MP4 hands ffmpeg the same command and raw data as PyBoy (ffmpeg
    itself is replaced by a recorder of its arguments and inputs)."""
    import shutil as shutil_module
    import subprocess as subprocess_module

    monkeypatch.setattr(shutil_module, "which", lambda name: "/usr/bin/ffmpeg")
    runs = {}
    for pb in _both():
        folder = tmp_path / pb.name
        folder.mkdir()
        monkeypatch.chdir(folder)
        calls = []

        def fake_run(cmd, stdout=None, stderr=None, check=None):
            inputs = [pathlib.Path(cmd[i + 1]).read_bytes() for i, a in enumerate(cmd) if a == "-i"]
            calls.append(([a if not str(a).startswith(".") else pathlib.Path(a).suffix for a in cmd], inputs))
            return type("Done", (), {"returncode": 0, "stderr": b""})()

        monkeypatch.setattr(subprocess_module, "run", fake_run)
        pyboy = pb.PyBoy(DODGE, window="null")
        pyboy.tick(100, True, True)
        with contextlib.redirect_stdout(io.StringIO()):
            pyboy.send_input(pb.WindowEvent.SCREEN_RECORDING_TOGGLE_MP4)
            pyboy.tick(3, True, True)
            pyboy.tick(2, True, True)
            pyboy.send_input(pb.WindowEvent.SCREEN_RECORDING_TOGGLE_MP4)
            pyboy.tick(1, True, True)
        pyboy.stop(save=False)
        runs[pb.name] = calls
    assert len(runs["pyboy"]) == 1
    assert runs["pyboy"] == runs["emurust"]


# ------------------------------------------------------------------ breakpoints debug prompt


def debug_prompt_script(pb_api, rec, commands, breakpoints, monkeypatch):
    import re
    import sys

    monkeypatch.setattr(sys, "stdin", io.StringIO(commands))
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        pyboy = pb_api.PyBoy(DODGE, window="null", breakpoints=breakpoints)
        pyboy.set_emulation_speed(0)
        for _ in range(120):
            pyboy.tick()
    text = out.getvalue()
    # What a user reads first at each stop: the register line (PC and its symbol labels).
    rec("register lines", re.findall(r"^A: .*$", text, re.M))
    rec("other lines", [line for line in text.splitlines() if line.startswith(("pyboy.", "Removing", "0", "F"))])
    rec("input left", sys.stdin.read())
    rec("screen", pyboy.screen.ndarray)
    pyboy.stop(save=False)


@pytest.mark.parametrize(
    "commands, breakpoints",
    [
        ("n\nc\nc\n", "0:0100,-1:0"),
        ("n\nc\n", "-1:0,-1:3"),
        ("n\nn\nc\n", "-1:0,-1:3"),
        ("c\nc\n", "-1:0,-1:3"),
        ("n\nn\nn\nn\nn\nn\nc\n", "-1:0,-1:3"),
        ("n\nd\nc\nc\n", "-1:0,-1:3"),
        ("bl\nb -1:5\nbl\nc\nn\nc\nc\n", "-1:0,-1:3"),
        ("c 0:0150\nc\nc\n", "-1:0,-1:3"),
        ("c\n", "-1:0,nolabel"),
    ],
)
def test_debug_prompt_as_pyboys(commands, breakpoints, monkeypatch):
    """PyBoy's ``breakpoints=`` prompt: the same stops (PC at each), the same commands read, the
    same messages and the same machine afterwards."""
    assert_same(debug_prompt_script, commands, breakpoints, monkeypatch)


# ------------------------------------------------------------------ sprite fields


def sprite_fields_script(pb_api, rec):
    pb = pb_api.PyBoy(DODGE, window="null")
    pb.tick(120, False)
    for i in (0, 5, 39):
        s = pb.get_sprite(i)
        # PyBoy 2.8.1's `sprite_index` reads 0 for every sprite (declared, never assigned).
        rec(f"sprite {i}", (s.sprite_index, repr(s), s.x, s.y, s.tile_identifier, s.on_screen))
    pb.stop(save=False)


def test_sprite_fields_as_pyboys():
    assert_same(sprite_fields_script)


# ------------------------------------------------------------------ tile map keys


def tilemap_keys_script(pb_api, rec):
    pb = pb_api.PyBoy(DODGE, window="null")
    pb.tick(60, False)
    for name in ("tilemap_background", "tilemap_window"):
        tm = getattr(pb, name)
        # Fresh iterators per emulator: the keys' forms, with PyBoy's (Cython's) unpacking messages.
        keys = [(0,), (), (0, 1, 2), [0, 1], [0], None, "ab", "abc", iter([1, 2, 3]), (k for k in [1]), 3.5,
                (32, 0), (-1, 0), (0, 32), ("a", 0), (slice(0, 2), 0), (0, slice(None)), 5, (slice(0, 2, 2), 0)]
        for k in keys:
            label = k if not hasattr(k, "__next__") else type(k).__name__

            def read(k=k):
                v = tm[k]
                return v.tolist() if hasattr(v, "tolist") else v

            rec.call(f"{name}[{label!r}]", read)
    pb.stop(save=False)


def test_tilemap_keys_as_pyboys():
    assert_same(tilemap_keys_script)
