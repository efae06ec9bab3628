"""tools/pyboy_suite.py and emurust.pyboy_suite_plugin: PyBoy's own test suite on PyBoy and emurust.

The table logic, the ROM layout and the ``pyboy`` shim are tested on their own (always). A run of
a few of PyBoy's test files needs a checkout of PyBoy's repository: ``EMURUST_PYBOY_TESTS=DIR``
(default: ``pyboy-upstream`` beside this checkout); without one that test skips, saying so.
"""

from __future__ import annotations

import json
import os
import pathlib
import subprocess
import sys

import pytest

ROOT = pathlib.Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tools"))

import pyboy_suite  # noqa: E402


def _report(results):
    return {"results": {k: {"outcome": o, "message": m} for k, (o, m) in results.items()}}


def test_compare_counts_and_differences():
    pyboy = _report(
        {
            "tests/test_a.py::test_same": ("passed", ""),
            "tests/test_a.py::test_only_pyboy": ("passed", ""),
            "tests/test_a.py::test_only_emurust": ("failed", "AssertionError: x"),
            "tests/test_a.py::test_both_fail": ("failed", "E1"),
            "tests/test_a.py::test_xfail": ("xfailed", "known"),
            "tests/test_a.py::test_skipped": ("skipped", "ROM unavailable: x.gb"),
            "tests/test_b.py::test_gone": ("passed", ""),
            "tests/test_c.py::test_skip_all": ("skipped", "Cannot access secrets"),
        }
    )
    emurust = _report(
        {
            "tests/test_a.py::test_same": ("passed", ""),
            "tests/test_a.py::test_only_pyboy": ("failed", "NotImplementedError: y"),
            "tests/test_a.py::test_only_emurust": ("passed", ""),
            "tests/test_a.py::test_both_fail": ("error", "E2"),
            "tests/test_a.py::test_xfail": ("xfailed", "known"),
            "tests/test_a.py::test_skipped": ("skipped", "ROM unavailable: x.gb"),
            "tests/test_b.py": ("collection error", "ModuleNotFoundError: pyboy.core"),
            "tests/test_c.py::test_skip_all": ("skipped", "Cannot access secrets"),
        }
    )
    result = pyboy_suite.compare(pyboy, emurust, ["test_a.py", "test_b.py", "test_c.py"], ["test_lcd.py"])
    rows = {r["file"]: r for r in result["rows"]}
    assert rows["test_a.py"] == {"file": "test_a.py", "run": 5, "pyboy_pass": 3, "emurust_pass": 3}
    assert rows["test_b.py"] == {"file": "test_b.py", "run": 1, "pyboy_pass": 1, "emurust_pass": 0}
    assert rows["test_c.py"]["run"] == 0
    assert result["totals"] == {"run": 6, "pyboy_pass": 4, "emurust_pass": 3}
    diffs = {d["test"]: d for d in result["differences"]}
    assert set(diffs) == {"tests/test_a.py::test_only_pyboy", "tests/test_a.py::test_only_emurust", "tests/test_b.py::test_gone"}
    assert diffs["tests/test_a.py::test_only_pyboy"]["message"] == "NotImplementedError: y"  # the failing side's
    assert diffs["tests/test_a.py::test_only_emurust"]["message"] == "AssertionError: x"
    assert diffs["tests/test_b.py::test_gone"] == {
        "test": "tests/test_b.py::test_gone",
        "pyboy": "passed",
        "emurust": "not collected",
        "message": "ModuleNotFoundError: pyboy.core",
    }
    assert result["only_pyboy_passes"] == 2 and result["only_emurust_passes"] == 1
    assert result["rom_unavailable"] == {"tests/test_a.py::test_skipped": "ROM unavailable: x.gb"}
    assert result["skipped_in_both"] == {"ROM unavailable: missing from the corpus": 1, "Cannot access secrets": 1}
    assert list(result["out_of_scope"]) == ["test_lcd.py"]

    md = pyboy_suite.to_markdown(result, "header")
    assert "| test_a.py | 5 | 3 | 3 |" in md
    assert "| **total** | **6** | **4** | **3** |" in md
    assert "test_c.py" in md.split("ROMs unavailable here")[1]  # listed as skipped whole
    assert "| `tests/test_a.py::test_only_pyboy` | passed | failed | NotImplementedError: y |" in md
    assert "Tests that pass on PyBoy and not on emurust: 2; on emurust and not on PyBoy: 1." in md


def test_markdown_escapes_pipes():
    result = pyboy_suite.compare(
        _report({"tests/t.py::x": ("passed", "")}), _report({"tests/t.py::x": ("failed", "a | b\nc")}), ["t.py"], []
    )
    assert "a \\| b c" in pyboy_suite.to_markdown(result)


def test_rom_layout_maps_the_corpus_names(tmp_path):
    corpus = tmp_path / "corpus"
    (corpus / "mooneye").mkdir(parents=True)
    (corpus / "acid2").mkdir()
    (corpus / "samesuite").mkdir()
    for name in ("mooneye/timer_tim00.gb", "mooneye/ppu_intr_2_0_timing.gb", "acid2/dmg-acid2.gb", "samesuite/apu_channel_1_channel_1_align.gb"):
        (corpus / name).write_bytes(b"rom")
    tests = tmp_path / "tests"
    tests.mkdir()
    (tests / "test_mooneye.py").write_text('X = [(True, "acceptance/timer/tim00.gb"), (True, "acceptance/ppu/intr_2_0_timing.gb"), "acceptance/missing.gb"]')
    (tests / "test_samesuite.py").write_text('Y = ("cgb", "apu/channel_1/channel_1_align.gb")')
    linked = pyboy_suite.lay_out_roms(tmp_path / "test_roms", tests, corpus)
    assert sorted(linked) == [
        "SameSuite/apu/channel_1/channel_1_align.gb",
        "dmg_acid2.gb",
        "mooneye/acceptance/ppu/intr_2_0_timing.gb",
        "mooneye/acceptance/timer/tim00.gb",
    ]
    assert (tmp_path / "test_roms" / "mooneye" / "acceptance" / "timer" / "tim00.gb").read_bytes() == b"rom"
    assert not (tmp_path / "test_roms" / "mooneye" / "acceptance" / "missing.gb").exists()


def test_out_of_scope_files_are_not_run(tmp_path):
    for name in ("test_lcd.py", "test_basics.py", "test_states.py"):
        (tmp_path / name).write_text("")
    assert pyboy_suite.select_files(tmp_path, []) == (["test_basics.py"], ["test_lcd.py", "test_states.py"])
    with pytest.raises(SystemExit):
        pyboy_suite.select_files(tmp_path, ["test_nope.py"])


def test_shim_resolves_pyboy_names_to_emurust():
    pytest.importorskip("pyboy")
    code = """
import sys
from emurust.pyboy_suite_plugin import install_emurust_shim
install_emurust_shim()
import emurust, emurust.pyboy_api.utils as eu
from pyboy import PyBoy
from pyboy.utils import WindowEvent, PyBoyAssertException, IntIOWrapper
from pyboy.api.tile import Tile
from pyboy.pyboy import DMG_PALETTES
import pyboy.plugins.screen_recorder as rec
assert PyBoy is emurust.PyBoy and WindowEvent is eu.WindowEvent and PyBoyAssertException is eu.PyBoyAssertException
from pyboy import __main__ as main
assert hasattr(main, "parser")  # PyBoy's own command line
from pyboy.core.serial import SerialSharedMemoryBuffer  # passed through (test_serial.py)
try:
    import pyboy.core.lcd
except ModuleNotFoundError as e:
    assert "PyBoy-internal" in str(e)
else:
    raise AssertionError("pyboy.core resolved")
import pyboy, importlib.util
assert pyboy.__spec__.origin and "site-packages" in pyboy.__spec__.origin or pyboy.__spec__.origin  # boot ROM folder
print("ok")
"""
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, timeout=120)
    assert out.returncode == 0 and out.stdout.strip().endswith("ok"), out.stderr[-2000:]


def _pyboy_checkout():
    path = pathlib.Path(os.environ.get("EMURUST_PYBOY_TESTS") or ROOT.parent / "pyboy-upstream")
    return path if (path / "tests" / "conftest.py").is_file() else None


def test_subset_of_pyboys_suite_passes_on_emurust(tmp_path):
    """A few of PyBoy's own test files, run by the harness on both: everything PyBoy passes,
    emurust passes."""
    pytest.importorskip("pyboy")
    checkout = _pyboy_checkout()
    if checkout is None:
        pytest.skip("no PyBoy test checkout: set EMURUST_PYBOY_TESTS to a clone of PyBoy's repository")
    for module in ("filelock", "git", "pytest_lazy_fixtures"):
        pytest.importorskip(module, reason=f"PyBoy's conftest imports {module} (pip install '.[pyboy-suite]')")
    files = ["test_utils.py", "test_memoryview.py", "test_rtc_lock.py", "test_palette_cycling.py", "test_external_api.py", "test_serial.py"]
    cmd = [sys.executable, str(ROOT / "tools" / "pyboy_suite.py"), "--pyboy-tests", str(checkout), "--workdir", str(tmp_path / "w"), "--out", str(tmp_path / "out"), *files]
    done = subprocess.run(cmd, capture_output=True, text=True, cwd=ROOT, timeout=600)
    result = json.loads((tmp_path / "out" / "pyboy_suite.json").read_text())
    assert result["totals"]["run"] >= 20, done.stdout[-3000:]
    assert result["only_pyboy_passes"] == 0, done.stdout[-3000:]
    assert done.returncode == 0
