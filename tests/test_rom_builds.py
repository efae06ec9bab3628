"""The committed ROMs are exactly what their sources build to (SDCC), and the games shipped in
the Python package are the same bytes as games/*.gb."""

import filecmp
import shutil
import subprocess

import pytest

from conftest import ROOT

import emurust


@pytest.mark.parametrize("folder", ["roms", "games", "roms/wrappers"])
def test_sources_rebuild_the_committed_roms(tmp_path, folder):
    if shutil.which("sdcc") is None:
        pytest.fail("sdcc is not installed: tests/run.sh installs it (apt-get install sdcc)")
    top = folder.split("/")[0]  # roms/wrappers uses roms/fix_header.py
    shutil.copytree(ROOT / top, tmp_path / top, ignore=shutil.ignore_patterns("build"))
    work = tmp_path / folder
    committed = sorted(p.name for p in (ROOT / folder).glob("*.gb"))
    assert committed
    for name in committed:
        (work / name).unlink()
    p = subprocess.run(["bash", str(work / "build.sh")], cwd=work, capture_output=True, text=True)
    assert p.returncode == 0, p.stdout[-2000:] + p.stderr[-2000:]
    for name in committed:
        assert (work / name).exists(), f"{folder}/build.sh did not produce {name}"
        assert filecmp.cmp(work / name, ROOT / folder / name, shallow=False), f"{folder}/{name} differs from its sources' build"


@pytest.mark.parametrize("game", emurust.GAMES)
def test_packaged_games_match_the_repository(game):
    assert filecmp.cmp(emurust.game_rom_path(game), ROOT / "games" / f"{game}.gb", shallow=False)
