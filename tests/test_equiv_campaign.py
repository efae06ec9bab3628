"""tools/equiv_campaign.py: parallel runs, mid-game state starts, resume, table (short runs on our ROMs)."""

import json
import os
import sys

import pytest

pytest.importorskip("pyboy")

ROOT = os.path.join(os.path.dirname(__file__), "..")
sys.path.insert(0, os.path.join(ROOT, "tools"))

import equiv_campaign  # noqa: E402


def test_campaign_parallel_states_resume_and_table(tmp_path, capsys):
    out = tmp_path / "c.jsonl"
    argv = [os.path.join(ROOT, "roms", "smoke.gb"), os.path.join(ROOT, "games", "dodge.gb"), "--out", str(out),
            "--frames", "40", "--seeds", "0,1", "--policies", "random", "--modes", "dmg", "--sound", "on",
            "--compare-every", "10", "--jobs", "2", "--states-at", "20", "--states-dir", str(tmp_path / "st")]
    assert equiv_campaign.main(argv) == 0
    rows = [json.loads(line) for line in out.read_text().splitlines()]
    # 2 ROMs x 2 seeds from power-on, + dodge from its frame-20 state x 2 seeds
    assert len(rows) == 6
    assert all(r["divergence"] is None and r["identical"] == 40 for r in rows)
    starts = [r for r in rows if r.get("start")]
    assert len(starts) == 2 and all(r["rom"].endswith("dodge.gb") and os.path.exists(r["start"]) for r in starts)
    capsys.readouterr()
    # a second call finds every run done
    assert equiv_campaign.main(argv) == 0
    assert "0 runs to go (6 in" in capsys.readouterr().err
    assert equiv_campaign.main(["--out", str(out), "--table"]) == 0
    table = capsys.readouterr().out
    assert "| roms/smoke.gb | dmg | on | 40 | 2/2 | none |" in table
    assert "dodge-f20-random-s1000.state" in table
