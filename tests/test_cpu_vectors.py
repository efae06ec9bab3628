"""L1: the SM83 single-step vectors through the installed command line."""

import subprocess
import sys


def test_all_vectors_pass_via_cli(vectors_dir):
    p = subprocess.run(
        [sys.executable, "-m", "emurust", "verify", "cpu", "--vectors", str(vectors_dir)],
        capture_output=True,
        text=True,
    )
    last = p.stdout.strip().splitlines()[-1]
    passed, failed = [int(part.split()[0]) for part in last.split(",")]
    assert failed == 0, p.stdout[-3000:]
    assert passed >= 50000
    assert p.returncode == 0


def test_failures_are_reported_with_diffs(tmp_path, vectors_dir):
    import gzip
    import json

    cases = json.load(gzip.open(vectors_dir / "3c.json.gz"))[:3]  # INC A
    cases[1]["final"]["a"] = (cases[1]["final"]["a"] + 1) & 0xFF  # corrupt one expectation
    (tmp_path / "3c.json").write_text(json.dumps(cases))
    p = subprocess.run(
        [sys.executable, "-m", "emurust", "verify", "cpu", "--vectors", str(tmp_path), "--show-failures", "1"],
        capture_output=True,
        text=True,
    )
    assert p.returncode == 1
    assert p.stdout.strip().splitlines()[-1] == "2 passed, 1 failed"
    assert "register a: expected" in p.stdout


def test_missing_directory_is_an_error(tmp_path):
    p = subprocess.run(
        [sys.executable, "-m", "emurust", "verify", "cpu", "--vectors", str(tmp_path / "nope")],
        capture_output=True,
        text=True,
    )
    assert p.returncode == 2
    assert "not found" in p.stderr
