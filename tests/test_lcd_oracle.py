"""The LCD against PyBoy 2.8.1 as an oracle, below the whole-machine level:

- pixels: random VRAM/OAM/register contents written into a running PyBoy, every frame's
  screen and LCD state replayed through emurust's LCD (tools/lcd_pixel_dump.py);
- timing: PyBoy's own LCD object driven by random ticks, register and memory accesses, every
  observable compared after every operation (tools/lcd_timing_trace.py).

The data is made on the fly (tens of MiB) and replayed by the Rust tests of lcd/tests.rs.
"""

import os
import subprocess
import sys

import pytest

from conftest import LONG, ROOT



def _replay(test_name, env_var, path):
    env = dict(os.environ, **{env_var: str(path)})
    p = subprocess.run(
        ["cargo", "test", "-q", "--release", "-p", "emurust-core", "--lib", f"lcd::tests::{test_name}", "--", "--ignored", "--exact"],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
    )
    assert p.returncode == 0, p.stdout[-3000:] + p.stderr[-3000:]
    assert "1 passed" in p.stdout, p.stdout[-2000:]


@pytest.mark.parametrize("seed", [5, 8])
def test_pixels_match_pyboy(tmp_path, seed):
    dump = tmp_path / "lcd.bin"
    frames = 1000 if LONG else 200
    subprocess.run([sys.executable, str(ROOT / "tools" / "lcd_pixel_dump.py"), str(dump), str(frames), str(seed)], check=True, capture_output=True)
    _replay("pyboy_pixel_dump", "EMURUST_LCD_DUMP", dump)


@pytest.mark.parametrize("seed", [3, 4])
def test_timing_matches_pyboys_lcd(tmp_path, seed):
    trace = tmp_path / "lcd.txt"
    ops = 100_000 if LONG else 20_000
    subprocess.run([sys.executable, str(ROOT / "tools" / "lcd_timing_trace.py"), str(trace), str(ops), str(seed)], check=True, capture_output=True)
    _replay("pyboy_timing_trace", "EMURUST_LCD_TRACE", trace)
