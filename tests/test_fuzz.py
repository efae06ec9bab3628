"""The adversarial campaign as a suite (issue 26): hostile states, ROMs, special paths, API
misuse, threads, signals, data safety and the command line. Each sampled category runs in a child
process (tests/fuzz_cases.py), so a crash or abort is caught and names its case.

The default run samples every category (a few hundred cases, ~1 minute); EMURUST_LONG=1 or
EMURUST_FUZZ_CASES=N runs N cases per sampled category (the campaign ran ~7,000)."""

from __future__ import annotations

import os
import pathlib
import signal
import stat
import subprocess
import sys
import threading
import time

import pytest

import emurust
from conftest import LONG, ROOT, default_sigint

DODGE = str(ROOT / "games" / "dodge.gb")
MBC3 = str(ROOT / "roms" / "mbc3.gb")  # battery-backed RAM and clock
CASES = int(os.environ.get("EMURUST_FUZZ_CASES") or (1500 if LONG else 40))


def run_category(category: str, seed: int, count: int, tmp_path) -> list[str]:
    env = dict(os.environ, FUZZ_TMP=str(tmp_path), PYTHONPATH=str(ROOT / "tests"))
    p = subprocess.run(
        [sys.executable, str(ROOT / "tests" / "fuzz_cases.py"), category, str(seed), str(count)],
        capture_output=True, text=True, timeout=1800, env=env, cwd=str(ROOT),
    )
    lines = p.stdout.splitlines()
    cases = [ln for ln in lines if ln.startswith("CASE ")]
    done = [ln for ln in lines if ln.startswith("DONE ")]
    if p.returncode != 0 or not lines or lines[-1] != "END":
        last = cases[-1] if len(done) < len(cases) else "(between cases)"
        pytest.fail(f"the child died (rc {p.returncode}) in {last}\n{p.stderr[-3000:]}")
    bad = [f"{c[5:]} -> {d[5:]}" for c, d in zip(cases, done) if d.startswith("DONE BAD")]
    assert not bad, "\n".join(bad)
    return done


@pytest.mark.parametrize("category", ["states", "roms", "api"])
def test_sampled_cases_raise_catchable_errors(category, tmp_path):
    done = run_category(category, 7, CASES, tmp_path)
    # The sample exercises both sides of the contract: some cases are refused, some run.
    assert any("refused" in d for d in done) and any(d == "DONE ok" for d in done), done


def test_special_paths_raise_what_open_raises(tmp_path):
    done = run_category("paths", 1, 0, tmp_path)
    assert len(done) == 80 and not any(d == "DONE ok" for d in done)


def test_threads_sharing_one_emulator_or_batch(tmp_path):
    run_category("threads", 1, 0, tmp_path)


# ---------------------------------------------------------------- regressions, one by one


def test_a_lone_surrogate_in_a_path_raises_unicode_encode_error():
    for call in (lambda: emurust.GameBoy("\ud800"), lambda: emurust.GameBoy(DODGE, boot_rom="\ud800"),
                 lambda: emurust.GameBoy(DODGE).load_pyboy_state("\ud800"), lambda: emurust._core.Batch("\ud800", 1)):
        with pytest.raises(UnicodeEncodeError):
            call()


def test_dev_zero_and_directories_are_refused_at_once():
    t0 = time.monotonic()
    with pytest.raises(ValueError, match="larger than 64 MiB"):
        emurust.GameBoy("/dev/zero")
    assert time.monotonic() - t0 < 5
    with pytest.raises(IsADirectoryError):
        emurust.GameBoy(str(ROOT))
    with pytest.raises(FileNotFoundError):
        emurust.GameBoy(str(ROOT / "no-such.gb"))


def test_a_fifo_without_a_writer_does_not_block(tmp_path):
    fifo = tmp_path / "rom.fifo"
    os.mkfifo(fifo)
    with pytest.raises(emurust.RomError, match="empty"):
        emurust.GameBoy(str(fifo))


def test_a_fifo_is_read_whole(tmp_path):
    fifo = tmp_path / "rom.fifo"
    os.mkfifo(fifo)
    rom = pathlib.Path(DODGE).read_bytes()

    def feed():
        with open(fifo, "wb") as f:  # blocks until the reader opens
            for i in range(0, len(rom), 4096):
                f.write(rom[i : i + 4096])
                f.flush()

    t = threading.Thread(target=feed)
    t.start()
    for _ in range(200):  # the reader must find a writer there (it does not wait for one)
        time.sleep(0.01)
        if t.is_alive():
            break
    time.sleep(0.1)
    gb = emurust.GameBoy(str(fifo))
    t.join()
    assert gb.title == emurust.GameBoy(DODGE).title


def test_ctrl_c_stops_reading_a_slow_fifo(tmp_path):
    """A FIFO whose writer sends a byte a second: Ctrl-C raises KeyboardInterrupt at once."""
    fifo = tmp_path / "slow.fifo"
    os.mkfifo(fifo)
    code = f"""
import os, sys, threading, time
import emurust
def feed():
    with open({str(fifo)!r}, "wb", buffering=0) as f:
        while True:
            f.write(b"x"); time.sleep(1)
threading.Thread(target=feed, daemon=True).start()
time.sleep(0.3)
print("READY", flush=True)
try:
    emurust.GameBoy({str(fifo)!r})
except KeyboardInterrupt:
    print("INTERRUPTED", flush=True)
    raise
"""
    p = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                         preexec_fn=default_sigint)
    try:
        assert p.stdout.readline().strip() == "READY"
        time.sleep(1.0)
        assert p.poll() is None
        t0 = time.monotonic()
        os.kill(p.pid, signal.SIGINT)
        out, err = p.communicate(timeout=30)
        dt = time.monotonic() - t0
    finally:
        if p.poll() is None:
            p.kill()
            p.communicate()
    assert dt < 2, dt
    assert "INTERRUPTED" in out and "KeyboardInterrupt" in err, (out, err)


def test_a_batch_too_large_for_memory_is_refused_not_aborted():
    """Under a 3 GB address-space limit: MemoryError naming the size, not a panic or SIGABRT."""
    code = f"""
import resource
resource.setrlimit(resource.RLIMIT_AS, (3 << 30, 3 << 30))
import gymnasium, emurust
from emurust import _core
for make in (lambda: _core.Batch({DODGE!r}, 65536), lambda: gymnasium.make_vec("emurust/Dodge-v0", num_envs=60000)):
    try:
        make()
    except MemoryError as e:
        assert "environments needs about" in str(e), e
        print("REFUSED", flush=True)
"""
    p = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    assert p.returncode == 0 and p.stdout.split() == ["REFUSED", "REFUSED"], (p.returncode, p.stdout, p.stderr[-2000:])


# ---------------------------------------------------------------- data safety


def _battery_game(tmp_path) -> pathlib.Path:
    rom = tmp_path / "game.gb"
    rom.write_bytes(pathlib.Path(MBC3).read_bytes())
    return rom


def _play_and_stop(rom: pathlib.Path) -> None:
    pb = emurust.PyBoy(str(rom), window="null")
    pb.tick(200)
    pb.stop(save=True)


def test_stop_writes_a_symlinked_battery_save_through_the_link(tmp_path):
    rom = _battery_game(tmp_path)
    real = tmp_path / "saves" / "real.ram"
    real.parent.mkdir()
    _play_and_stop(rom)
    (tmp_path / "game.gb.ram").rename(real)
    old = real.read_bytes()
    real.write_bytes(bytes(len(old)))  # a save the game will change
    (tmp_path / "game.gb.ram").symlink_to(real)
    _play_and_stop(rom)
    assert (tmp_path / "game.gb.ram").is_symlink(), "the link was replaced by a file"
    assert real.read_bytes() == old, "the real save was not written"


def test_stop_keeps_the_battery_saves_permissions(tmp_path):
    rom = _battery_game(tmp_path)
    _play_and_stop(rom)
    ram = tmp_path / "game.gb.ram"
    os.chmod(ram, 0o600)
    _play_and_stop(rom)
    assert stat.S_IMODE(ram.stat().st_mode) == 0o600


def test_an_interrupted_write_leaves_the_old_file_whole(tmp_path):
    from emurust._atomic import atomic_write

    target = tmp_path / "model.zip"
    target.write_bytes(b"old model")

    def write(tmp):
        pathlib.Path(tmp).write_bytes(b"half")
        raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        atomic_write(target, write)
    assert target.read_bytes() == b"old model"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["model.zip"], "a partial file was left behind"


def test_atomic_write_creates_no_folders(tmp_path):
    from emurust._atomic import atomic_write

    with pytest.raises(FileNotFoundError, match="folder does not exist"):
        atomic_write(tmp_path / "no" / "such" / "file", lambda tmp: None)
    assert list(tmp_path.iterdir()) == []


# ---------------------------------------------------------------- the verifier and battery saves


def test_verify_rollout_starts_both_sides_without_a_battery_save_beside_the_rom(tmp_path):
    """A .ram beside a battery-backed game (as after any play session) is loaded by PyBoy by itself;
    the verifier starts both sides without it, says so, and finds no false divergence."""
    rom = _battery_game(tmp_path)
    ram_size = len(emurust.GameBoy(str(rom)).cartridge_ram())
    (tmp_path / "game.gb.ram").write_bytes(bytes([0xC5]) * ram_size)
    p = subprocess.run([sys.executable, "-m", "emurust", "verify", "rollout", str(rom), "--frames", "120", "--quiet"],
                       capture_output=True, text=True, timeout=600, cwd=str(tmp_path))
    assert p.returncode == 0, (p.stdout, p.stderr)
    assert "game.gb.ram beside the ROM: not loaded on either side" in p.stdout
