"""The recipe's prompt templates: shipping, rendering, errors, the Game Boy examples."""

import os
import re

import pytest

from conftest import ROOT
from emurust import prompts
from emurust.cli import main

SRC_TEMPLATES = ROOT / "python" / "emurust" / "prompt_templates"
REPO_PROMPTS = ROOT / "prompts"
TEMPLATES = {"translate", "l1-tests", "l2-tests", "repair", "performance"}
EXAMPLES = {"translate-cpu", "translate-bus", "translate-timer", "translate-ppu", "translate-cartridge", "translate-batch"}
#: The recipe's second environment: PufferLib's Pong (its pong.h is pasted from EMURUST_REFERENCES).
PONG_EXAMPLES = {"translate-pong", "l1-pong", "l2-pong"}


def _files(d):
    """Files under `d`, following directory links (prompts/examples is one)."""
    out = []
    for base, dirs, names in os.walk(d, followlinks=True):
        dirs[:] = [x for x in dirs if x != "__pycache__"]
        out += [os.path.relpath(os.path.join(base, n), d).replace(os.sep, "/") for n in names]
    return sorted(out)


def test_repo_prompts_dir_links_to_the_package_templates():
    """One source: prompts/ (the recipe as the repository shows it) links every template to the
    packaged copy in python/emurust/prompt_templates/, beside its own README."""
    src = _files(SRC_TEMPLATES)
    repo = [f for f in _files(REPO_PROMPTS) if f != "README.md"]
    assert src == repo, "prompts/ must link every file of python/emurust/prompt_templates/"
    for f in repo:
        assert (REPO_PROMPTS / f).resolve() == (SRC_TEMPLATES / f).resolve(), f
    links = [p for p in REPO_PROMPTS.iterdir() if p.name != "README.md"]
    assert links and all(p.is_symlink() for p in links), "prompts/ holds copies instead of links"
    assert not (REPO_PROMPTS / "README.md").is_symlink()


def test_installed_package_ships_the_templates():
    assert _files(prompts.TEMPLATE_DIR) == _files(SRC_TEMPLATES)
    assert set(prompts.kinds()) == TEMPLATES | EXAMPLES | PONG_EXAMPLES


def test_list(capsys):
    assert main(["prompt", "--list"]) == 0
    out = capsys.readouterr().out
    for k in TEMPLATES | EXAMPLES | PONG_EXAMPLES:
        assert re.search(rf"^\s+{re.escape(k)}\s", out, re.M), k


def test_placeholder_syntax():
    assert prompts.placeholders("{{a}} {{b|x y}} {{c|}} {{a}} {{ d }} {{9x}} {x}") == [("a", None), ("b", "x y"), ("c", "")]
    text = prompts.render_text("<{{a}}|{{b|def}}|{{c|}}>", {"a": "{{b}} stays"})
    assert text == "<{{b}} stays|def|>"  # values are not rescanned; defaults fill the rest
    with pytest.raises(prompts.MissingPlaceholders) as e:
        prompts.render_text("{{x}} {{y}} {{z|ok}} {{x}}", {"y": "1"}, "k")
    assert e.value.names == ["x"]


def test_render_generic_translate_from_the_command_line(tmp_path, capsys):
    src = tmp_path / "physics.py"
    src.write_text("def step(state):\n    return state + 1\n")
    out = tmp_path / "prompt.md"
    args = ["prompt", "translate", "--out", str(out), "--from-file", f"source={src}"]
    for k, v in {
        "module_name": "the physics step",
        "reference_name": "MyEnv 1.0",
        "project": "fastenv",
        "source_summary": "integrates one step",
        "target_file": "src/physics.rs",
        "contract": "pub fn step(&mut self)",
        "state": "position, velocity",
        "test_command": "cargo test",
    }.items():
        args += ["--set", f"{k}={v}"]
    assert main(args) == 0
    text = out.read_text()
    assert "# Translate one module: the physics step" in text
    assert "def step(state):\n    return state + 1" in text
    assert f"`{src}` (2 lines)" in text and "1 file, 2 lines" in text  # derived source_files/source_size
    assert "`Result<_, the crate's error type>`" in text  # default
    assert not prompts.PLACEHOLDER.search(text)
    assert "<!--" not in text  # the header comment is not part of the prompt


def test_missing_placeholders_are_all_listed(capsys):
    assert main(["prompt", "translate", "--set", "project=x"]) == 2
    err = capsys.readouterr().err
    for name in ("module_name", "reference_name", "source", "contract", "state", "test_command"):
        assert name in err
    assert "project," not in err


def test_unknown_kind_and_bad_arguments(capsys):
    assert main(["prompt", "no-such-kind"]) == 2
    err = capsys.readouterr().err
    assert "unknown prompt kind 'no-such-kind'" in err and "translate-cpu" in err
    assert main(["prompt", "translate", "--set", "novalue"]) == 2
    assert "NAME=VALUE" in capsys.readouterr().err
    assert main(["prompt", "translate", "--from-file", "source=/no/such/file"]) == 2
    assert "cannot read /no/such/file" in capsys.readouterr().err


def test_placeholders_flag(capsys):
    assert main(["prompt", "repair", "--placeholders"]) == 0
    out = capsys.readouterr().out
    assert re.search(r"frame\s+REQUIRED", out) and re.search(r"evidence\s+optional", out)
    assert main(["prompt", "translate-timer", "--placeholders"]) == 0
    out = capsys.readouterr().out
    assert "REQUIRED" not in out


@pytest.mark.parametrize("kind", sorted(EXAMPLES))
def test_examples_render_completely(kind):
    text = prompts.render(kind)
    assert not prompts.PLACEHOLDER.search(text.split("## The reference behaviour")[0])
    assert "PyBoy 2.8.1" in text and "## The interface contract" in text
    assert "pub fn" in text or "def " in text  # real signatures
    assert "Clean room" in text or kind == "translate-batch"  # the batch has no PyBoy source to keep clean of


def test_game_boy_examples_keep_the_game_boy_defaults():
    """The placeholders added for Pong default to the Game Boy wording."""
    timer = prompts.render("translate-timer")
    assert "Lazy catch-up instead of per-tick polling" in timer
    assert "one cycle before, at, and after" in prompts.render("l1-tests", {
        "module_name": "m", "target_file": "f", "contract": "c", "reference": "r", "test_command": "t"})


@pytest.mark.parametrize("kind", sorted(PONG_EXAMPLES))
def test_pong_examples_render_completely(kind):
    from emurust.verify import references

    if not (references.references_dir() / "puffer-pong" / "pong.h").is_file():
        if references.reference_required():
            pytest.fail("puffer-pong/pong.h not found: set EMURUST_REFERENCES")
        pytest.skip("PufferLib's pong.h not found (EMURUST_REFERENCES)")
    text = prompts.render(kind)
    assert not prompts.PLACEHOLDER.search(text.split("## The reference")[0])
    assert "Pong" in text and "PyBoy" not in text
    if kind != "l2-pong":
        assert "### `puffer-pong/pong.h`" in text and "void step(Pong* env)" in text
    if kind == "translate-pong":
        assert "stepped, not clocked" in text and "Lazy catch-up" not in text


def test_examples_paste_the_reference_component():
    text = prompts.render("translate-timer")
    assert "### `pyboy/core/timer.py`" in text
    assert "pyboy/core/timer.py` (" in text  # derived file list with line count
    assert "class Timer" in text  # the pasted source
    cpu = prompts.render("translate-cpu")
    assert "pyboy/core/cpu.py" in cpu and "pyboy/core/opcodes.py" in cpu and "2 files" in cpu
    cart = prompts.render("translate-cartridge")
    assert all(f"pyboy/core/cartridge/{m}.py" in cart for m in ("mbc1", "mbc2", "mbc3", "mbc5", "rtc"))
    assert "pyboy/core/lcd.py" in prompts.render("translate-ppu")
    assert "pyboy/core/mb.py" in prompts.render("translate-bus")
    assert "class ReferenceEnv" in prompts.render("translate-batch")


def test_user_values_override_example_values(tmp_path):
    f = tmp_path / "x.py"
    f.write_text("print('mine')\n")
    text = prompts.render("translate-timer", {"module_name": "MY TIMER"}, {"source": [str(f), str(f)]})
    assert "# Translate one module: MY TIMER" in text
    assert "print('mine')" in text and "class Timer" not in text
    assert "2 files, 2 lines" in text


def test_disassembler_lengths_match_pyboys_opcode_table():
    from emurust.verify.disasm import disassemble

    src = (prompts.pyboy_dir() / "core" / "opcodes.py").read_text()
    i = src.index("OPCODE_LENGTHS")
    lengths = [int(x) for x in re.findall(r"\d+", src[src.index("[", i) : src.index("])", i)])]
    illegal = {0xD3, 0xDB, 0xDD, 0xE3, 0xE4, 0xEB, 0xEC, 0xED, 0xF4, 0xFC, 0xFD}
    for op in range(256):
        if op == 0xCB or op in illegal:
            continue
        assert disassemble(bytes([op, 0x12, 0x34]))[0] == lengths[op], hex(op)
    assert disassemble(b"\x18\xfe", 0x150) == (2, "JR $0150")
    assert disassemble(b"\xcb\x7c") == (2, "BIT 7,H")
    assert disassemble(b"\xe0\x05") == (2, "LDH ($FF05),A")


@pytest.mark.parametrize(
    "kind, sources",
    [
        ("translate-cpu", ["cpu.rs"]),
        ("translate-bus", ["gameboy.rs"]),
        ("translate-timer", ["timer.rs"]),
        ("translate-ppu", ["lcd/mod.rs"]),
        ("translate-cartridge", ["cartridge.rs"]),
    ],
)
def test_example_contracts_name_real_functions(kind, sources):
    """Every `pub fn` an example's contract names exists in our source (catches drift)."""
    contract = prompts.load(kind).values["contract"]
    names = set(re.findall(r"pub fn (\w+)", contract))
    assert names
    code = "".join((ROOT / "crates" / "emurust-core" / "src" / s).read_text() for s in sources)
    missing = sorted(n for n in names if not re.search(rf"pub fn {n}\b", code))
    assert not missing, f"{kind}: contract names functions the source lacks: {missing}"


def test_batch_example_contract_names_real_methods():
    batch = ROOT / "crates" / "emurust-py" / "src" / "batch.rs"
    code = batch.read_text()
    contract = prompts.load("translate-batch").values["contract"]
    missing = sorted(n for n in set(re.findall(r"def (\w+)", contract)) - {"__init__"} if not re.search(rf"fn {n}\b", code))
    assert not missing, missing
