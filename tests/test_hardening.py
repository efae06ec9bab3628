"""Hardening (issue 13): Ctrl-C stops long calls, threads never panic, buffers stay read-only,
integer arguments are checked at the boundary, CLI misuse ends in one line."""

import os
import pathlib
import signal
import subprocess
import sys
import textwrap
import threading
import time

import numpy as np
import pytest

import emurust
from conftest import default_sigint
from emurust import _core

ROOT = pathlib.Path(__file__).resolve().parent.parent
DODGE = str(ROOT / "games" / "dodge.gb")
SNAKE = str(ROOT / "games" / "snake.gb")
MBC1 = str(ROOT / "roms" / "mbc1.gb")


# ---------------------------------------------------------------------------- Ctrl-C / signals

def _interrupt(code: str, sig=signal.SIGINT, after=1.0):
    """Run `code` in a fresh Python; once it prints READY, wait `after` s and send `sig`.
    Returns (seconds from the signal to the exit, returncode, stdout, stderr). Never hangs:
    the child is killed after 30 s."""
    p = subprocess.Popen(
        [sys.executable, "-c", textwrap.dedent(code)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        cwd=str(ROOT),
        preexec_fn=default_sigint,
    )
    try:
        t_start = time.monotonic()
        line = p.stdout.readline()
        assert line.strip() == "READY", (line, p.stderr.read() if p.poll() is not None else "")
        assert time.monotonic() - t_start < 60
        time.sleep(after)
        assert p.poll() is None, "the long call ended before the signal: make it longer"
        t0 = time.monotonic()
        os.kill(p.pid, sig)
        out, err = p.communicate(timeout=30)
        return time.monotonic() - t0, p.returncode, out, err
    finally:
        if p.poll() is None:
            p.kill()
            p.communicate()


PRELUDE = f"""
import sys, time
import numpy as np
import emurust
from emurust import _core
DODGE = {DODGE!r}
"""


def test_ctrl_c_stops_a_long_tick_and_leaves_the_emulator_consistent():
    dt, rc, out, err = _interrupt(PRELUDE + """
gb = emurust.GameBoy(DODGE)
print("READY", flush=True)
try:
    gb.tick(10**9)
except KeyboardInterrupt:
    n = gb.frame_count
    assert 0 < n < 10**9
    state = gb.save_state()
    gb.tick(30)
    a = gb.save_state()
    gb.load_state(state)
    gb.tick(30)
    assert gb.save_state() == a   # the machine stopped at a frame boundary and runs on normally
    print("INTERRUPTED", n)
    raise
""")
    assert dt < 3, dt
    assert "INTERRUPTED" in out, err
    assert "KeyboardInterrupt" in err and rc != 0


def test_sigalrm_handler_runs_during_a_long_tick():
    dt, rc, out, err = _interrupt(PRELUDE + """
import signal
class Alarm(Exception):
    pass
def on_alarm(*_):
    raise Alarm()
signal.signal(signal.SIGALRM, on_alarm)
gb = emurust.GameBoy(DODGE)
print("READY", flush=True)
try:
    gb.tick(10**9)
except Alarm:
    print("ALARM", gb.frame_count)
    sys.exit(7)
""", sig=signal.SIGALRM)
    assert dt < 3 and rc == 7 and "ALARM" in out, (dt, rc, out, err)


@pytest.mark.parametrize("threads", [1, 2])
def test_ctrl_c_stops_a_long_batch_step(threads):
    """Ctrl-C mid-step: the call stops within a slice, and the batch is consistent whichever
    environments had finished their step when the signal came (that depends on timing): an
    environment counts the step exactly when it ran all of its frames, none runs past them, and
    a reset gives a clean start, as a fresh batch's."""
    dt, rc, out, err = _interrupt(PRELUDE + f"""
SKIP = 100000
N = 32  # 3.2 M frames: seconds of emulation on any machine, so the signal at 1 s comes mid-step
def make():
    return _core.Batch(DODGE, N, frame_skip=SKIP, num_threads={threads}, obs=["grey", "ram"], ram=[(0xC000, 8)])
b = make()
b.reset()
before = list(b.frame_counts)
print("READY", flush=True)
try:
    b.step(np.arange(N) % 8)
except KeyboardInterrupt:
    steps, ran = list(b.episode_steps), [f - f0 for f, f0 in zip(b.frame_counts, before)]
    for s, r in zip(steps, ran):
        assert s in (0, 1) and 0 <= r <= SKIP and (s == 1) == (r == SKIP), (steps, ran)
    assert 0 in steps, (steps, ran)   # the signal came mid-step: some environment was cut short
    b.reset(); fresh = make(); fresh.reset()
    for k in b.buffers:
        assert np.array_equal(b.buffers[k], fresh.buffers[k]), k
    print("INTERRUPTED", steps, ran)
    raise
""")
    assert dt < 3, dt
    assert "INTERRUPTED" in out and "KeyboardInterrupt" in err and rc != 0, (out, err)


@pytest.mark.parametrize("threads", [1, 2])
def test_ctrl_c_stops_pong_run_steps_with_every_game_at_the_same_step(threads):
    """Ctrl-C during Pong's run_steps (threads run chunks of games through rounds of steps):
    the call stops at the end of a round, and every game has run the same steps. All games play
    the same game (same seed, same actions), so they are equal exactly when they stopped at the
    same step."""
    dt, rc, out, err = _interrupt(PRELUDE + f"""
N = 4096
b = _core.PongBatch(N, num_threads={threads})
b.seed([7] * N)
b.reset(np.zeros((N, 8), np.float32))
acts = np.random.default_rng(0).integers(0, 3, (7, 1)).astype(np.int32).repeat(N, axis=1)
start = b.get_state(0)
print("READY", flush=True)
try:
    b.run_steps(acts, 10**9)
except KeyboardInterrupt:
    first = b.get_state(0)
    assert all(b.get_state(i) == first for i in range(N))
    assert first != start
    print("INTERRUPTED", first["tick"])
    raise
""")
    assert dt < 3, dt
    assert "INTERRUPTED" in out and "KeyboardInterrupt" in err and rc != 0, (out, err)


def test_ctrl_c_stops_a_long_batch_reset():
    dt, rc, out, err = _interrupt(PRELUDE + """
b = _core.Batch(DODGE, 2, reset_script=[("start", 1_000_000)] * 10, num_threads=2)
print("READY", flush=True)
try:
    b.reset()
except KeyboardInterrupt:
    print("INTERRUPTED", b.frame_counts)
    raise
""")
    assert dt < 3, dt
    assert "INTERRUPTED" in out and "KeyboardInterrupt" in err and rc != 0, (out, err)


def test_ctrl_c_stops_verify_rollout():
    p = subprocess.Popen(
        [sys.executable, "-m", "emurust", "verify", "rollout", DODGE, "--frames", "1000000", "--quiet"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=str(ROOT), preexec_fn=default_sigint,
    )
    try:
        time.sleep(8)  # imports PyBoy, starts both emulators and runs frames
        assert p.poll() is None, p.communicate()
        t0 = time.monotonic()
        os.kill(p.pid, signal.SIGINT)
        out, err = p.communicate(timeout=30)
        dt = time.monotonic() - t0
    finally:
        if p.poll() is None:
            p.kill()
            p.communicate()
    assert dt < 3, dt
    assert p.returncode == 130, (p.returncode, out, err)
    assert "Traceback" not in err


def test_chunked_tick_is_bit_exact():
    """tick(n) now runs in slices; the result must equal frame-by-frame ticks."""
    a = emurust.GameBoy(DODGE)
    b = emurust.GameBoy(DODGE)
    a.tick(600, True, True)
    for _ in range(599):
        b.tick(1, False, False)
    b.tick(1, True, True)
    assert a.save_state() == b.save_state()
    assert np.array_equal(a.screen, b.screen)
    assert np.array_equal(a.sound_samples(), b.sound_samples())


# ---------------------------------------------------------------------------- threads

def _hammer(ops, seconds=2.0, threads=4):
    """Call random ops from `threads` threads for `seconds`. Returns (calls, errors by type)."""
    errors: dict[str, int] = {}
    calls = [0]
    lock = threading.Lock()
    stop = time.monotonic() + seconds

    def worker(seed):
        rng = np.random.default_rng(seed)
        while time.monotonic() < stop:
            op = ops[rng.integers(len(ops))]
            try:
                op(rng)
            except BaseException as e:  # noqa: BLE001 - PanicException is a BaseException
                name = type(e).__name__
                if not (isinstance(e, RuntimeError) and "another thread" in str(e)):
                    name = f"{name}: {e}"
                with lock:
                    errors[name] = errors.get(name, 0) + 1
            with lock:
                calls[0] += 1

    ts = [threading.Thread(target=worker, args=(i,)) for i in range(threads)]
    for t in ts:
        t.start()
    for t in ts:
        t.join(timeout=60)
        assert not t.is_alive()
    return calls[0], errors


def _only_busy_errors(errors):
    bad = {k: v for k, v in errors.items() if k != "RuntimeError"}
    assert not bad, bad


def test_four_threads_hammering_one_gameboy_never_panic():
    gb = emurust.GameBoy(DODGE)
    gb.tick(10)
    state = gb.save_state()
    ops = [
        lambda r: gb.tick(int(r.integers(1, 30))),
        lambda r: gb.read(0xC000, 64),
        lambda r: gb.read(int(r.integers(0, 0x10000))),
        lambda r: gb.write(0xC100, int(r.integers(0, 256))),
        lambda r: gb.save_state(),
        lambda r: gb.load_state(state),
        lambda r: np.asarray(gb.screen).sum(),
        lambda r: np.asarray(gb.screen_grey).sum(),
        lambda r: np.asarray(gb.screen_shade).sum(),
        lambda r: gb.registers(),
        lambda r: gb.button_press("a"),
        lambda r: gb.frame_count,
    ]
    calls, errors = _hammer(ops)
    assert calls > 200
    _only_busy_errors(errors)
    gb.load_state(state)  # still fully usable
    gb.tick(5)


def test_four_threads_hammering_one_batch_never_panic():
    b = _core.Batch(DODGE, 4, frame_skip=4, obs=["grey", "ram"], ram=[(0xC000, 8)], num_threads=2)
    b.reset()
    state = b.save_state(0)
    ops = [
        lambda r: b.step(r.integers(0, b.num_actions, 4)),
        lambda r: b.reset(np.array([True, False, True, False])),
        lambda r: b.read(1, 0xC000, 16),
        lambda r: b.save_state(2),
        lambda r: b.load_state(3, state),
        lambda r: b.buffers["grey"].sum(),
        lambda r: b.screen_rgb(0),
        lambda r: b.episode_steps,
    ]
    calls, errors = _hammer(ops)
    assert calls > 100
    _only_busy_errors(errors)
    b.step(np.zeros(4, dtype=np.int64))


def test_a_second_thread_gets_a_clear_error_during_a_long_tick():
    frames = 60_000  # about 1-12 s, whatever the machine: long enough to be caught running
    gb = emurust.GameBoy(DODGE)
    t = threading.Thread(target=gb.tick, args=(frames,))
    t.start()
    deadline = time.monotonic() + 10
    while True:  # wait until the tick holds the emulator
        try:
            gb.frame_count  # noqa: B018
        except RuntimeError:
            break
        assert time.monotonic() < deadline, "the tick never started"
        time.sleep(0.001)
    with pytest.raises(RuntimeError, match="another thread"):
        gb.screen  # noqa: B018
    for call in (lambda: gb.read(0xC000), lambda: gb.tick(1), lambda: gb.save_state(), lambda: gb.frame_count):
        with pytest.raises(RuntimeError, match="another thread"):
            call()
    assert t.is_alive()  # every call above was refused while the tick ran
    t.join(timeout=120)
    assert gb.frame_count == frames


def test_batch_buffers_cannot_be_made_writeable():
    b = _core.Batch(DODGE, 2, obs=["grey", "rgb", "ram"], ram=[(0xC000, 4)], frame_skip=2)
    b.reset()
    bufs = b.buffers
    assert set(bufs) == {"grey", "rgb", "ram", "rewards", "terminated", "truncated"}
    for name, arr in bufs.items():
        for a in (arr, arr[0], arr.view(), arr.reshape(-1)):
            assert not a.flags.writeable
            with pytest.raises(ValueError):
                a.flags.writeable = True
        base = arr.base
        while isinstance(base, np.ndarray):  # no array in the chain can be made writeable
            with pytest.raises(ValueError):
                base.flags.writeable = True
            base = base.base
        with pytest.raises(ValueError):
            arr[...] = 1
    # The dict handed out is a copy: changing it changes nothing inside the batch.
    bufs["grey"] = None
    del bufs["rewards"]
    assert isinstance(b.buffers["grey"], np.ndarray) and "rewards" in b.buffers
    b.step(np.array([1, 2]))


def test_screen_views_cannot_be_made_writeable():
    gb = emurust.GameBoy(DODGE)
    gb.tick(2)
    for arr in (gb.screen, gb.screen_grey, gb.screen_shade):
        for a in (arr, arr[0], arr.view()):
            with pytest.raises(ValueError):
                a.flags.writeable = True


# ---------------------------------------------------------------------------- integers

def _gb_misuse():
    gb = emurust.GameBoy(DODGE)
    mbc1 = emurust.GameBoy(MBC1)
    return [
        lambda: gb.read(0x100, 2**63 - 1),
        lambda: gb.read(0xFFFF, 2),
        lambda: gb.read(0, -1),
        lambda: gb.read(-1),
        lambda: gb.read(0x10000),
        lambda: gb.read_banked(2**40, 0xA000),
        lambda: gb.read_banked(2**62, 0xA000),
        lambda: gb.read_banked(-1, 0x4000),
        lambda: gb.read_banked(1, 0xA000),  # Dodge has no cartridge RAM bank 1
        lambda: gb.read_banked(0, 0x10000),
        lambda: mbc1.read_banked(2**51, 0xA000),
        lambda: mbc1.read_banked(1000, 0x4000),
        lambda: gb.read_rom_bank(10**6, 0x4000),
        lambda: gb.read_rom_bank(1, -5),
        lambda: gb.tick(-1),
        lambda: gb.tick(2**40),
        lambda: gb.write(0xC000, 256),
        lambda: gb.write(2**40, 1),
        lambda: _core.Host(gb).set_cart_ram_byte(2**61, 0, 1),
    ]


def test_python_api_integer_misuse_raises_value_error():
    cases = _gb_misuse()
    assert len(cases) == 19
    for i, f in enumerate(cases):
        try:
            f()
        except ValueError:
            continue
        pytest.fail(f"case {i} did not raise ValueError")
    gb = emurust.GameBoy(DODGE)
    assert _core.Host(gb).cart_ram_byte(2**61, 0) is None


BATCH_MISUSE = [
    dict(ram=[(1, 2**63 - 1)], obs="ram"),
    dict(ram=[(0xC000, 0)], obs="ram"),
    dict(ram=[(0xFFFF, 2)], obs="ram"),
    dict(ram=[(-1, 2)], obs="ram"),
    dict(frame_skip=-1),
    dict(frame_skip=0),
    dict(frame_skip=2**40),
    dict(press_frames=-1),
    dict(max_episode_steps=-1),
    dict(noop_max=-1),
    dict(reset_script=[("start", -1)]),
    dict(reset_script=[("start", 1_000_000)] * 200),
    dict(num_threads=0),
    dict(num_threads=-3),
    dict(reward=[(0xFFFF, "u16le", 1.0, True)]),
    dict(reward=[(0x10000, "u8", 1.0, True)]),
]


@pytest.mark.parametrize("kw", BATCH_MISUSE, ids=[str(k) for k in BATCH_MISUSE])
def test_batch_integer_misuse_raises_value_error(kw):
    with pytest.raises(ValueError):
        _core.Batch(DODGE, 2, **kw)


def test_batch_call_misuse():
    b = _core.Batch(DODGE, 2, frame_skip=2)
    for f in (
        lambda: b.read(0, 0xC000, 2**63 - 1),
        lambda: b.read(0, 0x10000, 1),
        lambda: b.read(0, 0xC000, -1),
        lambda: b.step(np.array([0, 99])),
        lambda: b.step(np.array([-1, 0])),
        lambda: _core.Batch(DODGE, 0),
        lambda: _core.Batch(DODGE, -5),
        lambda: _core.set_num_threads(0),
        lambda: _core.set_num_threads(10**6),
    ):
        with pytest.raises((ValueError, IndexError)):
            f()
    for f in (lambda: b.save_state(5), lambda: b.read(-1, 0xC000, 1)):
        with pytest.raises(IndexError):
            f()


def test_envs_integer_misuse():
    from emurust.envs import GameBoyVectorEnv

    for kw in (dict(frame_skip=-1), dict(max_episode_steps=-3), dict(noop_max=-1), dict(num_threads=0),
               dict(ram=[(1, 2**63 - 1)], obs="ram")):
        with pytest.raises(ValueError):
            GameBoyVectorEnv(2, rom=DODGE, **kw)
    with pytest.raises((ValueError, TypeError)):
        GameBoyVectorEnv(-2, rom=DODGE)


def test_bad_emurust_num_threads_variable():
    code = f"from emurust import _core; _core.Batch({DODGE!r}, 1)"
    r = subprocess.run([sys.executable, "-c", code], env={**os.environ, "EMURUST_NUM_THREADS": "lots"},
                       capture_output=True, text=True, timeout=120)
    assert r.returncode != 0 and "EMURUST_NUM_THREADS" in r.stderr
    r = subprocess.run([sys.executable, "-c", "import emurust; print(emurust.get_num_threads())"],
                       env={**os.environ, "EMURUST_NUM_THREADS": "3"}, capture_output=True, text=True, timeout=120)
    assert r.stdout.strip() == "3", r.stderr


def test_state_of_a_rom_differing_in_one_byte_is_refused(tmp_path):
    rom = bytearray(open(DODGE, "rb").read())
    rom[-1] ^= 0xFF  # same header, same layout, one byte of code/data differs
    other = emurust.GameBoy(bytes(rom))
    gb = emurust.GameBoy(DODGE)
    gb.tick(5)
    with pytest.raises(emurust.StateError, match="different ROM"):
        other.load_state(gb.save_state())
    b = _core.Batch(bytes(rom), 1)
    with pytest.raises(emurust.StateError):
        b.set_start_state(gb.save_state())
    with pytest.raises(emurust.StateError):
        b.load_state(0, gb.save_state())


# ---------------------------------------------------------------------------- CLI misuse

CLI_MISUSE = [
    ["run", "--frames", "-100"],
    ["run", "--frames", "0"],
    ["run", "--frame-skip", "-1"],
    ["run", "--frame-skip", "0"],
    ["run", "--frames", "abc"],
    ["run", "no-such-rom.gb"],
    ["run", "tests"],
    ["run", "README.md"],
    ["run", "--screenshot", "/proc/no/such/dir/x.png", "--frames", "1"],
    ["bench", "--frames", "-1"],
    ["bench", "--frames", "0"],
    ["bench", "--repeat", "0"],
    ["bench", "--timeout", "-5"],
    ["bench", "--engines", "nope"],
    ["bench", "--patterns", "nope"],
    ["verify", "rollout", DODGE, "--frames", "-5"],
    ["verify", "rollout", DODGE, "--render-every", "0"],
    ["verify", "rollout", DODGE, "--compare-every", "-1"],
    ["verify", "rollout", DODGE, "--state-every", "0"],
    ["verify", "rollout", "no-such-rom.gb"],
    ["verify", "rollout", DODGE, "--states", "no-such-dir"],
    ["verify", "cpu", "--vectors", "no-such-dir"],
    ["verify", "make-states", DODGE, "--frames", "-5"],
    ["verify"],
    ["nosuchcommand"],
    ["train", "--steps", "-1"],
    ["train", "--envs", "0"],
    ["play", "--random", "--episodes", "-1"],
    ["prompt", "nosuchtemplate"],
]


@pytest.mark.parametrize("args", CLI_MISUSE, ids=[" ".join(a).replace(DODGE, "DODGE") for a in CLI_MISUSE])
def test_cli_misuse_is_one_line_error(args, tmp_path):
    r = subprocess.run([sys.executable, "-m", "emurust", *args], capture_output=True, text=True,
                       timeout=120, cwd=str(tmp_path) if args[0] != "run" else str(ROOT))
    assert r.returncode != 0, (r.stdout, r.stderr)
    assert "Traceback" not in r.stderr, r.stderr
    err = [line for line in r.stderr.splitlines() if line.strip()]
    assert err and len(err[-1]) > 0
    # argparse usage errors print a usage line and one error line; ours print one line
    assert len([line for line in err if not line.startswith(("usage:", " "))]) <= 2, r.stderr


def test_screen_views_stay_pinned_across_state_loads():
    """The zero-copy views point into the emulator's picture buffers: loading a state (ours or
    PyBoy's) must copy into those buffers, never replace them."""
    for cgb in (False, True):
        gb = emurust.GameBoy(DODGE, cgb=cgb)
        gb.tick(30)
        state, pyboy_state = gb.save_state(), gb.save_pyboy_state()
        views = (gb.screen, gb.screen_grey, gb.screen_shade)
        addrs = [v.ctypes.data for v in views]
        gb.tick(40)
        for load in (lambda: gb.load_state(state), lambda: gb.load_pyboy_state(pyboy_state)):
            load()
            gb.tick(1)
            fresh = (gb.screen, gb.screen_grey, gb.screen_shade)
            assert [v.ctypes.data for v in fresh] == addrs
            for v, f in zip(views, fresh):
                np.testing.assert_array_equal(v, f)
