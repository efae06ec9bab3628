"""The user-ROM game tasks (emurust/Tetris-v0, SuperMarioLand-v0, Kirby-v0, 2048-v0,
PokemonRed-v0) and the reward-spec terms they need (Sum, Ratio, Popcount, Digits, Visited, All).

The "user ROMs" are our wrapper test ROMs (roms/wrappers/wrap_*.gb): they carry the games'
cartridge titles and scribble pseudo-random values where the games keep what the rewards read.
Every reward and termination of a 4-environment make_vec run is checked against a pure-Python
recomputation of the task's definition (written here from the games' public RAM facts, not
from emurust.user_rom_games) on emurust.GameBoy instances stepped side by side with the same
actions, whose memory is also checked to match the batch's.
"""

from __future__ import annotations

import pathlib

import numpy as np
import pytest

gym = pytest.importorskip("gymnasium")

import emurust  # noqa: E402
import emurust.envs  # noqa: E402,F401  (registers the ids)
from emurust import _core  # noqa: E402
from emurust.rewards import All, Condition, Digits, LineRegister, Popcount, Ratio, Sum, Term, Visited, parse_reward, parse_terminate  # noqa: E402

ROOT = pathlib.Path(__file__).resolve().parents[1]
WRAPPERS = ROOT / "roms" / "wrappers"


def rom_of(name: str) -> str:
    return str(WRAPPERS / f"wrap_{name}.gb")


def start_state(rom: str, frames: int = 60) -> bytes:
    """A state some frames into the ROM (past the all-zero RAM of power-on), as a user's
    in-game start state would be."""
    gb = emurust.GameBoy(pathlib.Path(rom).read_bytes())
    gb.tick(frames, False)
    return gb.save_state()


# ---------------------------------------------------------------- the definitions, in Python


def digits(read, addr: int, n: int, blank=None) -> int:
    v = 0
    for b in read(addr, n):
        v = v * 10 + (0 if b == blank else b)
    return v


def bcd(b: int) -> int:
    return (b >> 4) * 10 + (b & 0x0F)


def popcount(read, addr: int, n: int) -> int:
    return sum(bin(b).count("1") for b in read(addr, n))


def u16be(read, addr: int) -> int:
    hi, lo = read(addr, 2)
    return hi << 8 | lo


class Definition:
    """One environment's reward bookkeeping: values at the reset, then reward and end per step."""

    def reset(self, read) -> None:
        self.prev = self.values(read)

    def step(self, read) -> tuple[float, bool]:
        now = self.values(read)
        r = self.reward(now, self.prev)
        self.prev = now
        return r, self.done(read)


class Tetris(Definition):
    # Score: 6 digit tiles at row 3, column 13 of the 0x9800 map; lines: 4 at row 10, column 14.
    def values(self, read):
        return digits(read, 0x9800 + 3 * 32 + 13, 6, 47), digits(read, 0x9800 + 10 * 32 + 14, 4, 47)

    def reward(self, now, prev):
        return (now[0] - prev[0]) + 10 * (now[1] - prev[1])

    def done(self, read):
        return read(0x9802, 1)[0] == 135


class SuperMarioLand(Definition):
    # fitness = 10000 lives + score + 10 time + 10 best progress (progress = 16 block + x).
    def reset(self, read):
        super().reset(read)
        self.best = self.prev[3]

    def values(self, read):
        lives = bcd(read(0xDA15, 1)[0])
        score = digits(read, 0x9800 + 32, 6, 300 - 256)
        t = read(0xDA01, 2)
        # The fine scroll: SCX as screen line 16 was drawn (0 with the LCD off), as PyBoy's
        # wrapper reads it from screen.tilemap_position_list.
        scx = _core.Host(self.gb).line_parameters()[16][0] if read(0xFF40, 1)[0] & 0x80 else 0
        progress = 16 * read(0xC0AB, 1)[0] + read(0xC202, 1)[0] + (scx - 7) % 16
        return lives, score, bcd(t[0]) + 100 * bcd(t[1]), progress

    def reward(self, now, prev):
        r = 10000 * (now[0] - prev[0]) + (now[1] - prev[1]) + 10 * (now[2] - prev[2])
        r += 10 * max(0, now[3] - self.best)
        self.best = max(self.best, now[3])
        return r

    def done(self, read):
        return bcd(read(0xDA15, 1)[0]) == 0 or read(0xC0A4, 1)[0] == 0x39


class Kirby(Definition):
    def values(self, read):
        d = read(0xD070, 4)
        return sum(d[n] * 10 ** (4 - n) for n in range(4)), read(0xD086, 1)[0]

    def reward(self, now, prev):
        return (now[0] - prev[0]) + 10 * (now[1] - prev[1])

    def done(self, read):
        return read(0xD089, 1)[0] == 1 and read(0xD086, 1)[0] == 0


class Game2048(Definition):
    # wrap_2048.sym: _score at C840 (u16 LE), _state at C843 (3: game over).
    def values(self, read):
        lo, hi = read(0xC840, 2)
        return lo | hi << 8

    def reward(self, now, prev):
        return now - prev

    def done(self, read):
        return read(0xC843, 1)[0] == 3


class PokemonRed(Definition):
    PARTY = [0xD16B + 0x2C * i for i in range(6)]

    def reset(self, read):
        self.seen = set()
        super().reset(read)

    def values(self, read):
        events = popcount(read, 0xD747, 0xD886 - 0xD747 + 1)
        levels = sum(read(p + 0x21, 1)[0] for p in self.PARTY)
        badges = popcount(read, 0xD356, 1)
        self.seen.add((read(0xD35E, 1)[0], read(0xD362, 1)[0], read(0xD361, 1)[0]))
        hp = sum(u16be(read, p + 1) for p in self.PARTY)
        max_hp = sum(u16be(read, p + 0x22) for p in self.PARTY)
        return events, levels, badges, len(self.seen), hp / max_hp if max_hp else 0.0

    def reward(self, now, prev):
        return (4 * (now[0] - prev[0]) + (now[1] - prev[1]) + 10 * (now[2] - prev[2]) + 0.1 * (now[3] - prev[3])
                + 4 * max(0.0, now[4] - prev[4]))

    def done(self, read):
        return False


TASKS = {
    "emurust/Tetris-v0": ("tetris", Tetris),
    "emurust/SuperMarioLand-v0": ("sml", SuperMarioLand),
    "emurust/Kirby-v0": ("kirby", Kirby),
    "emurust/2048-v0": ("2048", Game2048),
    "emurust/PokemonRed-v0": ("pokered", PokemonRed),
}


class Mirror:
    """emurust.GameBoy instances stepped as the batch steps its environments (a step presses
    the action's buttons for press_frames frames, then runs the rest of frame_skip; a reset
    loads the start state and runs one frame), with NEXT_STEP autoreset."""

    def __init__(self, rom: str, start: bytes, n: int, actions, frame_skip: int, press: int, definition):
        data = pathlib.Path(rom).read_bytes()
        self.gbs = [emurust.GameBoy(data) for _ in range(n)]
        self.defs = [definition() for _ in range(n)]
        for d, gb in zip(self.defs, self.gbs):
            d.gb = gb  # for what is not in memory (Super Mario Land's line registers)
        self.start, self.actions, self.frame_skip, self.press = start, actions, frame_skip, press
        self.pending_reset = np.zeros(n, bool)

    def _reset(self, i: int) -> None:
        gb = self.gbs[i]
        gb.load_state(self.start)
        gb.buttons = 0
        gb.tick(1)
        self.defs[i].reset(gb.read)

    def reset(self) -> None:
        for i in range(len(self.gbs)):
            self._reset(i)
        self.pending_reset[:] = False

    def step(self, actions):
        n = len(self.gbs)
        rewards, ends = np.zeros(n), np.zeros(n, bool)
        for i, a in enumerate(actions):
            if self.pending_reset[i]:
                self._reset(i)
                continue
            gb = self.gbs[i]
            names = [] if self.actions[a] == "noop" else self.actions[a].split("+")
            for b in names:
                gb.button_press(b)
            gb.tick(self.press, False)
            for b in names:
                gb.button_release(b)
            gb.tick(self.frame_skip - self.press, False)
            rewards[i], ends[i] = self.defs[i].step(gb.read)
        self.pending_reset = ends.copy()
        return rewards, ends


@pytest.mark.parametrize("env_id", list(TASKS))
def test_make_vec_rewards_and_ends_match_the_definition(env_id):
    name, definition = TASKS[env_id]
    rom, n = rom_of(name), 4
    start = start_state(rom)
    env = gym.make_vec(env_id, num_envs=n, rom=rom, start_state=start)
    inner = env.unwrapped
    from emurust.user_rom_games import USER_ROM_GAMES

    task = next(t for t in USER_ROM_GAMES.values() if t.env_id == env_id)
    assert inner.batch.frame_skip == task.frame_skip
    mirror = Mirror(rom, start, n, list(task.actions), task.frame_skip, min(task.press_frames, task.frame_skip),
                    definition)
    env.reset(seed=1)
    mirror.reset()
    rng = np.random.default_rng(7)
    total_ends, nonzero, parts = 0, 0, set()
    for step in range(200):
        a = rng.integers(0, len(task.actions), n)
        _, r, term, trunc, _ = env.step(a)
        mr, mt = mirror.step(a)
        np.testing.assert_allclose(r, mr, rtol=1e-9, atol=1e-9, err_msg=f"{env_id} step {step}")
        assert (term == mt).all(), (env_id, step, term, mt)
        assert not trunc.any()
        for i, gb in enumerate(mirror.gbs):  # the mirror is in lockstep with the batch
            assert inner.batch.read(i, 0xC000, 0x2000) == gb.read(0xC000, 0x2000)
            assert inner.batch.read(i, 0x9800, 0x800) == gb.read(0x9800, 0x800)
        total_ends += int(term.sum())
        nonzero += int((r != 0).sum())
        if env_id == "emurust/Kirby-v0":  # each half of Kirby's game-over condition
            parts |= {(k, bool(v)) for gb in mirror.gbs for k, v in
                      (("no lives", gb.read(0xD089) == 1), ("no health", gb.read(0xD086) == 0))}
    assert nonzero > 100, "the rewards must vary over the run"
    if env_id == "emurust/PokemonRed-v0":
        assert total_ends == 0
    elif env_id == "emurust/Kirby-v0":
        # On this ROM the two never hold together; each alone must not end the episode.
        assert total_ends == 0 and parts == {(k, v) for k in ("no lives", "no health") for v in (False, True)}
    else:
        assert total_ends > 0, "the run must see episode ends"
    env.close()


def test_pokemon_red_terms_on_a_rom_whose_ram_changes():
    """Popcount (event flags, badges), Sum (party levels) and Visited ((map, x, y)) alone, each
    checked step by step against Python, and each seen to change."""
    rom = rom_of("pokered")
    start = start_state(rom)
    party = [0xD16B + 0x2C * i + 0x21 for i in range(6)]
    reward = [Popcount(0xD747, 320), Sum(party), Popcount(0xD356, 1), Visited((0xD35E, 0xD362, 0xD361), delta=False)]
    n = 3
    batch = _core.Batch(rom, n, obs="ram", ram=[(0xC000, 1)], frame_skip=4, start_state=start,
                        reward=parse_reward([reward[0]]))
    singles = [_core.Batch(rom, n, obs="ram", ram=[(0xC000, 1)], frame_skip=4, start_state=start,
                           reward=parse_reward([t])) for t in reward]
    for b in [batch] + singles:
        b.reset()
    seen = [set() for _ in range(n)]
    for i in range(n):
        seen[i].add(tuple(singles[3].read(i, a, 1)[0] for a in (0xD35E, 0xD362, 0xD361)))
    history = {k: set() for k in range(4)}
    revisits = 0
    rng = np.random.default_rng(5)
    for step in range(300):
        acts = rng.integers(0, 13, n)
        for b in singles:
            b.step(acts)
        for i in range(n):
            read = lambda a, k=1: singles[0].read(i, a, k)  # noqa: E731
            events = popcount(read, 0xD747, 320)
            assert singles[0].buffers["rewards"][i] == events
            read = lambda a, k=1: singles[1].read(i, a, k)  # noqa: E731
            assert singles[1].buffers["rewards"][i] == sum(read(a)[0] for a in party)
            read = lambda a, k=1: singles[2].read(i, a, k)  # noqa: E731
            assert singles[2].buffers["rewards"][i] == popcount(read, 0xD356, 1)
            key = tuple(singles[3].read(i, a, 1)[0] for a in (0xD35E, 0xD362, 0xD361))
            revisits += key in seen[i]
            seen[i].add(key)
            assert singles[3].buffers["rewards"][i] == len(seen[i])
            for k in range(4):
                history[k].add(float(singles[k].buffers["rewards"][i]))
    assert all(len(h) > 3 for h in history.values()), history
    assert revisits > 10, "positions must repeat (counted once)"
    # A reset empties the visited set: the start position alone.
    v = singles[3]
    v.reset()
    keys = [tuple(v.read(i, a, 1)[0] for a in (0xD35E, 0xD362, 0xD361)) for i in range(n)]
    v.step(np.zeros(n, dtype=np.int64))
    for i in range(n):
        now = tuple(v.read(i, a, 1)[0] for a in (0xD35E, 0xD362, 0xD361))
        assert v.buffers["rewards"][i] == len({keys[i], now})


def test_wrong_title_and_missing_rom_are_clear_errors():
    with pytest.raises(ValueError, match=r"cartridge title is 'SUPER MARIOLAND', expected 'TETRIS'"):
        gym.make_vec("emurust/Tetris-v0", num_envs=2, rom=rom_of("sml"))
    with pytest.raises(ValueError, match=r"expected 'POKEMON RED' or 'POKEMON BLUE'"):
        gym.make("emurust/PokemonRed-v0", rom=rom_of("kirby"))
    for env_id in TASKS:
        with pytest.raises(ValueError, match=r"needs rom=.*does not ship"):
            gym.make_vec(env_id, num_envs=2)
    with pytest.raises(ValueError, match=r"too small"):
        gym.make("emurust/Kirby-v0", rom=b"\0" * 100)


def test_2048_needs_its_symbol_file():
    data = pathlib.Path(rom_of("2048")).read_bytes()
    with pytest.raises(ValueError, match=r"symbols \['_score', '_state'\] not found.*symbols="):
        gym.make("emurust/2048-v0", rom=data)
    env = gym.make("emurust/2048-v0", rom=data, symbols=str(WRAPPERS / "wrap_2048.sym"))
    env.reset(seed=0)
    env.close()


@pytest.mark.parametrize("env_id", list(TASKS))
def test_check_env_passes(env_id):
    from gymnasium.utils.env_checker import check_env

    rom = rom_of(TASKS[env_id][0])
    env = gym.make(env_id, rom=rom, start_state=start_state(rom))
    check_env(env.unwrapped, skip_render_check=True)
    env.close()


def test_sb3_vecenv_gives_the_same_rewards():
    pytest.importorskip("stable_baselines3")
    from emurust.sb3 import EmurustVecEnv

    rom = rom_of("kirby")
    start = start_state(rom)
    sb3 = EmurustVecEnv(3, game="kirby", rom=rom, start_state=start)
    gv = gym.make_vec("emurust/Kirby-v0", num_envs=3, rom=rom, start_state=start, autoreset_mode="SameStep")
    sb3.reset()
    gv.reset(seed=0)
    rng = np.random.default_rng(3)
    for _ in range(60):
        a = rng.integers(0, sb3.action_space.n, 3)
        sb3.step_async(a)
        _, r1, d1, _ = sb3.step_wait()
        _, r2, t2, tr2, _ = gv.step(a)
        np.testing.assert_array_equal(r1, r2)
        np.testing.assert_array_equal(d1, t2 | tr2)
    sb3.close()
    gv.close()


def test_overrides_win():
    rom = rom_of("tetris")
    env = gym.make_vec("emurust/Tetris-v0", num_envs=2, rom=rom, start_state=start_state(rom),
                       reward=[Term(0xC000, "u8")], terminate=[], frame_skip=2, obs="ram", ram=[(0xC000, 1)])
    env.reset(seed=0)
    obs, r, term, _, _ = env.step(np.zeros(2, dtype=np.int64))
    assert env.unwrapped.batch.frame_skip == 2
    np.testing.assert_array_equal(r, obs[:, 0])
    env.close()


# ---------------------------------------------------------------- the spec's new terms


def test_spec_dataclasses_and_dicts_parse_alike():
    a = parse_reward([Popcount(0xD747, 320, 4.0, True), Sum([1, 2], "u16be", scales=[16, 1]),
                      Ratio([1], [3], "u16be", delta="increase"), Digits(0x9800, 6, 47),
                      Visited((1, 2, 3), capacity=100),
                      Sum([1], lines=[LineRegister(16, "SCX", -7, 16), (143, "wy")])])
    b = parse_reward([{"kind": "popcount", "addr": 0xD747, "length": 320, "weight": 4.0, "delta": True},
                      {"kind": "sum", "addrs": [1, 2], "type": "u16be", "scales": [16, 1]},
                      {"kind": "ratio", "addrs": [1], "den": [3], "type": "u16be", "delta": "increase"},
                      {"kind": "digits", "addr": 0x9800, "length": 6, "blank": 47},
                      {"kind": "visited", "addrs": (1, 2, 3), "capacity": 100},
                      {"kind": "sum", "addrs": [1], "lines": [{"line": 16, "register": "scx", "add": -7,
                                                               "modulo": 16}, {"line": 143, "register": "wy"}]}])
    assert a == b
    assert a[5]["lines"] == [(16, "scx", -7, 16, 1.0), (143, "wy", 0, 256, 1.0)]
    assert a[0] == {"kind": "popcount", "addrs": [0xD747], "length": 320, "weight": 4.0, "delta": "change"}
    assert a[4]["delta"] == "change", "Visited rewards new keys by default"
    assert parse_terminate([All(Condition(1, "u8", "==", 1), (2, "u8", "<", 3)), Condition(4, "u8", ">", 0)]) == [
        (1, "u8", "==", 1.0, 0), (2, "u8", "<", 3.0, 0), (4, "u8", ">", 0.0)]


@pytest.mark.parametrize("spec,message", [
    ({"kind": "nope", "addr": 1}, "unknown term kind 'nope'"),
    (Popcount(0xD747, 0), "length must be 1-"),
    (Popcount(0xFFFF, 2), "length must be 1-1"),
    (Visited(list(range(8))), "1-7 bytes"),
    (Visited([1], capacity=0), "capacity must be 1-"),
    (Sum([]), "at least one address"),
    (Sum([1, 2], scales=[1]), "1 scales for 2 addresses"),
    (Ratio([1], []), "den must list at least one address"),
    (Digits(1, 2, blank=300), "blank must be 0-255"),
    (Digits(1, 20), "length must be 1-19"),
    (Term(1, "u8", delta="sometimes"), "unknown delta 'sometimes'"),
    (Sum([0x10000]), "outside 0x0000-0xFFFF"),
    ({"kind": "sum", "addrs": [1], "den": [2]}, "unknown keys \\['den'\\]"),
    (Sum([1], lines=[LineRegister(144, "scx")]), "line must be 0-143"),
    (Sum([1], lines=[LineRegister(0, "lcdc")]), "unknown line register 'lcdc'"),
    (Sum([1], lines=[LineRegister(0, "scx", modulo=0)]), "modulo must be 1-256"),
    (Sum([1], lines=[LineRegister(0, "scx", add=256)]), "add must be -255-255"),
    (Sum([1], lines=[LineRegister(0, "scx", scale=float("inf"))]), "scale must be finite"),
    (Sum([1], lines=[(0,)]), "expected \\(line, register, add, modulo, scale\\)"),
    (Sum([1], lines=[{"line": 0, "register": "scx", "mod": 3}]), "unknown keys \\['mod'\\]"),
])
def test_bad_specs_are_clear_value_errors(spec, message):
    with pytest.raises(ValueError, match=message):
        parse_reward([spec])


@pytest.mark.parametrize("spec,message", [
    ({"kind": "popcount", "addrs": [1]}, "needs length"),
    ({"kind": "visited", "addrs": [1] * 8}, "1-7 bytes"),
    ({"kind": "sum", "addrs": [1], "blank": 3}, "blank does not apply"),
    ({"kind": "sum", "addrs": [1], "wat": 3}, "unknown key \"wat\""),
    ({"kind": "value", "addrs": [1], "delta": "maybe"}, "unknown delta"),
    ({"addrs": [1]}, "'kind' is required"),
    ({"kind": "sum", "addrs": [1], "lines": [(144, "scx", 0, 16, 1.0)]}, "line 144 is outside 0-143"),
    ({"kind": "sum", "addrs": [1], "lines": [(0, "ly", 0, 16, 1.0)]}, "unknown line register"),
    ({"kind": "value", "addrs": [1], "lines": [(0, "scx", 0, 16, 1.0)]}, "lines apply to 'sum' terms only"),
])
def test_batch_refuses_bad_term_dicts(spec, message):
    """The Rust parser checks what it is given too (specs need not come through parse_reward)."""
    with pytest.raises(ValueError, match=message):
        _core.Batch(rom_of("tetris"), 1, obs="ram", ram=[(0xC000, 1)], reward=[spec])


def test_all_needs_every_condition_and_groups_are_checked():
    with pytest.raises(ValueError, match="All\\(\\) needs at least one condition"):
        All()
    with pytest.raises(TypeError, match="cannot nest"):
        parse_terminate([All(All(Condition(1, "u8", "==", 1)))])
    with pytest.raises(ValueError, match="group must be >= 0"):
        _core.Batch(rom_of("tetris"), 1, obs="ram", ram=[(0xC000, 1)], terminate=[(1, "u8", "==", 1.0, -2)])


def test_all_groups_end_episodes_when_every_condition_holds():
    """terminate=[All(lives byte == 1, health >= 6), a digit == 15]: checked against Python
    step by step on wrap_kirby, with ends by the group seen, and steps where only one half held."""
    rom = rom_of("kirby")
    cond = [All(Condition(0xD089, "u8", "==", 1), Condition(0xD086, "u8", ">=", 6)),
            Condition(0xD070, "u8", "==", 15)]
    n = 4
    b = _core.Batch(rom, n, obs="ram", ram=[(0xD070, 0x20)], frame_skip=3, terminate=parse_terminate(cond),
                    start_state=start_state(rom))
    b.reset()
    ends = halves = 0
    for _ in range(150):
        b.step(np.zeros(n, dtype=np.int64))
        ram = b.buffers["ram"]
        lives, health, digit = ram[:, 0x19], ram[:, 0x16], ram[:, 0]
        want = ((lives == 1) & (health >= 6)) | (digit == 15)
        np.testing.assert_array_equal(b.buffers["terminated"], want)
        ends += int(((lives == 1) & (health >= 6)).sum())
        halves += int(((lives == 1) ^ (health >= 6)).sum())
    assert ends > 0 and halves > 0
