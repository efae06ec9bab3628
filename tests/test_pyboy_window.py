"""``PyBoy(rom, window="SDL2")`` on emurust against PyBoy 2.8.1, headless under Xvfb.

Each implementation runs in a child process on its own virtual X display: it opens the window,
runs Dodge, and a screenshot of the display (``import -window root``) is taken; then keys are
typed into the window with xdotool (Return = START, as PyBoy maps it; Escape = QUIT). Checked:
the window's picture is the screen scaled up, PyBoy's and emurust's windows show the same, the
keys have the same effect on both, and Escape ends the emulation (``tick()`` returns False).

Needs Xvfb, xdotool, xwininfo and ImageMagick's ``import`` (Debian: xvfb, xdotool, x11-utils, imagemagick) and
PySDL2; skips saying which is missing.
"""

from __future__ import annotations

import json
import os
import pathlib
import shutil
import subprocess
import sys
import time

import numpy as np
import pytest

ROOT = pathlib.Path(__file__).resolve().parent.parent
DODGE = str(ROOT / "games" / "dodge.gb")
SCALE = 2
SIZE = (1024, 768)

CHILD = r"""
import json, subprocess, sys, time
import numpy as np
which, rom, out, scale = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
if which == "pyboy":
    from pyboy import PyBoy
else:
    from emurust import PyBoy

def shot(name):
    subprocess.run(["import", "-window", "root", f"{out}/{name}.png"], check=True)

pyboy = PyBoy(rom, scale=scale, sound_emulated=False)  # window="SDL2": the default
pyboy.set_emulation_speed(0)
pyboy.tick(150, True)
time.sleep(0.3)
pyboy.tick(1, True)  # present once more after the window manager-less map settled
shot("title")
np.save(f"{out}/title.npy", pyboy.screen.ndarray)

def typed(*keys):
    # No window manager: a click into the (centred) window gives it the keyboard focus; the
    # keys then arrive through XTEST as a person's would.
    subprocess.run(["xdotool", "mousemove", "512", "384", "click", "1"], check=True, timeout=30)
    for key in keys:
        subprocess.run(["xdotool", "key", "--delay", "50", key], check=True, timeout=30)
    time.sleep(0.3)

typed("Return")
running = [pyboy.tick(1, True) for _ in range(60)]
shot("started")
np.save(f"{out}/started.npy", pyboy.screen.ndarray)
typed("Escape")
running += [pyboy.tick(1, True) for _ in range(3)]
pyboy.stop(save=False)
json.dump({"running": running}, open(f"{out}/result.json", "w"))
"""


def _missing():
    for tool in ("Xvfb", "xdotool", "import"):
        if shutil.which(tool) is None:
            return f"{tool} is not installed (Debian: xvfb, xdotool, imagemagick)"
    try:
        import sdl2  # noqa: F401
    except ImportError:
        return 'PySDL2 is not installed (pip install "emurust[window]")'
    return None


def _run_on_display(which: str, out: pathlib.Path, display: int):
    xvfb = subprocess.Popen(["Xvfb", f":{display}", "-screen", "0", f"{SIZE[0]}x{SIZE[1]}x24", "-nolisten", "tcp"], stderr=subprocess.DEVNULL)
    try:
        time.sleep(1.0)
        env = dict(os.environ, DISPLAY=f":{display}", SDL_AUDIODRIVER="dummy")
        done = subprocess.run([sys.executable, "-c", CHILD, which, DODGE, str(out), str(SCALE)], env=env, capture_output=True, text=True, timeout=300)
        assert done.returncode == 0, done.stderr[-3000:]
        return json.loads((out / "result.json").read_text())
    finally:
        xvfb.terminate()
        xvfb.wait(timeout=10)


def _window_picture(png: pathlib.Path) -> np.ndarray:
    """The window's pixels from a screenshot of the display (SDL centres the window), scaled
    back down to the Game Boy's 160x144."""
    from PIL import Image

    img = np.asarray(Image.open(png).convert("RGB"))
    w, h = 160 * SCALE, 144 * SCALE
    x0, y0 = (SIZE[0] - w) // 2, (SIZE[1] - h) // 2
    window = img[y0 : y0 + h, x0 : x0 + w]
    return window[::SCALE, ::SCALE]


def test_sdl2_window_as_pyboys(tmp_path):
    reason = _missing()
    if reason:
        pytest.skip(reason)
    pytest.importorskip("pyboy")
    results = {}
    for n, which in enumerate(("pyboy", "emurust")):
        out = tmp_path / which
        out.mkdir()
        results[which] = _run_on_display(which, out, 90 + n + os.getpid() % 50 * 2)
    for which in ("pyboy", "emurust"):
        out = tmp_path / which
        for name in ("title", "started"):
            screen = np.load(out / f"{name}.npy")[:, :, :3]
            shown = _window_picture(out / f"{name}.png")
            # The window shows the screen, pixel for pixel (each one SCALE x SCALE).
            assert np.array_equal(shown, screen), f"{which} {name}: window differs from screen at {(shown != screen).any(axis=2).sum()} pixels"
        # Return (START) changed the picture: the key reached the game.
        assert not np.array_equal(np.load(out / "title.npy"), np.load(out / "started.npy")), which
    for name in ("title", "started"):
        assert np.array_equal(np.load(tmp_path / "pyboy" / f"{name}.npy"), np.load(tmp_path / "emurust" / f"{name}.npy")), name
    # Escape is QUIT: tick() returns False from then on, on both.
    assert results["pyboy"]["running"] == results["emurust"]["running"]
    assert results["emurust"]["running"][:60] == [True] * 60 and results["emurust"]["running"][-1] is False


DEBUG_CHILD = r"""
import json, subprocess, sys, time
which, rom, out = sys.argv[1], sys.argv[2], sys.argv[3]
if which == "pyboy":
    from pyboy import PyBoy
else:
    from emurust import PyBoy
pyboy = PyBoy(rom, window="null", debug=True, sound_emulated=False)
pyboy.set_emulation_speed(0)
pyboy.tick(200, True)
time.sleep(0.3)
pyboy.tick(1, True)
tree = subprocess.run(["xwininfo", "-root", "-tree"], capture_output=True, text=True, check=True).stdout
subprocess.run(["import", "-window", "root", f"{out}/debug.png"], check=True)
pyboy.stop(save=False)
json.dump(tree, open(f"{out}/tree.json", "w"))
"""


def _windows(tree: str):
    """{title: (width, height, x, y)} of the top-level windows in ``xwininfo -tree`` output."""
    import re

    found = {}
    for m in re.finditer(r'"([^"]+)": \("[^"]*" "[^"]*"\)\s+(\d+)x(\d+)\+(-?\d+)\+(-?\d+)', tree):
        found[m.group(1)] = tuple(int(v) for v in m.groups()[1:])
    return found


def test_debug_windows_as_pyboys(tmp_path):
    """``debug=True`` opens PyBoy's debug windows: the same titles, sizes and places, and the
    "Tile Data0" window shows the same tiles (the rest: docs/pyboy_api.md)."""
    reason = _missing() or (None if shutil.which("xwininfo") else "xwininfo is not installed (Debian: x11-utils)")
    if reason:
        pytest.skip(reason)
    pytest.importorskip("pyboy")
    from PIL import Image

    trees, shots = {}, {}
    for n, which in enumerate(("pyboy", "emurust")):
        out = tmp_path / which
        out.mkdir()
        display = 140 + n + os.getpid() % 50 * 2
        xvfb = subprocess.Popen(["Xvfb", f":{display}", "-screen", "0", "2600x1400x24", "-nolisten", "tcp"], stderr=subprocess.DEVNULL)
        try:
            time.sleep(1.0)
            env = dict(os.environ, DISPLAY=f":{display}", SDL_AUDIODRIVER="dummy")
            done = subprocess.run([sys.executable, "-c", DEBUG_CHILD, which, DODGE, str(out)], env=env, capture_output=True, text=True, timeout=300)
            assert done.returncode == 0, done.stderr[-3000:]
        finally:
            xvfb.terminate()
            xvfb.wait(timeout=10)
        trees[which] = _windows(json.loads((out / "tree.json").read_text()))
        shots[which] = np.asarray(Image.open(out / "debug.png").convert("RGB"))
    pyboy_windows, emurust_windows = trees["pyboy"], trees["emurust"]
    assert set(pyboy_windows) == set(emurust_windows)
    for title, geometry in pyboy_windows.items():
        if title != "Game Area [Mapping]":  # PyBoy sizes it to the game area's layout
            assert emurust_windows[title] == geometry, title
    w, h, x, y = pyboy_windows["Tile Data0"]
    assert np.array_equal(shots["pyboy"][y : y + h, x : x + w], shots["emurust"][y : y + h, x : x + w])
