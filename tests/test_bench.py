"""Smoke tests of the benchmark tools (``emurust bench``, benches/rl_throughput.py,
benches/summarize.py). They check that the tools run and write what they promise, on tiny
sizes; they never assert a speed (benchmarks are not timed unit tests)."""

from __future__ import annotations

import importlib.util
import json
import pathlib
import subprocess
import sys

import pytest

from emurust import bench

ROOT = pathlib.Path(__file__).resolve().parent.parent


def _load(name: str):
    spec = importlib.util.spec_from_file_location(name, ROOT / "benches" / f"{name}.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_machine_info_records_cpu_and_load():
    m = bench.machine_info()
    assert m["cpu_model"]
    assert m["logical_cpus"] >= 1
    assert len(m["loadavg"]) == 3


def test_cli_has_bench_subcommand(capsys):
    from emurust import cli

    with pytest.raises(SystemExit) as e:
        cli.main(["bench", "--help"])
    assert e.value.code == 0
    assert "--frames" in capsys.readouterr().out


@pytest.mark.parametrize("sound", bench.SOUNDS)
@pytest.mark.parametrize("pattern", bench.PATTERNS)
def test_worker_runs_emurust_in_a_subprocess(pattern, sound):
    r = bench.run_one("emurust", str(ROOT / "roms" / "bench.gb"), pattern, 30, bench._pick_cpu(), 120, sound)
    assert "error" not in r, r
    assert r["frames"] == 30 and r["fps"] > 0 and r["fps_wall"] > 0
    assert r["frames_run_total"] == bench.WARMUP + 30
    assert r["sound"] == sound and r["pattern"] == pattern


def test_patterns_make_the_tick_calls_they_name():
    calls = []
    for pattern in bench.PATTERNS:
        calls.clear()
        bench._tick_pattern(lambda n, r: calls.append((n, r)), pattern)(50)
        assert sum(n for n, _ in calls) == 50
        if pattern == "render":
            assert calls == [(1, True)] * 50
        elif pattern == "skip24":
            assert calls == [(24, True), (24, True), (2, True)]
        else:
            assert calls == [(50, False)]


@pytest.mark.parametrize("engine", ["emurust", "pyboy"])
def test_worker_starts_both_engines_from_a_pyboy_state(engine, tmp_path):
    import emurust

    rom = str(ROOT / "games" / "dodge.gb")
    gb = emurust.GameBoy(rom)
    gb.tick(200, False)
    state = tmp_path / "dodge.state"
    state.write_bytes(gb.save_pyboy_state())
    r = bench.run_one(engine, rom, "skip24", 48, None, 300, "on", str(state))
    assert "error" not in r, r
    assert r["frames_run_total"] >= bench.WARMUP + 48
    assert r["state"] == str(state)
    # The state is really loaded: a corrupt one stops the worker with an error.
    bad = tmp_path / "bad.state"
    bad.write_bytes(state.read_bytes()[:100])
    assert "error" in bench.run_one(engine, rom, "skip24", 48, None, 300, "on", str(bad))


def test_real_games_suite_lists_our_games_and_the_corpus_games(monkeypatch, tmp_path):
    corpus = tmp_path / "roms"
    (corpus / "games").mkdir(parents=True)
    (corpus / "games" / "libbet.gb").write_bytes(b"x")
    monkeypatch.setenv("EMURUST_TEST_ROMS", str(corpus))
    suite = bench.real_games_suite()
    assert suite[:3] == list(bench.OUR_GAMES)
    assert suite[3:] == [str((corpus / "games" / "libbet.gb").resolve())]
    assert bench.split_rom_state("a.gb@b.state") == ("a.gb", "b.state")
    assert bench.split_rom_state("a.gb") == ("a.gb", "")


def test_bench_rejects_bad_arguments_in_one_line(capsys):
    for argv in (["--frames", "0"], ["--patterns", "sometimes"], ["--sound", "loud"], ["--repeat", "-1"],
                 ["--roms", "missing.gb@missing.state"]):
        rc = bench.main(["--roms", "roms/bench.gb", "--engines", "emurust", *argv, "--json", "", "--png", ""])
        err = capsys.readouterr().err
        assert rc == 2 and err.startswith("emurust bench: error:") and err.count("\n") == 1, err


def test_worker_reports_a_missing_engine_as_an_error_not_a_crash(tmp_path):
    r = bench.run_one("emurust", str(tmp_path / "missing.gb"), "render", 10, None, 60)
    assert "error" in r


def _fake_result():
    summary = []
    for rom in ("roms/bench.gb", "games/dodge.gb"):
        for pattern in bench.PATTERNS:
            for engine, fps in (("emurust", 9000.0), ("pyboy", 3000.0), ("gambatte", 6000.0)):
                summary.append({"engine": engine, "rom": rom, "pattern": pattern, "sound": "on", "fps": fps,
                                "fps_min": fps, "fps_max": fps, "fps_wall": fps,
                                "always_draws": bench.always_draws(engine, pattern), "runs": 1,
                                "vs_pyboy": fps / 3000.0})
    return {"frames": 100, "repeat": 1, "machine": bench.machine_info(), "summary": summary,
            "skipped": {"mgba": "ModuleNotFoundError: No module named 'mgba'"}}


def test_table_and_plot(tmp_path):
    res = _fake_result()
    table = bench.format_table(res)
    assert "| dodge.gb | no_render | on | 9,000 (3.0x) | 3,000 | 6,000 (2.0x) [draws] |" in table
    assert "| dodge.gb | render | on | 9,000 (3.0x) | 3,000 | 6,000 (2.0x) |" in table
    assert "skipped mgba" in table
    why = bench.plot(res, str(tmp_path / "p.png"))
    assert why is None, why  # matplotlib is in the test extra
    assert (tmp_path / "p.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_cgb_choices_get_a_hardware_column_and_a_ratio_to_dmg():
    summary = []
    for cgb, fps in (("off", 10000.0), ("on", 8000.0)):
        for engine, scale in (("emurust", 1.0), ("pyboy", 0.5)):
            summary.append({"engine": engine, "rom": "games/dodge.gb", "pattern": "render", "sound": "on",
                            "cgb": cgb, "cgb_model": cgb == "on", "fps": fps * scale, "fps_min": fps,
                            "fps_max": fps, "fps_wall": fps, "always_draws": False, "runs": 1,
                            "vs_pyboy": 2.0})
    table = bench.format_table({"frames": 100, "repeat": 1, "machine": bench.machine_info(), "summary": summary})
    assert "| ROM | pattern | sound | cgb | emurust | pyboy |" in table
    assert "| dodge.gb | render | on | off | 10,000 (2.0x) | 5,000 |" in table
    assert "| dodge.gb | render | on | on | 8,000 (2.0x) [0.80 of DMG] | 4,000 [0.80 of DMG] |" in table


def test_bench_rejects_an_unknown_cgb_choice(capsys):
    rc = bench.main(["--roms", "roms/bench.gb", "--engines", "emurust", "--cgb", "maybe", "--json", "", "--png", ""])
    err = capsys.readouterr().err
    assert rc == 2 and "unknown --cgb choice 'maybe'" in err, err


def test_compare_end_to_end_writes_json(tmp_path, monkeypatch):
    monkeypatch.chdir(ROOT)
    out = tmp_path / "b.json"
    rc = bench.main(["--roms", "roms/bench.gb", "--engines", "emurust", "--patterns", "no_render", "--frames", "20",
                     "--repeat", "1", "--json", str(out), "--png", ""])
    assert rc == 0
    data = json.loads(out.read_text())
    assert data["summary"][0]["engine"] == "emurust"
    assert data["machine"]["loadavg"] is not None and "loadavg_end" in data["machine"]


def test_rl_raw_batch_and_memory_child(tmp_path):
    rl = _load("rl_throughput")
    b = rl.make_raw_batch(2, 1)
    r = rl.time_raw_batch(b, 0.0)
    assert r["calls"] == 3 and r["steps_per_s"] > 0
    big = rl.big_rom(rl.rom_path("runner"), tmp_path / "big.gb")
    assert pathlib.Path(big).stat().st_size == 4 << 20
    import emurust

    gb = emurust.GameBoy(big)  # the padded ROM is a valid cartridge
    gb.tick(2, False)


def test_rl_parts_write_json(tmp_path):
    rl = _load("rl_throughput")
    out = tmp_path / "rl.json"
    rc = rl.main(["--parts", "scaling,memory", "--scaling-envs", "2", "--scaling-threads", "1,2", "--seconds", "0",
                  "--memory-envs", "4", "--out", str(out)])
    assert rc == 0
    data = json.loads(out.read_text())
    rows = data["scaling"]["rows"]
    assert [r["threads"] for r in rows] == [1, 2] and rows[0]["efficiency"] == pytest.approx(1.0)
    mem = data["memory"]
    assert all("error" not in r for r in mem["rows"]), mem
    assert mem["rom_shared"] is True
    summary = _load("summarize")
    (tmp_path / "scaling.json").write_text(out.read_text())
    (tmp_path / "memory.json").write_text(out.read_text())
    assert summary.main([str(tmp_path)]) == 0


def test_summary_checks_the_speed_targets_per_pattern(tmp_path, capsys):
    res = _fake_result()
    res["table_markdown"] = bench.format_table(res)
    (tmp_path / "compare.json").write_text(json.dumps(res))
    assert _load("summarize").main([str(tmp_path)]) == 0
    out = capsys.readouterr().out
    # 9,000 vs 3,000 frames/s everywhere: 3.0x meets the 3x target drawing every frame, misses 5x.
    assert "render: min 3.00x" in out and "target 3x: MET" in out
    assert "skip24: min 3.00x" in out and "target 5x: not met" in out


def test_pyboy_env_matches_the_task():
    import gymnasium  # noqa: F401  (test extra: a missing one must fail, not skip)
    import pyboy  # noqa: F401
    rl = _load("rl_throughput")
    env = rl.pyboy_env(rl.rom_path(), 0, 3)
    obs, _ = env.reset()
    assert obs.shape == (1, 144, 160) and obs.dtype.name == "uint8"
    for t in range(3):
        obs, reward, terminated, truncated, _ = env.step(1)
    assert truncated and obs.shape == (1, 144, 160)
    env.close()


def test_bench_scripts_are_valid_bash():
    import subprocess

    scripts = sorted((ROOT / "benches").glob("*.sh"))
    assert {"device_suite.sh", "device_speed.sh", "host_instructions.sh"} <= {s.name for s in scripts}
    for script in scripts:
        subprocess.run(["bash", "-n", str(script)], check=True)


def test_engines_take_turns_run_by_run(monkeypatch):
    """A drift in the machine's speed must fall on every engine alike: the runs of one
    measurement alternate between the engines, and an engine that fails stops alone."""
    calls = []

    def fake_run_one(engine, rom, pattern, frames, cpu, timeout, sound="on", state="", cgb="auto"):
        calls.append(engine)
        if engine == "gambatte" and calls.count("gambatte") == 2:
            return {"engine": engine, "error": "broke"}
        return {"engine": engine, "fps": 100.0 if engine == "emurust" else 50.0, "fps_wall": 1.0, "always_draws": False}

    monkeypatch.setattr(bench, "run_one", fake_run_one)
    monkeypatch.setattr(bench, "available", lambda e: None)
    r = bench.compare([str(ROOT / "roms" / "bench.gb")], ["emurust", "pyboy", "gambatte"], ["render"], 10, 3, log=lambda *a: None)
    assert calls == ["emurust", "pyboy", "gambatte", "emurust", "pyboy", "gambatte", "emurust", "pyboy"]
    by_engine = {s["engine"]: s for s in r["summary"]}
    assert by_engine["emurust"]["runs"] == 3 and by_engine["emurust"]["vs_pyboy"] == 2.0
    assert by_engine["gambatte"]["runs"] == 1


def test_ratio_to_pyboy_is_the_median_of_the_rounds_ratios(monkeypatch):
    """Each round runs the engines back to back, so its ratio sees one machine speed; the
    reported ratio is the median over rounds, the ratio of the medians is kept beside it."""
    fps = {"emurust": iter([12.0, 16.0, 30.0]), "pyboy": iter([6.0, 16.0, 15.0])}

    def fake_run_one(engine, rom, pattern, frames, cpu, timeout, sound="on", state="", cgb="auto"):
        return {"engine": engine, "fps": next(fps[engine]), "fps_wall": 1.0, "always_draws": False}

    monkeypatch.setattr(bench, "run_one", fake_run_one)
    monkeypatch.setattr(bench, "available", lambda e: None)
    r = bench.compare([str(ROOT / "roms" / "bench.gb")], ["emurust", "pyboy"], ["render"], 10, 3, log=lambda *a: None)
    ours = next(s for s in r["summary"] if s["engine"] == "emurust")
    assert ours["vs_pyboy_rounds"] == [2.0, 1.0, 2.0] and ours["vs_pyboy"] == 2.0
    assert ours["vs_pyboy_of_medians"] == 16.0 / 15.0
    assert ours["vs"] == {"pyboy": 2.0}


if __name__ == "__main__":
    sys.exit(pytest.main([__file__, "-q"]))


def test_bench_runs_from_any_directory_on_the_packaged_games(tmp_path):
    """Without --roms, `emurust bench` measures the games packaged with emurust, wherever it
    is started (it once needed the repository root for roms/bench.gb)."""
    p = subprocess.run([sys.executable, "-m", "emurust", "bench", "--engines", "emurust", "--frames", "20", "--repeat", "1",
                        "--patterns", "no_render", "--sound", "off", "--json", "", "--png", ""],
                       capture_output=True, text=True, cwd=tmp_path, timeout=300)
    assert p.returncode == 0, p.stderr
    for game in ("dodge.gb", "runner.gb", "snake.gb"):
        assert f"| {game} | no_render | off |" in p.stdout, p.stdout
    assert list(tmp_path.iterdir()) == []
    # The packaged copy, wherever emurust is installed (the repository's with an editable install).
    import emurust

    packaged = pathlib.Path(emurust.__file__).resolve().parent / "roms" / "snake.gb"
    assert bench.resolve_rom("snake") == bench.resolve_rom("snake.gb")
    assert pathlib.Path(bench.resolve_rom("snake")).resolve() == packaged
    with pytest.raises(FileNotFoundError, match="packaged games: dodge.gb, runner.gb, snake.gb"):
        bench.resolve_rom("nope.gb")
