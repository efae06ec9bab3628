"""The command line a new user meets: help texts, `emurust run`, errors, where the vectors are."""

import argparse
import gzip
import json
import os
import subprocess
import sys

import pytest

from conftest import ROOT
from emurust import cli, prompts
from emurust.verify import cpu as vcpu


def emurust(*args, cwd=None, env=None):
    return subprocess.run([sys.executable, "-m", "emurust", *args], capture_output=True, text=True, cwd=cwd, env=env)


def subparsers(parser):
    return next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction)).choices


def test_help_lists_every_command():
    p = emurust("--help")
    assert p.returncode == 0
    for command in ("run", "train", "play", "verify cpu", "verify rollout", "verify transfer", "verify report", "prompt", "bench"):
        assert f"\n  {command} " in p.stdout, command
    # User-facing text only: no reStructuredText markup, no notes to the developers.
    assert "``" not in p.stdout and ":func:" not in p.stdout and "lead" not in p.stdout.lower()


def test_every_option_of_run_verify_prompt_bench_has_help():
    commands = subparsers(cli.build_parser())
    parsers = {name: commands[name] for name in ("run", "prompt", "bench")}
    parsers.update({f"verify {name}": p for name, p in subparsers(commands["verify"]).items()})
    assert set(parsers) >= {"run", "prompt", "bench", "verify cpu", "verify rollout", "verify transfer", "verify report"}
    for name, parser in parsers.items():
        for action in parser._actions:
            if isinstance(action, argparse._HelpAction):
                continue
            assert action.help and action.help.strip(), f"emurust {name}: {action.option_strings or action.dest} has no help"


def test_run_writes_nothing_unless_asked(tmp_path):
    p = emurust("run", "--frames", "30", cwd=tmp_path)
    assert p.returncode == 0, p.stderr
    assert "frames/s" in p.stdout and "score" in p.stdout
    assert list(tmp_path.iterdir()) == []


def test_run_screenshot_and_embedded_game_name(tmp_path):
    shot = tmp_path / "out" / "last.png"
    # A missing directory is refused, not created.
    p = emurust("run", "snake", "--frames", "30", "--screenshot", str(shot), cwd=tmp_path)
    assert p.returncode == 2 and "does not exist" in p.stderr and not shot.parent.exists()
    shot.parent.mkdir()
    p = emurust("run", "snake", "--frames", "30", "--frame-skip", "7", "--screenshot", str(shot), cwd=tmp_path)
    assert p.returncode == 0, p.stderr
    assert "EMURUST SNAKE" in p.stdout and "ran 30 frames" in p.stdout
    assert shot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


@pytest.mark.parametrize(
    "args, message",
    [
        (["run", "nope.gb"], "emurust: error: ROM not found: nope.gb"),
        (["run", "--frames", "0"], "emurust: error: argument --frames: must be an integer from 1 to 1,000,000,000, got 0"),
        (["run", "notes.txt"], "emurust: error: not a Game Boy ROM (9 bytes, shorter than the cartridge header): notes.txt"),
        (["verify", "rollout", "nope.gb"], "emurust: error: ROM not found: nope.gb"),
        (["verify", "report", "nope.gb", "--out", "r"], "emurust: error: ROM not found: nope.gb"),
    ],
)
def test_bad_input_is_one_line_and_exit_status_2(tmp_path, args, message):
    (tmp_path / "notes.txt").write_text("not a ROM")
    p = emurust(*args, cwd=tmp_path)
    assert p.returncode == 2
    lines = p.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith(message), p.stderr
    assert list(tmp_path.iterdir()) == [tmp_path / "notes.txt"]


def test_vectors_found_in_the_repository_by_default(monkeypatch, tmp_path):
    monkeypatch.delenv("SM83_VECTORS", raising=False)
    monkeypatch.chdir(tmp_path)  # not from the current directory: from the source tree
    root = prompts.package_tree()
    if root is None:
        # An installed (not editable) package outside any source tree: found from inside one.
        monkeypatch.chdir(ROOT)
        root = ROOT
    assert vcpu.default_vectors_dir() == str(root / "tests" / "data" / "sm83")
    assert len(vcpu.vector_files(vcpu.default_vectors_dir())) == 500


def test_sm83_vectors_variable_overrides_the_default(monkeypatch, tmp_path, capsys):
    cases = json.load(gzip.open(ROOT / "tests" / "data" / "sm83" / "3c.json.gz"))[:3]
    cases[1]["final"]["a"] = (cases[1]["final"]["a"] + 1) & 0xFF
    (tmp_path / "3c.json").write_text(json.dumps(cases))
    monkeypatch.setenv("SM83_VECTORS", str(tmp_path))
    assert cli.main(["verify", "cpu"]) == 1
    assert capsys.readouterr().out.strip().splitlines()[-1] == "2 passed, 1 failed"

    monkeypatch.setenv("SM83_VECTORS", str(tmp_path / "nope"))
    assert cli.main(["verify", "cpu"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "not found" in err[0] and "SM83_VECTORS" in err[0]


def test_vectors_not_found_says_what_to_pass(monkeypatch, capsys):
    monkeypatch.delenv("SM83_VECTORS", raising=False)
    monkeypatch.setattr(prompts, "repo_root", lambda: None)  # as an installed package, outside the repository
    assert cli.main(["verify", "cpu"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "--vectors DIR" in err[0] and "SM83_VECTORS" in err[0]


def test_installed_package_outside_the_repository(tmp_path):
    """`pip install .` puts the package in site-packages; from a directory outside the repository
    `verify cpu` takes --vectors or SM83_VECTORS, and says which when it has neither."""
    outside = tmp_path / "elsewhere"
    outside.mkdir()
    env = {k: v for k, v in os.environ.items() if k != "SM83_VECTORS"}
    p = emurust_cli_in(outside, env, "verify", "cpu", "--show-failures", "1")
    if prompts.package_tree() is not None:
        # An editable install, or a virtual environment inside a clone, finds that source tree.
        assert p.returncode == 0 and p.stdout.strip().endswith("50000 passed, 0 failed")
    else:
        assert p.returncode == 2 and "--vectors DIR" in p.stderr and "SM83_VECTORS" in p.stderr
    cases = json.load(gzip.open(ROOT / "tests" / "data" / "sm83" / "00.json.gz"))[:5]
    (tmp_path / "00.json").write_text(json.dumps(cases))
    env["SM83_VECTORS"] = str(tmp_path)
    p = emurust_cli_in(outside, env, "verify", "cpu")
    assert p.returncode == 0 and p.stdout.strip() == "5 passed, 0 failed"
    p = emurust_cli_in(outside, {k: v for k, v in env.items() if k != "SM83_VECTORS"}, "verify", "cpu", "--vectors", str(tmp_path))
    assert p.returncode == 0 and p.stdout.strip() == "5 passed, 0 failed"


def emurust_cli_in(cwd, env, *args):
    return emurust(*args, cwd=cwd, env=env)


def test_the_cli_keeps_triton_unloaded_and_torch_still_trains():
    """`emurust` marks Triton absent (see emurust._triton); PyTorch must still run an optimiser
    step, the path that imports torch._dynamo and, with it, Triton."""
    code = (
        "import sys\n"
        "from emurust._triton import keep_triton_unloaded\n"
        "assert keep_triton_unloaded()\n"
        "import torch\n"
        "w = torch.nn.Parameter(torch.ones(3))\n"
        "opt = torch.optim.Adam([w], lr=0.1)\n"
        "(w * w).sum().backward(); opt.step()\n"
        "assert sys.modules['triton'] is None\n"
        "print(round(float(w.sum()), 3))\n"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "2.7"
    allowed = subprocess.run(
        [sys.executable, "-c", "from emurust._triton import keep_triton_unloaded as k; print(k())"],
        capture_output=True, text=True, env={**os.environ, "EMURUST_ALLOW_TRITON": "1"},
    )
    assert allowed.stdout.strip() == "False"


def test_type_stub_lists_everything_the_extension_module_exports():
    """python/emurust/_core.pyi names every public function, class, method and property of
    emurust._core (so type checkers and IDEs see the whole API)."""
    import ast

    from emurust import _core

    tree = ast.parse((ROOT / "python" / "emurust" / "_core.pyi").read_text())
    top, members = set(), {}
    for node in tree.body:
        if isinstance(node, ast.ClassDef):
            top.add(node.name)
            members[node.name] = {m.name for m in node.body if isinstance(m, ast.FunctionDef)} | {
                m.target.id for m in node.body if isinstance(m, ast.AnnAssign) and isinstance(m.target, ast.Name)
            }
        elif isinstance(node, ast.FunctionDef):
            top.add(node.name)
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            top.add(node.target.id)
    exported = {k for k in dir(_core) if not k.startswith("__")}
    assert exported - top == set()
    for cls in ("GameBoy", "Batch"):
        public = {k for k in dir(getattr(_core, cls)) if not k.startswith("_")}
        assert public - members[cls] == set(), cls
