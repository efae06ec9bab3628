"""The repair prompt, the L2 interaction checks and the L1-L3 report command."""

import json
import os
import stat

import pytest

import emurust.verify.report as report
from conftest import ROOT
from emurust import prompts
from emurust.cli import main
from emurust.verify import interactions
from emurust.verify.compare import Divergence
from emurust.verify.rollout import RolloutResult, rollout

TIMER_ROM = str(ROOT / "roms" / "timer.gb")


def _corrupt(addr, frame_at, xor=0x5A):
    def hook(gb, frame):
        if frame == frame_at:
            gb.write(addr, gb.read(addr) ^ xor)

    return hook


# ---------------------------------------------------------------- repair prompt


def test_repair_prompt_from_a_forced_wram_divergence(tmp_path):
    r = rollout(TIMER_ROM, 120, before_frame=_corrupt(0xC123, 90))
    assert r.divergence is not None and r.divergence.frame == 90
    path = tmp_path / "repair.md"
    text = prompts.write_repair_prompt(str(path), TIMER_ROM, r)
    assert path.read_text() == text
    assert "- Step (frame) of the first difference: 90" in text
    assert "- Identical steps before it: 89" in text
    assert "- Component: WRAM" in text and "0xc123" in text
    assert f"- emurust: {r.divergence.emurust:#04x}" in text and f"- PyBoy 2.8.1: {r.divergence.pyboy:#04x}" in text
    # the trace, disassembled from the ROM (timer.gb is 32 KiB: every PC is known)
    trace_lines = [ln for ln in text.splitlines() if ln.startswith("    ") and ln[4:8] in {f"{pc:04X}" for pc in r.divergence.trace}]
    assert len(trace_lines) == 32
    assert any("HALT" in ln for ln in trace_lines)
    assert "## The module most likely at fault" in text and "cpu.rs" in text
    assert "Reproduce" in text and "Minimise" in text and "Keep everything green" in text
    assert "PASSED" in text  # serial output as evidence
    assert os.path.isfile(str(path) + ".png")
    assert not prompts.PLACEHOLDER.search(text)


def test_repair_prompt_points_at_the_timer_for_a_timer_register(tmp_path):
    r = rollout(TIMER_ROM, 100, before_frame=_corrupt(0xFF06, 80, 0xFF))
    d = r.divergence
    assert d is not None and d.component == "IO" and d.where == "0xff06"
    text = prompts.write_repair_prompt(str(tmp_path / "p.md"), TIMER_ROM, r, reproduce="emurust verify rollout timer.gb --frames 80 --seed 0")
    assert "**crates/emurust-core/src/timer.rs**" in text
    assert "`emurust verify rollout timer.gb --frames 80 --seed 0`" in text


def test_repair_prompt_without_divergence_is_an_error(tmp_path):
    with pytest.raises(prompts.PromptError):
        prompts.write_repair_prompt(str(tmp_path / "p.md"), TIMER_ROM, RolloutResult(10, None, b"", b""))


@pytest.mark.parametrize(
    "component, where, module",
    [
        ("IO", "0xff41", "lcd/mod.rs"),
        ("IO", "0xff46", "gameboy.rs (OAM DMA)"),
        ("IO", "0xff12", "apu.rs"),
        ("IO", "0xff00", "joypad.rs"),
        ("IO", "0xff01", "serial.rs"),
        ("IO", "0xff0f", "gameboy.rs (scheduler"),
        ("VRAM", "0x8010", "lcd/mod.rs"),
        ("OAM", "0xfe10", "lcd/mod.rs"),
        ("screen", "pixel (x=1, y=2) of 5 differing", "lcd/render.rs"),
        ("sound", "sample 3 (left, right)", "apu.rs"),
        ("cartridge RAM", "bank 1 0xa010", "cartridge/"),
        ("clock", "CPU cycles since power-on", "gameboy.rs (scheduler"),
        ("CPU", "register A", "cpu.rs"),
        ("CPU", "register PC", "gameboy.rs (interrupt dispatch"),
        ("serial", "output so far", "serial.rs"),
        ("WRAM", "0xc000", "cpu.rs"),
    ],
)
def test_module_at_fault_mapping(component, where, module):
    m, reason, others = prompts.likely_module(Divergence(10, component, where, 1, 2))
    assert module in m
    assert reason and others


def test_module_at_fault_follows_the_trace_for_plain_memory(tmp_path):
    # A WRAM difference right after the program read TIMA (LDH A,($FF05)) points at the timer.
    program = bytes([0xF0, 0x05, 0xEA, 0x00, 0xC0, 0x18, 0xF9])  # LDH A,(05); LD (C000),A; JR -7
    rom = tmp_path / "t.gb"
    rom.write_bytes(interactions.build_rom(program))
    d = Divergence(70, "WRAM", "0xc000", 3, 4, trace=[0x150, 0x152, 0x155] * 10)
    m, reason, _ = prompts.likely_module(d, str(rom))
    assert m == "crates/emurust-core/src/timer.rs"
    assert "read of 0xff05 at PC 0150" in reason


# ---------------------------------------------------------------- L2


def test_an_interaction_check_fails_on_a_difference():
    r = interactions.check_joypad(before_frame=_corrupt(0xC002, 80, 0x01))
    assert not r.passed
    assert r.divergence is not None and r.divergence.frame == 80 and r.divergence.component == "WRAM"
    assert r.frames_identical == 79
    assert r.to_dict()["divergence"]["where"] == "0xc002"


def test_an_interaction_check_that_exercises_nothing_fails():
    run = interactions._Run(10, None, {10: bytes(0x2000)}, None)
    r = interactions._result("x", "d", 10, run, [(True, "fine"), (False, "counter is zero")], 0.0)
    assert not r.passed and "counter is zero" in r.details


# ---------------------------------------------------------------- L1 component tests


def test_cargo_output_parsing():
    out = "running 3 tests\ntest result: ok. 120 passed; 0 failed; 2 ignored; 0 measured\n" "test result: FAILED. 5 passed; 1 failed; 0 ignored; 0 measured\n"
    assert report.parse_cargo_test(out) == (125, 1, 2)
    assert report.parse_cargo_test("error[E0308]: mismatched types") is None


def test_component_tests_are_never_reported_as_passed_when_not_run(monkeypatch):
    assert report.run_component_tests(enabled=False)["status"] == report.NOT_RUN
    monkeypatch.setattr(report.shutil, "which", lambda name: None)
    r = report.run_component_tests()
    assert r["status"] == report.NOT_RUN and "cargo not found" in r["reason"] and "passed" not in r


@pytest.mark.parametrize("script, status, counts", [
    ("echo 'test result: ok. 7 passed; 0 failed; 1 ignored; 0 measured'", "passed", (7, 0)),
    ("echo 'test result: FAILED. 6 passed; 1 failed; 0 ignored; 0 measured'; exit 101", "failed", (6, 1)),
    ("echo 'error: could not compile'; exit 101", "failed", None),
])
def test_component_tests_with_a_stand_in_cargo(tmp_path, monkeypatch, script, status, counts):
    fake = tmp_path / "cargo"
    fake.write_text(f"#!/bin/sh\n{script}\n")
    fake.chmod(fake.stat().st_mode | stat.S_IEXEC)
    monkeypatch.setattr(report.shutil, "which", lambda name: str(fake))
    monkeypatch.setattr(prompts, "repo_root", lambda: ROOT)
    r = report.run_component_tests()
    assert r["status"] == status
    if counts:
        assert (r["passed"], r["failed"]) == counts
    else:
        assert "no test result" in r["reason"]


# ---------------------------------------------------------------- the report, end to end


def test_report_end_to_end(tmp_path, capsys, vectors_dir):
    out = tmp_path / "rep"
    rc = main(["verify", "report", TIMER_ROM, "--out", str(out), "--seeds", "1,2", "--frames", "120", "--vectors", str(vectors_dir), "--no-cargo", "--quiet"])
    assert rc == 0
    rep = json.loads((out / "report.json").read_text())
    assert rep["verdict"] == "incomplete" and rep["not_run"] == ["L1 component tests"] and rep["failed"] == []
    l1 = rep["levels"]["L1"]
    assert l1["cpu_vectors"]["status"] == "passed" and l1["cpu_vectors"]["passed"] == 50000 and l1["cpu_vectors"]["failed"] == 0
    assert l1["component_tests"]["status"] == "not run"
    l2 = rep["levels"]["L2"]
    assert l2["passed"] == 4 and l2["failed"] == 0
    assert {c["name"] for c in l2["checks"]} == {"joypad", "mbc1_banking", "interrupts", "oam_dma"}
    assert all(c["passed"] and c["frames_identical"] == c["frames"] for c in l2["checks"])
    l3 = rep["levels"]["L3"]
    assert [x["seed"] for x in l3["rollouts"]] == [1, 2] and l3["frames_verified"] == 240
    assert rep["first_divergence"] is None
    md = (out / "report.md").read_text()
    assert "**Verdict: INCOMPLETE**" in md and "50,000 passed, 0 failed" in md
    assert "**not run**: skipped (--no-cargo)" in md and "4/4 passed" in md and "240 frames verified" in md
    assert not (out / "repair-prompt.md").exists()
    assert "Verdict" in capsys.readouterr().out


def test_report_with_a_divergence_fails_and_writes_a_repair_prompt(tmp_path, monkeypatch, vectors_dir):
    import emurust.verify.rollout as vr

    real = vr.rollout
    monkeypatch.setattr(vr, "rollout", lambda rom, frames, **kw: real(rom, frames, before_frame=_corrupt(0xC200, 70), **kw))
    out = tmp_path / "rep"
    rc = main(["verify", "report", TIMER_ROM, "--out", str(out), "--seeds", "5", "--frames", "100", "--vectors", str(vectors_dir), "--no-cargo", "--checks", "mbc1_banking", "--quiet"])
    assert rc == 1
    rep = json.loads((out / "report.json").read_text())
    assert rep["verdict"] == "fail" and rep["failed"] == ["L3 rollouts"]
    d = rep["first_divergence"]
    assert d["level"] == "L3" and d["seed"] == 5 and d["frame"] == 70 and d["component"] == "WRAM" and d["where"] == "0xc200"
    assert rep["levels"]["L3"]["frames_verified"] == 69
    md = (out / "report.md").read_text()
    assert "**Verdict: FAIL**" in md and "Frame 70: WRAM 0xc200" in md and "repair-prompt.md" in md
    prompt = (out / "repair-prompt.md").read_text()
    assert "--frames 70 --seed 5" in prompt and "seed 5" in prompt


def test_report_bad_arguments(tmp_path, capsys):
    assert main(["verify", "report", str(tmp_path / "none.gb"), "--out", str(tmp_path)]) == 2
    assert main(["verify", "report", TIMER_ROM, "--out", str(tmp_path), "--checks", "nope"]) == 2
    assert "unknown L2 checks" in capsys.readouterr().err
    # argparse's errors too: one line and exit status 2, not argparse's own exit.
    assert main(["verify", "report", TIMER_ROM, "--out", str(tmp_path), "--seeds", "a,b"]) == 2
    assert capsys.readouterr().err.startswith("emurust: error: argument --seeds: expected an integer")
