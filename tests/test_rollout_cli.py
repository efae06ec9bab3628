"""`emurust verify rollout` over several ROMs, folders and states; button policies;
`emurust verify make-states`."""

import hashlib
import os

import pytest

import emurust.verify.rollout as vr
from conftest import ROOT, make_rom
from emurust.cli import main
from emurust.rom_header import with_checksums
from emurust.verify.rollout import button_schedule

TIMER = str(ROOT / "roms" / "timer.gb")
MBC1 = str(ROOT / "roms" / "mbc1.gb")
DODGE = str(ROOT / "games" / "dodge.gb")


# ---------------------------------------------------------------- button policies


def _digest(schedule) -> str:
    return hashlib.sha256(repr(schedule).encode()).hexdigest()[:16]


def test_default_policy_keeps_its_seed_to_schedule_mapping():
    # Digests of the schedules of the original `button_schedule` (before the policies existed):
    # seeds used in earlier reports must still give the same buttons.
    assert _digest(button_schedule(0, 3000)) == "daecd7e5c5d085c6"
    assert _digest(button_schedule(1, 3000)) == "076a234917977478"
    assert _digest(button_schedule(12345, 3000, policy="random")) == "917a4ec88859f8bd"
    assert _digest(button_schedule(7, 3000, 0.2)) == "7b133cfcbc6183a8"


@pytest.mark.parametrize("policy", vr.POLICIES)
def test_policies_reproducible_and_prefix_stable(policy):
    a = button_schedule(5, 2000, policy=policy)
    assert a == button_schedule(5, 2000, policy=policy)
    assert a[:700] == button_schedule(5, 700, policy=policy)
    assert a != button_schedule(6, 2000, policy=policy)
    assert len(a) == 2000 and sum(map(len, a)) > 10
    # Every press is released before the same button is pressed again.
    held = set()
    for events in a:
        for action, b in events:
            assert (b in held) == (action == "release"), (policy, action, b)
            (held.add if action == "press" else held.discard)(b)


def _holds(schedule):
    """(button, frames held) for each completed press."""
    start, out = {}, []
    for f, events in enumerate(schedule):
        for action, b in events:
            if action == "press":
                start[b] = f
            else:
                out.append((b, f - start.pop(b)))
    return out


def test_policy_shapes():
    holds = _holds(button_schedule(3, 20000, policy="holds"))
    assert len(holds) > 30 and min(n for _, n in holds) >= 30 and max(n for _, n in holds) <= 300
    mash = _holds(button_schedule(3, 20000, policy="mash"))
    assert len(mash) > 1500 and max(n for _, n in mash) <= 3
    share = sum(b in ("a", "start") for b, _ in mash) / len(mash)
    assert share > 0.8
    with pytest.raises(ValueError, match="unknown button policy"):
        button_schedule(0, 10, policy="nope")


# ---------------------------------------------------------------- the command


def test_single_rom_output_unchanged(capsys):
    assert main(["verify", "rollout", TIMER, "--frames", "80", "--quiet"]) == 0
    assert capsys.readouterr().out.strip() == "identical: 80 frames"


def test_several_roms_table_and_exit_status(tmp_path, monkeypatch, capsys):
    real = vr.rollout

    def corrupt_mbc1(rom, frames, **kw):
        if rom.endswith("mbc1.gb"):

            def before(gb, frame):
                if frame == 70:
                    gb.write(0xC321, gb.read(0xC321) ^ 0x11)

            kw["before_frame"] = before
        return real(rom, frames, **kw)

    monkeypatch.setattr(vr, "rollout", corrupt_mbc1)
    pngs = tmp_path / "png"
    prompt = tmp_path / "repair.md"
    rc = main(["verify", "rollout", TIMER, MBC1, "--frames", "90", "--quiet", "--png", str(pngs), "--policy", "mash", "--seed", "4", "--repair-prompt", str(prompt)])
    out = capsys.readouterr().out
    assert rc == 1
    lines = {line.split("|")[0].strip(): line for line in out.splitlines() if "|" in line}
    assert "identical" in lines[os.path.relpath(TIMER)] and "| 90 " in lines[os.path.relpath(TIMER)]
    row = lines[os.path.relpath(MBC1)]
    assert "DIVERGED" in row and "| 69 " in row and "frame 70: WRAM 0xc321" in row
    assert (pngs / "divergence-mbc1-frame70.png").is_file() and str(pngs / "divergence-mbc1-frame70.png") in row
    assert "2 runs: 1 identical, 1 diverged, 0 not compared" in out
    text = (tmp_path / "repair-mbc1.md").read_text()
    assert "emurust verify rollout" in text and "--frames 70 --seed 4" in text and "--policy mash" in text
    assert not (tmp_path / "repair-timer.md").exists()


def _cgb_rom(tmp_path) -> str:
    rom = bytearray(make_rom(program=b"\x3c\xea\x00\xc0\x18\xfa"))  # INC A; LD (C000),A; JR -6
    rom[0x143] = 0x80
    path = tmp_path / "colour.gb"
    path.write_bytes(with_checksums(rom))
    return str(path)


def test_cgb_flagged_rom_compared_on_either_hardware(tmp_path, capsys):
    """A CGB-flagged ROM runs as a Game Boy Color on both sides by default (PyBoy's choice) and as
    a DMG with --cgb off; in a folder it is one more row of the table."""
    rom = _cgb_rom(tmp_path)
    for flag in ([], ["--cgb", "off"], ["--cgb", "on"]):
        assert main(["verify", "rollout", rom, "--frames", "80", "--quiet", *flag]) == 0
        assert capsys.readouterr().out.strip() == "identical: 80 frames"
    (tmp_path / "timer.gb").write_bytes(open(TIMER, "rb").read())
    assert main(["verify", "rollout", str(tmp_path), "--frames", "80", "--quiet"]) == 0
    out = capsys.readouterr().out
    assert "2 identical" in out, out


def test_make_states_and_rollouts_from_them(tmp_path, capsys):
    states = tmp_path / "states"
    assert main(["verify", "make-states", DODGE, "--frames", "120,60", "--seed", "9", "--policy", "holds", "--out", str(states)]) == 0
    names = sorted(os.listdir(states))
    assert names == ["dodge-f120-holds-s9.state", "dodge-f60-holds-s9.state"]
    capsys.readouterr()
    rc = main(["verify", "rollout", DODGE, TIMER, "--states", str(states), "--frames", "60", "--quiet"])
    out = capsys.readouterr().out
    assert rc == 2  # timer.gb has no state
    assert out.count("| identical") == 2 and "dodge-f60-holds-s9.state" in out and "dodge-f120-holds-s9.state" in out
    assert "no state timer*.state in" in out
    # The state is PyBoy's frame 120: emurust continues it identically with other buttons.
    assert main(["verify", "rollout", DODGE, "--start-state", str(states / "dodge-f120-holds-s9.state"), "--frames", "60", "--quiet", "--seed", "2"]) == 0
    # A CGB-flagged ROM: PyBoy saves a Game Boy Color state, and emurust continues it exactly.
    cgb_states = tmp_path / "cgb_states"
    colour = _cgb_rom(tmp_path)
    assert main(["verify", "make-states", colour, "--frames", "30", "--out", str(cgb_states)]) == 0
    (cgb_state,) = cgb_states.iterdir()
    capsys.readouterr()
    assert main(["verify", "rollout", colour, "--start-state", str(cgb_state), "--frames", "40", "--quiet"]) == 0
    assert capsys.readouterr().out.strip() == "identical: 40 frames"


def test_bad_arguments(tmp_path, capsys):
    assert main(["verify", "rollout", str(tmp_path / "missing.gb"), "--quiet"]) == 2
    assert main(["verify", "rollout", str(tmp_path), "--quiet"]) == 2  # no ROMs in an empty folder
    assert main(["verify", "rollout", TIMER, MBC1, "--start-state", TIMER, "--quiet"]) == 2
    err = capsys.readouterr().err
    assert "ROM not found" in err and "no ROMs" in err and "--start-state takes one ROM" in err
