"""The profile-guided release build (tools/build_pgo_wheel.sh, tools/pgo_train.py).

The training workload must keep up with the API it drives (a quick run with the installed build),
and the wheel the script builds must be the same emulator: the same screens, sound samples, RAM
and save states as the installed (plain) build, run by run, on our ROMs.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest


ROOT = Path(__file__).resolve().parent.parent

# Runs in a subprocess, once with the installed build and once with the PGO wheel ahead of it on
# PYTHONPATH: one digest per ROM and sound mode over every drawn screen, every frame's samples,
# work RAM and the final save state.
DIGEST = r"""
import hashlib, io, json, sys
import numpy as np
import emurust
out = {"module": emurust._core.__file__, "runs": {}}
rng = np.random.default_rng(7)
buttons = ("a", "b", "start", "select", "up", "down", "left", "right")
for rom in sys.argv[1:]:
    for sound in (True, False):
        h = hashlib.sha256()
        with emurust.PyBoy(rom, window="null", sound_emulated=sound) as pb:
            for frame in range(480):
                if frame % 16 == 0:
                    b = buttons[int(rng.integers(len(buttons)))]
                    pb.button(b, 4)
                render = frame % 8 == 7
                pb.tick(1, render, sound)
                if render:
                    h.update(np.asarray(pb.screen.ndarray).tobytes())
                if sound:
                    h.update(np.asarray(pb.sound.ndarray).tobytes())
            h.update(bytes(pb.memory[0xC000:0xE000]))
            state = io.BytesIO()
            pb.save_state(state)
            h.update(state.getvalue())
        out["runs"][f"{rom}:{sound}"] = h.hexdigest()
print(json.dumps(out))
"""

DIGEST_ROMS = ("games/dodge.gb", "games/runner.gb", "roms/music.gb", "roms/scenes.gb", "roms/cpu_instrs.gb",
               "roms/cgb.gb", "roms/mbc3.gb")


def _digests(pythonpath: str | None, tmp: Path) -> dict:
    """The digests with the build on `pythonpath` (None: the installed one), of fresh copies of
    the ROMs in `tmp` (the facade saves cartridge RAM beside the ROM)."""
    roms = []
    for i, rel in enumerate(DIGEST_ROMS):
        d = tmp / f"{'pgo' if pythonpath else 'plain'}{i}"
        d.mkdir()
        roms.append(shutil.copy(ROOT / rel, d / Path(rel).name))
    env = dict(os.environ)
    if pythonpath:
        env["PYTHONPATH"] = pythonpath
    r = subprocess.run([sys.executable, "-c", DIGEST, *roms], capture_output=True, text=True, env=env,
                       timeout=600, cwd=tmp)
    assert r.returncode == 0, r.stderr[-3000:]
    return json.loads(r.stdout.strip().splitlines()[-1])


def test_training_workload_runs_on_the_installed_build():
    r = subprocess.run([sys.executable, str(ROOT / "tools" / "pgo_train.py"), "--quick"], capture_output=True,
                       text=True, timeout=600, cwd=ROOT)
    assert r.returncode == 0, r.stderr[-3000:]
    parts = json.loads(r.stdout.strip().splitlines()[-1])["parts"]
    # Every one of our ROMs and games through the facade, and the three batched environments.
    roms = {p.name for p in (ROOT / "roms").glob("*.gb")} | {p.name for p in (ROOT / "games").glob("*.gb")}
    assert {k.split(":", 1)[1] for k in parts if k.startswith("pyboy:")} == roms
    assert {"batch", "pokered_v2_batch", "pong"} <= parts.keys()
    assert all(v > 0 for v in parts.values()), parts


def test_pgo_wheel_is_the_same_emulator(tmp_path):
    """Builds the PGO wheel end to end (about 3 minutes on 2 cores) and compares it with the
    installed build."""
    for tool in ("rustc", "cargo"):
        assert shutil.which(tool), f"{tool} is needed to build the wheel"
    assert shutil.which("maturin") or _module_available("maturin"), "maturin is needed ('.[test]' installs it)"
    if not _llvm_profdata():
        # The script adds the component itself; here only to tell a missing download from a failure.
        subprocess.run(["rustup", "component", "add", "llvm-tools"], capture_output=True, timeout=600)
        if not _llvm_profdata():
            pytest.skip("llvm-profdata is missing and 'rustup component add llvm-tools' could not install it")
    out = tmp_path / "wheels"
    env = dict(os.environ, PYTHON=sys.executable)
    r = subprocess.run(["bash", str(ROOT / "tools" / "build_pgo_wheel.sh"), str(out)], capture_output=True,
                       text=True, env=env, timeout=1800, cwd=ROOT)
    assert r.returncode == 0, (r.stdout + r.stderr)[-4000:]
    wheels = list(out.glob("emurust-*.whl"))
    assert len(wheels) == 1, r.stdout
    site = tmp_path / "site"
    subprocess.run([sys.executable, "-m", "pip", "install", "-q", "--no-deps", "--target", str(site), str(wheels[0])],
                   check=True, timeout=300)
    pgo = _digests(str(site), tmp_path)
    plain = _digests(None, tmp_path)
    assert pgo["module"].startswith(str(site)), pgo["module"]
    assert not plain["module"].startswith(str(site))
    assert len(plain["runs"]) == len(pgo["runs"]) == 2 * len(DIGEST_ROMS)
    # (Keyed by the ROM's name and sound mode: the copies' folders differ.)
    pgo_runs = {Path(k).name: v for k, v in pgo["runs"].items()}
    plain_runs = {Path(k).name: v for k, v in plain["runs"].items()}
    differ = [k for k in plain_runs if plain_runs[k] != pgo_runs.get(k)]
    assert not differ, f"the PGO wheel differs from the installed build on {differ}"


def _llvm_profdata() -> bool:
    sysroot = subprocess.run(["rustc", "--print", "sysroot"], capture_output=True, text=True, check=True).stdout.strip()
    return any(Path(sysroot, "lib", "rustlib").glob("*/bin/llvm-profdata"))


def _module_available(name: str) -> bool:
    import importlib.util

    return importlib.util.find_spec(name) is not None
