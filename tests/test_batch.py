"""emurust._core.Batch: N emulators stepped together (Rayon, GIL released)."""

import pathlib

import numpy as np
import pytest

import emurust
from emurust import _core
from conftest import make_rom

ROOT = pathlib.Path(__file__).resolve().parent.parent
DODGE = str(ROOT / "games" / "dodge.gb")
SNAKE = str(ROOT / "games" / "snake.gb")
GREY = np.array([255, 153, 85, 0], dtype=np.uint8)
START = [(0, 10), ("start", 2), (0, 12)]


def writer_rom(pairs):
    """A ROM that stores `pairs` (addr, value) into memory then loops."""
    prog = bytearray()
    for addr, val in pairs:
        prog += bytes([0x3E, val, 0xEA, addr & 0xFF, addr >> 8])
    prog += b"\x18\xfe"
    return make_rom(program=bytes(prog))


def run_batch(n, threads, steps=25, seed=3, **kw):
    kw.setdefault("obs", ["grey", "ram"])
    kw.setdefault("ram", [(0xC000, 16)])
    b = _core.Batch(DODGE, n, num_threads=threads, frame_skip=6, noop_max=20, reset_script=START,
                    reward=[(0xC000, "u16le", 1.0, True)], terminate=[(0xC003, "u8", "==", 1.0)], **kw)
    b.seed(seed)
    b.reset()
    rng = np.random.default_rng(0)
    out = []
    for t in range(steps):
        a = rng.integers(0, b.num_actions, n)
        mask = np.zeros(n, dtype=bool)
        mask[t % n] = t % 7 == 6
        b.step(a, mask)
        out.append({k: v.copy() for k, v in b.buffers.items()})
    return out


def test_identical_whatever_the_thread_count():
    one = run_batch(6, 1)
    # The gang with blocks of several environments, of one, and more threads than
    # environments; and Rayon's scheduling (the Game Boy envs' default).
    others = [run_batch(6, 2, scheduler="gang"), run_batch(6, 4, scheduler="gang"), run_batch(6, 8, scheduler="gang"),
              run_batch(6, 3), run_batch(6, 8, scheduler="rayon")]
    for other in others:
        for x, y in zip(one, other):
            for k in x:
                np.testing.assert_array_equal(x[k], y[k], err_msg=k)
    # Something actually happened (scores moved, screens differ between environments).
    assert any(s["rewards"].any() for s in one)
    assert not np.array_equal(one[-1]["grey"][0], one[-1]["grey"][1])


def test_batch_matches_a_single_emulator_frame_for_frame():
    """Env 0 of a batch == a GameBoy driven by hand: press, tick(press), release, tick(rest)."""
    fs, press = 10, 4
    actions = _core.default_actions()
    b = _core.Batch(DODGE, 3, frame_skip=fs, press_frames=press, obs=["grey", "shades"], num_threads=2)
    b.reset()
    gb = emurust.GameBoy(DODGE)
    gb.tick(1, True)  # a reset with no idle frames and no script runs one frame
    np.testing.assert_array_equal(b.buffers["shades"][0, 0], gb.screen_shades())
    rng = np.random.default_rng(5)
    for _ in range(40):
        a = rng.integers(0, b.num_actions, 3)
        b.step(a)
        for name in actions[a[0]]:
            gb.button_press(name)
        gb.tick(press, False)
        for name in actions[a[0]]:
            gb.button_release(name)
        gb.tick(fs - press, True)
        np.testing.assert_array_equal(b.buffers["shades"][0, 0], gb.screen_shades())
        np.testing.assert_array_equal(b.buffers["grey"][0, 0], gb.screen_rgba()[:, :, 0])
        assert b.read(0, 0xC000, 32) == gb.read(0xC000, 32)
    assert b.frame_counts[0] == gb.frame_count


def test_observation_kinds_agree():
    b = _core.Batch(DODGE, 2, obs=["grey", "grey_half", "rgb", "rgb_chw", "shades", "ram"],
                    ram=[(0xC000, 4), (0xC008, 1)], reset_script=START, frame_skip=30)
    assert b.obs_shapes == {"grey": (1, 144, 160), "grey_half": (1, 72, 80), "rgb": (144, 160, 3),
                            "rgb_chw": (3, 144, 160), "shades": (1, 144, 160), "ram": (5,)}
    b.reset()
    b.step(np.array([3, 4]))
    buf = b.buffers
    for i in range(2):
        shades = buf["shades"][i, 0]
        assert shades.max() <= 3
        grey = GREY[shades]
        np.testing.assert_array_equal(buf["grey"][i, 0], grey)
        half = (grey.reshape(72, 2, 80, 2).astype(int).sum(axis=(1, 3)) + 2) // 4
        np.testing.assert_array_equal(buf["grey_half"][i, 0], half)
        np.testing.assert_array_equal(buf["rgb"][i], b.screen_rgb(i))
        np.testing.assert_array_equal(buf["rgb_chw"][i], b.screen_rgb(i).transpose(2, 0, 1))
        np.testing.assert_array_equal(buf["ram"][i], np.frombuffer(b.read(i, 0xC000, 4) + b.read(i, 0xC008, 1), np.uint8))
    assert buf["ram"][0, 4] == 1  # playing
    assert len(np.unique(buf["grey"][0])) > 1


def test_ram_only_observation_renders_nothing():
    b = _core.Batch(DODGE, 1, obs="ram", ram=[(0xC000, 16)], reset_script=START)
    b.reset()
    b.step(np.array([0]))
    assert set(b.buffers) == {"ram", "rewards", "terminated", "truncated"}
    assert b.screen_rgb(0).min() == 255  # the screen was never drawn: still blank


def test_value_types_and_conditions():
    rom = writer_rom([(0xC000, 0x12), (0xC001, 0x34), (0xC002, 0x56), (0xC003, 0xF0)])
    expect = {"u8": 0x12, "i8": 0x12, "u16le": 0x3412, "u16be": 0x1234, "bcd2": 1234, "bcd2le": 3412,
              "u24be": 0x123456, "u32le": 0xF0563412, "i32le": 0xF0563412 - 2**32, "bcd1": 12}
    terms = [(0xC000, t, 1.0, False) for t in expect]
    for (addr, t, w, d), v in zip(terms, expect.values()):
        b = _core.Batch(rom, 1, obs="ram", ram=[(0xC000, 1)], reward=[(addr, t, w, d)], frame_skip=2)
        b.reset()
        b.step(np.array([0]))
        assert b.buffers["rewards"][0] == v, t
    b = _core.Batch(rom, 1, obs="ram", ram=[(0xC000, 1)], reward=[(0xC003, "i8", 2.0, False)])
    b.reset()
    b.step(np.array([0]))
    assert b.buffers["rewards"][0] == -32.0
    for op, value, want in [("==", 0x12, True), ("!=", 0x12, False), ("<", 0x12, False), ("<=", 0x12, True),
                            (">", 0x11, True), (">=", 0x13, False)]:
        b = _core.Batch(rom, 1, obs="ram", ram=[(0xC000, 1)], terminate=[(0xC000, "u8", op, value)])
        b.reset()
        b.step(np.array([0]))
        assert b.buffers["terminated"][0] == want, op


def test_delta_rewards_follow_the_score_and_truncation():
    b = _core.Batch(DODGE, 2, obs="ram", ram=[(0xC000, 2)], reward=[(0xC000, "u16le", 0.5, True)],
                    reset_script=START, frame_skip=24, max_episode_steps=20)
    b.reset()
    prev = b.buffers["ram"].view("<u2")[:, 0].astype(float)
    for t in range(20):
        b.step(np.zeros(2, dtype=np.int64))
        score = b.buffers["ram"].view("<u2")[:, 0].astype(float)
        np.testing.assert_array_equal(b.buffers["rewards"], 0.5 * (score - prev))
        prev = score
        assert b.buffers["truncated"].tolist() == [t == 19] * 2
    assert prev.min() > 0
    assert b.episode_steps == [20, 20]


def test_game_over_terminates_and_reset_mask_resets_only_those():
    b = _core.Batch(DODGE, 3, obs="ram", ram=[(0xC000, 16)], terminate=[(0xC003, "u8", "==", 1)],
                    reset_script=START, frame_skip=24, noop_max=30)
    b.seed(1)
    b.reset()
    for _ in range(400):
        b.step(np.zeros(3, dtype=np.uint8))
        if b.buffers["terminated"].any():
            break
    term = b.buffers["terminated"].copy()
    assert term.any()
    i = int(np.flatnonzero(term)[0])
    assert b.buffers["ram"][i, 3] == 1  # game over flag
    steps = b.episode_steps
    b.step(np.zeros(3, dtype=np.uint8), term)
    after = b.episode_steps
    for j in range(3):
        assert after[j] == (0 if term[j] else steps[j] + 1)
    assert b.buffers["ram"][i, 8] == 1 and b.buffers["ram"][i, 2] == 3  # playing again, 3 lives
    assert b.buffers["rewards"][i] == 0 and not b.buffers["terminated"][i]


def test_seeding():
    def frames(seed):
        b = _core.Batch(DODGE, 4, obs="ram", ram=[(0xC004, 2)], noop_max=40)
        b.seed(seed)
        b.reset()
        first = b.frame_counts
        b.reset()
        return first + b.frame_counts

    assert frames(1) == frames(1)
    assert frames(1) != frames(2)
    assert len(set(frames(1))) > 2  # environments and successive resets differ
    b = _core.Batch(DODGE, 2, obs="ram", ram=[(0xC004, 2)], noop_max=40)
    b.seed([5, None])
    with pytest.raises(ValueError):
        b.seed([1, 2, 3])


def test_save_and_load_state_per_env_and_start_states():
    b = _core.Batch(DODGE, 2, obs=["grey_half", "ram"], ram=[(0xC000, 32)], reset_script=START, frame_skip=8)
    b.reset()
    for _ in range(5):
        b.step(np.array([1, 2]))
    s = b.save_state(0)
    b.load_state(1, s)
    for _ in range(10):
        b.step(np.array([5, 5]))
        np.testing.assert_array_equal(b.buffers["grey_half"][0], b.buffers["grey_half"][1])
        np.testing.assert_array_equal(b.buffers["ram"][0], b.buffers["ram"][1])
    # Episodes start from a given state.
    b.set_start_state(s, 1)
    assert b.start_state(1) == s
    b.reset(np.array([False, True]))
    assert b.read(1, 0xC000, 32) == emurust_state_ram(s)
    b.set_start_state(None)
    b.reset()
    assert b.read(0, 0xC008) == b"\x01"  # the reset script started the game from power-on again


def emurust_state_ram(state):
    gb = emurust.GameBoy(DODGE)
    gb.load_state(state)
    gb.buttons = 0  # a reset releases every button
    gb.tick(10, False)  # the reset script: 10 idle frames, START for 2, 12 more
    gb.button_press("start")
    gb.tick(2, False)
    gb.button_release("start")
    gb.tick(12, False)
    return gb.read(0xC000, 32)


def test_foreign_states_are_rejected_before_anything_changes():
    b = _core.Batch(DODGE, 2, obs="ram", ram=[(0xC000, 8)])
    b.reset()
    other = _core.Batch(SNAKE, 1, obs="ram", ram=[(0xC000, 8)])
    foreign = other.save_state(0)
    before = b.save_state(1)
    with pytest.raises(emurust.StateError):
        b.load_state(1, foreign)
    with pytest.raises(emurust.StateError):
        b.set_start_state(foreign)
    with pytest.raises(emurust.StateError):
        b.load_state(1, b"garbage" * 10)
    with pytest.raises(emurust.StateError):
        _core.Batch(DODGE, 2, start_state=foreign)
    assert b.save_state(1) == before
    assert b.start_state(0) == b.start_state(1)


def test_bad_arguments_raise_clear_errors_before_running():
    b = _core.Batch(DODGE, 3, obs="ram", ram=[(0xC000, 2)])
    b.reset()
    steps = b.episode_steps
    for bad, exc in [(np.zeros(2, dtype=np.int64), ValueError), (np.zeros((3, 1), dtype=np.int64), ValueError),
                     (np.zeros(3, dtype=np.float32), TypeError), ([0, 0, 0], TypeError),
                     (np.array([0, 13, 0]), ValueError), (np.array([0, -1, 0]), ValueError)]:
        with pytest.raises(exc):
            b.step(bad)
    with pytest.raises(ValueError):
        b.step(np.zeros(3, dtype=np.int64), np.zeros(2, dtype=bool))
    assert b.episode_steps == steps  # nothing ran
    for kw, exc in [({"obs": "colour"}, ValueError), ({"obs": ["grey", "grey"]}, ValueError),
                    ({"obs": "ram"}, ValueError), ({"reward": [(0xC000, "u17", 1.0, True)]}, ValueError),
                    ({"reward": [(0x10000, "u8", 1.0, True)]}, ValueError),
                    ({"reward": [(0xFFFF, "u16le", 1.0, True)]}, ValueError),
                    ({"terminate": [(0xC000, "u8", "=~", 1.0)]}, ValueError),
                    ({"actions": ["a", "jump"]}, ValueError), ({"actions": [1.5]}, TypeError),
                    ({"actions": []}, ValueError), ({"frame_skip": 0}, ValueError),
                    ({"num_threads": 0}, ValueError), ({"reset_script": [("start", -1)]}, ValueError),
                    ({"scheduler": "fast"}, ValueError)]:
        with pytest.raises(exc):
            _core.Batch(DODGE, 1, **kw)
    with pytest.raises(ValueError):
        _core.Batch(DODGE, 0)
    with pytest.raises(emurust.RomError):
        _core.Batch(b"\x00" * 100, 1)
    with pytest.raises(IndexError):
        b.save_state(3)


def test_scheduler_option_and_environment_variable(monkeypatch):
    # Defaults: Rayon for the Game Boy envs, the gang for Pong (each the device's faster).
    assert _core.Batch(DODGE, 2, num_threads=2).scheduler == "rayon"
    assert _core.PongBatch(8, num_threads=2).scheduler == "gang"
    assert _core.Batch(DODGE, 2, num_threads=2, scheduler="gang").scheduler == "gang"
    monkeypatch.setenv("EMURUST_SCHEDULER", "gang")
    assert _core.Batch(DODGE, 2, num_threads=2).scheduler == "gang"
    assert _core.Batch(DODGE, 2, num_threads=2, scheduler="rayon").scheduler == "rayon"  # the argument wins
    monkeypatch.setenv("EMURUST_SCHEDULER", "fastest")
    with pytest.raises(ValueError, match="EMURUST_SCHEDULER"):
        _core.Batch(DODGE, 2)


def test_batches_on_one_pool_stepped_from_two_python_threads_match_serial_runs(monkeypatch):
    """The gang runs one call at a time per pool: two Python threads stepping two batches that
    share a pool (GIL released in both) get what each batch gets alone."""
    import threading

    def run(b, seed, steps=12):
        b.seed(seed)
        b.reset()
        rng = np.random.default_rng(seed)
        out = []
        for _ in range(steps):
            b.step(rng.integers(0, b.num_actions, b.num_envs))
            out.append(b.buffers["grey"].copy())
        return out

    monkeypatch.setenv("EMURUST_NUM_THREADS", "3")  # the shared pool's size: both batches use it
    kw = dict(frame_skip=30, noop_max=20, reset_script=START, obs="grey")
    alone = [run(_core.Batch(DODGE, 7, **kw), s) for s in (1, 2)]
    together: dict = {}
    batches = [_core.Batch(DODGE, 7, **kw) for _ in range(2)]
    assert [b.num_threads for b in batches] == [3, 3]
    threads = [threading.Thread(target=lambda i=i: together.__setitem__(i, run(batches[i], i + 1))) for i in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    for i in range(2):
        for x, y in zip(alone[i], together[i]):
            np.testing.assert_array_equal(x, y)


def test_buffers_are_read_only_views():
    b = _core.Batch(DODGE, 2, obs="grey_half")
    b.reset()
    g = b.buffers["grey_half"]
    with pytest.raises(ValueError):
        g[0, 0, 0, 0] = 1
    with pytest.raises(ValueError):
        g.resize((4,), refcheck=False)


def test_actions_as_names_masks_and_lists():
    b = _core.Batch(DODGE, 1, actions=["noop", "a+right", ["b", "left"], 0x80])
    assert b.action_masks == [0, 0x11, 0x22, 0x80]
    assert _core.default_actions()[0] == []
    assert len(_core.default_actions()) == _core.Batch(DODGE, 1).num_actions


def _interleaved(threads_a, threads_b, steps=15):
    """Two batches of different sizes stepped alternately in one process."""
    kw = dict(frame_skip=6, noop_max=20, reset_script=START, obs=["grey", "ram"], ram=[(0xC000, 16)],
              reward=[(0xC000, "u16le", 1.0, True)])
    a = _core.Batch(DODGE, 5, num_threads=threads_a, **kw)
    b = _core.Batch(DODGE, 3, num_threads=threads_b, **kw)
    for x in (a, b):
        x.seed(9)
        x.reset()
    rng = np.random.default_rng(1)
    out_a, out_b = [], []
    for _ in range(steps):
        a.step(rng.integers(0, a.num_actions, 5))
        b.step(rng.integers(0, b.num_actions, 3))
        out_a.append({k: v.copy() for k, v in a.buffers.items()})
        out_b.append({k: v.copy() for k, v in b.buffers.items()})
    return out_a, out_b


def test_two_batches_in_one_process_match_one_batch_at_any_thread_count():
    ref_a, ref_b = _interleaved(1, 1)
    # None: the process's shared pool (both batches on it at once)
    for ta, tb in ((None, None), (2, None), (3, 2), (None, 4)):
        got_a, got_b = _interleaved(ta, tb)
        for ref, got in ((ref_a, got_a), (ref_b, got_b)):
            for x, y in zip(ref, got):
                for k in x:
                    np.testing.assert_array_equal(x[k], y[k], err_msg=f"{k} threads {ta},{tb}")
    assert any(s["rewards"].any() for s in ref_a)


def test_batches_share_one_thread_pool_per_process():
    import subprocess
    import sys
    import textwrap

    code = textwrap.dedent(f"""
        import os, numpy as np, emurust
        from emurust import _core
        def count_threads():
            n = 0
            for t in os.listdir("/proc/self/task"):
                with open(f"/proc/self/task/{{t}}/comm") as f:
                    n += f.read().startswith("emurust-batch")
            return n
        def pool_threads(expect):
            # A pool's threads name themselves when they first run, which the gang does not
            # wait for (its caller may step every environment itself): give them a moment.
            import time
            n, t0 = count_threads(), time.monotonic()
            while n != expect and time.monotonic() - t0 < 5:
                time.sleep(0.01)
                n = count_threads()
            return n
        emurust.set_num_threads(3)
        assert emurust.get_num_threads() == 3
        batches = [_core.Batch({DODGE!r}, 4, frame_skip=2) for _ in range(4)]
        for b in batches:
            b.reset(); b.step(np.zeros(4, dtype=np.int64))
            assert b.num_threads == 3
        shared = pool_threads(3)
        own = _core.Batch({DODGE!r}, 4, frame_skip=2, num_threads=2)
        own.reset()
        same = _core.Batch({DODGE!r}, 4, frame_skip=2, num_threads=3)  # the shared size: shared pool
        same.reset()
        print(shared, pool_threads(5))
    """)
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr
    assert r.stdout.split() == ["3", "5"]
