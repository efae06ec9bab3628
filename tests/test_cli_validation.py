"""Bad command lines are refused before any work starts: one line `emurust: error: <reason>`,
exit status 2, nothing written. Every case here was once a traceback (exit status 1) or was
accepted silently (issue 26's adversarial campaign); each runs in milliseconds because the
checks come before training, emulation or PyBoy."""

import argparse
import ast
import os
import subprocess
import sys

import pytest

from conftest import ROOT
from emurust import cli
from emurust.command_line import UsageError, check_output_dir, check_output_file, float_range, int_range

DODGE = str(ROOT / "python" / "emurust" / "roms" / "dodge.gb")


@pytest.fixture
def read_only_dir(tmp_path):
    """A directory no file can be created in, for this user: a mode 0555 folder, or, for root
    (who writes anywhere the mode says no), /sys (sysfs refuses new files to everyone)."""
    if os.geteuid() != 0:
        d = tmp_path / "ro"
        d.mkdir()
        d.chmod(0o555)
        yield str(d)
        d.chmod(0o755)
    else:
        yield "/sys"


def _refused(capsys, argv, cwd, *expected):
    """`emurust ARGV` in `cwd` (in this process): exit status 2, one line of error holding every
    `expected` text, and nothing written in `cwd`."""
    before = sorted(os.listdir(cwd))
    rc = cli.main(argv)
    out, err = capsys.readouterr()
    lines = err.strip().splitlines()
    assert rc == 2, (argv, out, err)
    assert len(lines) == 1 and lines[0].startswith("emurust: error: "), err
    assert "Traceback" not in err
    for text in expected:
        assert text in lines[0], (text, lines[0])
    assert sorted(os.listdir(cwd)) == before, "a refused command wrote something"
    return lines[0]


NUMBERS = [
    # issue 26, "tracebacks instead of emurust: error:"
    (["train", "--envs", "100000000"], "--envs", "from 1 to 4,096"),
    (["train", "--threads", "100000"], "--threads", "from 1 to 1,024"),
    (["train", "--lr", "nan"], "--lr", "finite"),
    (["train", "--lr", "-1"], "--lr", "greater than 0"),
    (["train", "--seed", "-1"], "--seed", "from 0 to 99,999"),
    (["train", "--life-penalty", "nan"], "--life-penalty", "finite"),
    (["train", "--ent-coef", "inf"], "--ent-coef", "finite"),
    (["play", "--random", "--max-steps", "-1"], "--max-steps", "from 1"),
    (["verify", "transfer", "--seeds", "-1"], "--seeds", "from 0"),
    (["verify", "transfer", "--plant", "garbage"], "--plant", "unknown planted divergence"),
    # issue 26, "silently accepted"
    (["verify", "transfer", "--steps", "-1", "--seeds", "1"], "--steps", "from 1"),
    (["train", "--gamma", "2"], "--gamma", "at most 1"),
    (["train", "--clip", "nan"], "--clip", "finite"),
    (["play", "--random", "--scale", "0"], "--scale", "from 1 to 16"),
    # the same class of mistake, elsewhere
    (["train", "--steps", "0"], "--steps", "from 1"),
    (["train", "--batch-size", "ten"], "--batch-size", "expected an integer"),
    (["train", "--eval-episodes", "1"], "--eval-episodes", "from 2"),
    (["play", "--random", "--episodes", "0"], "--episodes", "from 1"),
    (["verify", "transfer", "--margin", "0"], "--margin", "greater than 0"),
    (["verify", "transfer", "--plant", "swap_actions=1,1"], "--plant", "two different"),
    (["verify", "transfer", "--plant", "reward_bias=nan"], "--plant", "finite"),
    (["verify", "report", DODGE, "--out", "r", "--seeds", "1,x"], "--seeds", "expected an integer"),
    (["verify", "rollout", DODGE, "--frames", "-5"], "--frames", "from 1"),
    (["verify", "make-states", DODGE, "--out", "o", "--frames", "0,600"], "--frames", "from 1"),
    (["run", "--frame-skip", "0"], "--frame-skip", "from 1"),
    (["bench", "--timeout", "nan"], "--timeout", "finite"),
    (["verify", "cpu", "--show-failures", "-1"], "--show-failures", "from 0"),
    (["verify", "pong-transfer", "--steps", "-1"], "--steps", "from 1"),
    (["verify", "pong-transfer", "--seeds", "1,x"], "--seeds", "expected an integer"),
    (["verify", "pong-transfer", "--margin", "nan"], "--margin", "finite"),
    (["verify", "pong-rollout", "--episodes", "0"], "--episodes", "from 1"),
]


@pytest.mark.parametrize("argv, option, reason", NUMBERS, ids=[" ".join(a) for a, _, _ in NUMBERS])
def test_bad_numbers_are_refused_in_one_line(tmp_path, monkeypatch, capsys, argv, option, reason):
    monkeypatch.chdir(tmp_path)
    line = _refused(capsys, argv, tmp_path, f"argument {option}:", reason)
    assert line.endswith("--help)")  # and where to read more


def test_unwritable_outputs_are_refused_before_the_work(tmp_path, monkeypatch, capsys, read_only_dir):
    monkeypatch.chdir(tmp_path)
    ro = read_only_dir
    (tmp_path / "folder.zip").mkdir()
    cases = [
        (["train", "--logdir", "/dev/null"], "--logdir", "not a directory"),
        (["train", "--logdir", os.path.join(ro, "runs")], "--logdir", "cannot write in"),
        # The model is checked before training, not lost after it.
        (["train", "--logdir", str(tmp_path / "runs"), "--save", os.path.join(ro, "model.zip")], "--save", "cannot write in"),
        (["train", "--logdir", str(tmp_path / "runs"), "--save", os.path.join(ro, "new", "model")], "--save", "cannot write in"),
        (["train", "--logdir", str(tmp_path / "runs"), "--save", str(tmp_path / "folder.zip")], "--save", "is a directory"),
        (["play", "--random", "--gif", os.path.join(ro, "a.gif")], "--gif", "cannot write in"),
        (["play", "--random", "--gif", "missing/a.gif"], "--gif", "does not exist"),
        (["run", "--screenshot", "missing/x.png"], "--screenshot", "does not exist"),
        (["run", "--screenshot", str(tmp_path)], "--screenshot", "is a directory"),
        (["verify", "transfer", "--json", os.path.join(ro, "t.json")], "--json", "cannot write in"),
        (["verify", "report", DODGE, "--out", os.path.join(ro, "report")], "--out", "cannot write in"),
        (["verify", "make-states", DODGE, "--out", os.path.join(ro, "states")], "--out", "cannot write in"),
        (["bench", "--json", "missing/b.json"], "--json", "does not exist"),
        (["prompt", "repair", "--out", os.path.join(ro, "p.md")], "--out", "cannot write in"),
        (["verify", "pong-rollout", "--json", os.path.join(ro, "r.json")], "--json", "cannot write in"),
        (["verify", "pong-transfer", "--json", "missing/t.json"], "--json", "does not exist"),
    ]
    for argv, option, reason in cases:
        _refused(capsys, argv, tmp_path, f"{option}:", reason)


def test_roms_that_are_not_roms_say_what_is_wrong(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "junk.zip").write_bytes(b"PK\x03\x04 not a ROM")
    (tmp_path / "empty.gb").write_bytes(b"")
    (tmp_path / "odd.gb").write_bytes(bytes(40_000))  # long enough, but no whole 16 KiB banks
    _refused(capsys, ["run", "/dev/null"], tmp_path, "not a regular file", "/dev/null")
    _refused(capsys, ["run", "empty.gb"], tmp_path, "ROM file is empty: empty.gb")
    _refused(capsys, ["run", "junk.zip"], tmp_path, "not a Game Boy ROM", "junk.zip")
    _refused(capsys, ["run", str(tmp_path)], tmp_path, "is a directory")
    _refused(capsys, ["verify", "make-states", "junk.zip", "--out", "o"], tmp_path, "not a Game Boy ROM")
    # PyBoy's own refusal, as one line, and no --out folder left behind.
    _refused(capsys, ["verify", "make-states", "odd.gb", "--out", "o"], tmp_path, "cannot make states of odd.gb")
    _refused(capsys, ["verify", "report", "junk.zip", "--out", "r"], tmp_path, "not a Game Boy ROM")


def test_console_entry_turns_errors_into_one_line_and_status_2(tmp_path):
    """The installed command (`python -m emurust`, the same `console()`), not only `main()`."""
    for argv in (["train", "--lr", "nan"], ["verify", "make-states", "nope.gb"], ["play", "--random", "--gif", "x/y.gif"]):
        p = subprocess.run([sys.executable, "-m", "emurust", *argv], capture_output=True, text=True, cwd=tmp_path)
        assert p.returncode == 2 and p.stdout == "", (argv, p.stdout, p.stderr)
        assert p.stderr.startswith("emurust: error: ") and p.stderr.count("\n") == 1, p.stderr
    assert list(tmp_path.iterdir()) == []


def test_module_entry_points_share_the_checks(tmp_path, capsys):
    from emurust import play, train

    assert train.main(["--gamma", "2"]) == 2
    assert play.main(["--random", "--scale", "0"]) == 2
    err = capsys.readouterr().err.splitlines()
    assert err[0].startswith("emurust: error: argument --gamma") and err[1].startswith("emurust: error: argument --scale")


def test_argument_types_and_path_checks(tmp_path):
    between = int_range(1, 10)
    assert between("10") == 10
    for bad in ("0", "11", "1.5", "", "nan"):
        with pytest.raises(argparse.ArgumentTypeError):
            between(bad)
    rate = float_range(0, 1, low_open=True)
    assert rate("1") == 1.0 and rate("1e-9") == 1e-9
    for bad in ("0", "-0.1", "1.01", "nan", "inf", "-inf", "x"):
        with pytest.raises(argparse.ArgumentTypeError):
            rate(bad)
    check_output_file(str(tmp_path / "new.txt"), "out")
    check_output_dir(str(tmp_path / "a" / "b" / "c"), "out")  # created later, with its parents
    assert list(tmp_path.iterdir()) == []  # the probes leave nothing behind
    (tmp_path / "file").write_text("x")
    with pytest.raises(UsageError, match="not a directory"):
        check_output_dir(str(tmp_path / "file" / "sub"), "out")
    with pytest.raises(UsageError, match="empty path"):
        check_output_file("", "out")


def test_a_transfer_check_that_trained_nothing_never_passes():
    from emurust.verify.transfer import Hyper, TransferResult, run_transfer, tost_paired

    with pytest.raises(ValueError, match="untrained policies prove nothing"):
        run_transfer("dodge", [1], Hyper(steps=0), episodes=2, margin=5.0, progress=lambda m: None)
    same = tost_paired([0.0, 0.0, 0.0], 5.0)
    assert same.equivalent
    res = TransferResult("dodge", [1], {"steps": 64}, 5.0, transfer=same, training=same)
    assert not res.equivalent  # no record of training: not shown equivalent
    res.trained_steps = {"emurust 1": 64, "pyboy 1": 0}
    assert not res.equivalent
    res.trained_steps = {"emurust 1": 64, "pyboy 1": 64}
    assert res.equivalent


# ---------------------------------------------------------------- help texts


def _parsers(parser, name="emurust"):
    yield name, parser
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for sub_name, sub in action.choices.items():
                yield from _parsers(sub, f"{name} {sub_name}")


def test_every_help_is_plain_words_and_every_option_has_help():
    parsers = dict(_parsers(cli.build_parser()))
    assert {"emurust train", "emurust play", "emurust bench", "emurust run", "emurust prompt", "emurust verify cpu",
            "emurust verify rollout", "emurust verify make-states", "emurust verify transfer",
            "emurust verify report"} <= set(parsers)
    for name, parser in parsers.items():
        text = parser.format_help()
        for markup in ("``", ":mod:", ":func:", ":class:", ":data:", ":meth:", "`"):
            assert markup not in text, f"{name} --help shows {markup!r}"
        for action in parser._actions:
            if isinstance(action, (argparse._HelpAction, argparse._VersionAction, argparse._SubParsersAction)):
                continue
            assert action.help and action.help.strip(), f"{name}: {action.option_strings or action.dest} has no help"


# ---------------------------------------------------------------- no private cross-imports


def test_commands_borrow_no_private_helpers_from_each_other():
    """The commands (cli, train, play, bench, verify transfer/report) share their helpers through
    modules of their own (command_line, _stats, policies), never through another command's
    private names."""
    commands = {"cli", "train", "play", "bench", "transfer", "report"}
    package = ROOT / "python" / "emurust"
    for path in sorted(package.rglob("*.py")):
        tree = ast.parse(path.read_text())
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom) and (node.module or "").split(".")[-1] in commands:
                private = [a.name for a in node.names if a.name.startswith("_") and not a.name.endswith("__")]
                assert not private, f"{path.name} imports {private} from {node.module}"


def test_a_closed_output_pipe_ends_quietly(tmp_path):
    """`emurust ... | head`: the reader leaves early; no BrokenPipeError traceback."""
    p = subprocess.Popen([sys.executable, "-m", "emurust", "prompt", "--list"], stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, text=True, cwd=tmp_path)
    p.stdout.close()  # long before the child has imported emurust and printed anything
    err = p.stderr.read()
    assert p.wait(timeout=60) == 1 and err == "", err


@pytest.mark.parametrize("flag", ["--png", "--repair-prompt"])
def test_rollout_checks_its_divergence_outputs_before_running(flag, tmp_path, capsys):
    """--png and --repair-prompt are written only on a divergence: a folder that is not there is
    refused before the rollout, not found out after it."""
    from emurust.cli import main

    rc = main(["verify", "rollout", str(ROOT / "games" / "dodge.gb"), "--frames", "5", flag, str(tmp_path / "no" / "x.out")])
    err = capsys.readouterr().err
    assert rc == 2 and "emurust: error:" in err and "does not exist" in err, err
