"""The profile-guided release build (tools/build_pgo_wheel.sh, tools/pgo_train.py).

The training workload must keep up with the API it drives (a quick run with the installed build),
and the wheel the script builds must be the same emulator: the same screens, sound samples,
instruction counts and save states as the installed (plain) build, run by run, on our ROMs
(tools/ab_digests.py).
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

OUR_ROMS = sorted((ROOT / "roms").glob("*.gb")) + sorted((ROOT / "games").glob("*.gb"))


def _digests(pythonpath: str | None, out: Path) -> dict:
    """tools/ab_digests.py's digests of our ROMs (two sound modes and drawing patterns each,
    seeded buttons, 480 frames: drawn screens, samples, instruction counts, save states), with
    the build on `pythonpath` ahead of the installed one (None: the installed one)."""
    env = dict(os.environ)
    if pythonpath:
        env["PYTHONPATH"] = pythonpath
    r = subprocess.run([sys.executable, str(ROOT / "tools" / "ab_digests.py"), "run", "--groups", "ours",
                        "--frames-ours", "480", "--out", str(out)], capture_output=True, text=True, env=env,
                       timeout=900, cwd=ROOT)
    assert r.returncode == 0, (r.stdout + r.stderr)[-3000:]
    return json.loads(out.read_text())


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
    pgo = _digests(str(site), tmp_path / "pgo.json")
    plain = _digests(None, tmp_path / "plain.json")
    assert pgo["emurust"].startswith(str(site)), pgo["emurust"]
    assert not plain["emurust"].startswith(str(site))
    assert sorted(plain["runs"]) == sorted(pgo["runs"]) and len(plain["runs"]) == 2 * len(OUR_ROMS)
    r = subprocess.run([sys.executable, str(ROOT / "tools" / "ab_digests.py"), "compare", str(tmp_path / "plain.json"),
                        str(tmp_path / "pgo.json")], capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, f"the PGO wheel differs from the installed build: {r.stdout}"


def _llvm_profdata() -> bool:
    sysroot = subprocess.run(["rustc", "--print", "sysroot"], capture_output=True, text=True, check=True).stdout.strip()
    return any(Path(sysroot, "lib", "rustlib").glob("*/bin/llvm-profdata"))


def _module_available(name: str) -> bool:
    import importlib.util

    return importlib.util.find_spec(name) is not None
