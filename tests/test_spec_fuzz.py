"""Fuzz of the batch reward/terminate spec parsers: ``emurust.rewards.parse_reward`` /
``parse_terminate`` and the Rust parser behind ``_core.Batch(reward=..., terminate=...)``.

A seeded generator writes hostile specs (wrong types, huge and negative ints, NaN/inf, empty
and deeply nested lists, unknown keys, wrong tuple lengths, bytes, None, addresses outside
0x0000-0xFFFF, huge Visited capacities, ...), mixed with valid pieces so that many specs get
deep into the checks. Every spec must either build a Batch that resets and steps, or be
refused with ValueError, TypeError or OverflowError carrying a message: never any other
exception (a Rust panic surfaces as pyo3's PanicException, a BaseException), a hang or a
crash.
"""

from __future__ import annotations

import collections
import math
import pathlib
import random
import time

import numpy as np
import pytest

from emurust import _core
from emurust.rewards import (
    All, Condition, Digits, Popcount, Ratio, Sum, Term, Visited, VALUE_TYPES, OPS, DELTAS,
    parse_reward, parse_terminate,
)

ROM = str(pathlib.Path(__file__).resolve().parents[1] / "games" / "dodge.gb")
ALLOWED = (ValueError, TypeError, OverflowError)
CASES = 3000  # specs per parser path (x2 paths)


class _Weird:
    """An object no parser knows."""

    def __repr__(self) -> str:
        return "<weird>"


def _nested(rng: random.Random, depth: int) -> object:
    x: object = rng.choice([0xC000, "u8", None, []])
    for _ in range(depth):
        x = [x] if rng.random() < 0.5 else (x,)
    return x


def junk(rng: random.Random) -> object:
    """A value of a hostile kind."""
    return rng.choice([
        None, True, False, 0, -1, 1, 255, 256, 0xFFFF, 0x10000, -0x10000, 2**31, 2**63 - 1, 2**63,
        2**64, -2**63 - 1, 10**40, -10**40, 1.5, -0.0, float("nan"), float("inf"), float("-inf"),
        1e308, 5e-324, "", "u8", "U16LE", "bcd5", "x" * 1000, "\x00", "\u00e9", b"u8", bytearray(b"\x01"),
        [], (), {}, set(), frozenset({1}), range(3), complex(1, 2), _Weird(), object(), np.int64(3),
        np.float32("nan"), np.array([1, 2]), np.uint8(200), _nested(rng, rng.randrange(1, 60)),
        [0xC000] * rng.randrange(0, 40), [None, "a"], {"addr": 1}, Term(0xC000), Condition(0xC000, "u8", "==", 1),
    ])


def maybe(rng: random.Random, good: object) -> object:
    """Mostly `good`, sometimes junk."""
    return good if rng.random() < 0.75 else junk(rng)


def addr(rng: random.Random) -> object:
    r = rng.random()
    if r < 0.6:
        return rng.randrange(0xC000, 0xE000)
    if r < 0.8:
        return rng.choice([0, 0xFFFF, 0xFFFE, 0xFFFD, 0x10000, -1, 2**16 + 5, 2**63, -2**70])
    return junk(rng)


def addrs(rng: random.Random) -> object:
    r = rng.random()
    if r < 0.7:
        return [addr(rng) for _ in range(rng.choice([0, 1, 2, 3, 7, 8, 50]))]
    if r < 0.8:
        return tuple(rng.randrange(0xC000, 0xC100) for _ in range(rng.randrange(1, 5)))
    return junk(rng)


def vtype(rng: random.Random) -> object:
    r = rng.random()
    if r < 0.7:
        return rng.choice(VALUE_TYPES)
    return rng.choice(["U8", "Bcd2LE", "bcd0", "bcd5", "u16", "u64le", "i24", "bcdle", "BCD3BE", "", "u8 ",
                       None, b"u8", 8, ["u8"]])


def weight(rng: random.Random) -> object:
    r = rng.random()
    if r < 0.6:
        return rng.uniform(-10, 10)
    return rng.choice([0, -3, 10**400, 2**64, float("nan"), float("inf"), float("-inf"), 1e308, -1e308,
                       True, "1.0", None, np.float64(2.5), complex(1, 0), [1.0]])


def delta(rng: random.Random) -> object:
    return rng.choice([True, False, *DELTAS, "true", "false", "CHANGE", "bogus", "", 0, 1, None, [], b"change"])


def length(rng: random.Random) -> object:
    return rng.choice([1, 2, 19, 20, 320, 0, -1, 0xFFFF, 0x10000, 0x10001, 2**63, -2**63, 2**80, None, 3.0, "4"])


def capacity(rng: random.Random) -> object:
    return rng.choice([1, 16, 1 << 14, 1 << 20, 1 << 24, (1 << 24) + 1, 0, -5, 2**62, 2**64, 10**30,
                       None, 1.0, "16"])


def term(rng: random.Random) -> object:
    """One reward term: a dataclass, a dict (the Python or the Rust form) or a tuple."""
    kind = rng.choice(["value", "sum", "ratio", "popcount", "digits", "visited"])
    fields = {"addr": addr(rng), "addrs": addrs(rng), "den": addrs(rng), "type": vtype(rng),
              "weight": weight(rng), "delta": delta(rng), "length": length(rng),
              "blank": rng.choice([None, 0, 0x7F, 255, 256, -1, "x"]), "capacity": capacity(rng),
              "scales": rng.choice([None, [1.0], [1.0, 2.0], [], [float("nan")], [float("inf")] * 3, "ab",
                                    [True], 3, [10**400]])}
    form = rng.random()
    if form < 0.35:
        try:
            if kind == "value":
                return Term(fields["addr"], fields["type"], fields["weight"], fields["delta"])
            if kind == "sum":
                return Sum(fields["addrs"], fields["type"], fields["weight"], fields["delta"], fields["scales"])
            if kind == "ratio":
                return Ratio(fields["addrs"], fields["den"], fields["type"], fields["weight"], fields["delta"])
            if kind == "popcount":
                return Popcount(fields["addr"], fields["length"], fields["weight"], fields["delta"])
            if kind == "digits":
                return Digits(fields["addr"], fields["length"], fields["blank"], fields["weight"], fields["delta"])
            return Visited(fields["addrs"], fields["weight"], fields["delta"], fields["capacity"])
        except ALLOWED:  # pragma: no cover - the dataclasses take anything
            return junk(rng)
    if form < 0.75:
        keys = {"value": ["addr", "type", "weight", "delta"], "sum": ["addrs", "type", "weight", "delta", "scales"],
                "ratio": ["addrs", "den", "type", "weight", "delta"],
                "popcount": ["addr", "length", "weight", "delta"],
                "digits": ["addr", "length", "blank", "weight", "delta"],
                "visited": ["addrs", "weight", "delta", "capacity"]}[kind]
        if rng.random() < 0.4:  # the normalised (Rust) form: one-address kinds take addrs=[a]
            keys = ["addrs" if k == "addr" else k for k in keys]
        d: dict = {k: fields[k] for k in keys if rng.random() < 0.85}
        if rng.random() < 0.8:
            d["kind"] = maybe(rng, kind)
        if rng.random() < 0.15:
            d[rng.choice(["bogus", "Addr", "", "capacity", "scales", "den", "blank", 3, None, (1,), b"kind"])] = junk(rng)
        return d
    n = rng.choice([0, 1, 2, 3, 4, 4, 4, 5, 9])
    t = [fields["addr"], fields["type"], fields["weight"], fields["delta"], junk(rng), junk(rng), 1, 2, 3][:n]
    return tuple(t) if rng.random() < 0.7 else t


def condition(rng: random.Random, depth: int = 0) -> object:
    r = rng.random()
    a, t = addr(rng), vtype(rng)
    op = rng.choice(OPS) if rng.random() < 0.8 else rng.choice(["=", "===", "<>", "", None, 1, b"=="])
    v = rng.choice([0, 1, 255, -1, 1.5, 2**70, float("nan"), float("inf"), float("-inf"), True, None, "1"])
    if r < 0.3:
        return Condition(a, t, op, v)
    if r < 0.5:
        d = {"addr": a, "type": t, "op": op, "value": v}
        for k in list(d):
            if rng.random() < 0.1:
                del d[k]
        if rng.random() < 0.1:
            d[rng.choice(["group", "bogus", 7, None])] = 1
        return d
    if r < 0.75:
        n = rng.choice([0, 3, 4, 4, 4, 5, 5, 6])
        g = rng.choice([0, 1, 7, -1, 2**63, 2**70, -2**70, None, "g", 1.5])
        return tuple([a, t, op, v, g, 0][:n])
    if r < 0.9 and depth < 3:
        parts = [condition(rng, depth + 1) for _ in range(rng.choice([1, 2, 3]))]
        return All(*parts)
    return junk(rng)


def spec_list(rng: random.Random, item) -> object:
    r = rng.random()
    if r < 0.85:
        return [item(rng) for _ in range(rng.choice([0, 1, 1, 2, 3, 5, 12]))]
    if r < 0.9:
        return tuple(item(rng) for _ in range(rng.randrange(0, 3)))
    return junk(rng)


def run_case(reward: object, terminate: object, via_python: bool, num_envs: int = 1) -> str:
    """Build (and step) a batch from the spec; the outcome's name."""
    try:
        if via_python:
            reward = parse_reward(reward)
            terminate = parse_terminate(terminate)
        b = _core.Batch(ROM, num_envs, obs="ram", ram=[(0xC000, 1)], frame_skip=1, reward=reward,
                        terminate=terminate)
        b.reset()
        b.step(np.zeros(num_envs, np.int64))
        b.step(np.ones(num_envs, np.int64))
        b.reset()  # clears the visited tables
        b.step(np.zeros(num_envs, np.int64))
        r = b.buffers["rewards"]
        assert r.shape == (num_envs,)
        return "ok"
    except ALLOWED as e:
        assert str(e).strip(), f"{type(e).__name__} without a message for reward={reward!r} terminate={terminate!r}"
        return type(e).__name__
    except BaseException as e:  # a panic, an assertion in the parser, anything else
        raise AssertionError(
            f"{type(e).__name__}: {e} for reward={reward!r:.500} terminate={terminate!r:.500} (python={via_python})"
        ) from e


def _fuzz(seed: int, via_python: bool) -> collections.Counter:
    rng = random.Random(seed)
    outcomes: collections.Counter = collections.Counter()
    for _ in range(CASES):
        reward = spec_list(rng, term) if rng.random() < 0.8 else None
        terminate = spec_list(rng, condition) if rng.random() < 0.6 else None
        if reward is None and terminate is None:
            reward = [term(rng)]
        t0 = time.perf_counter()
        num_envs = rng.choice([1, 1, 1, 1, 1, 2, 3, 300])
        outcomes[run_case(reward, terminate, via_python, num_envs)] += 1
        assert time.perf_counter() - t0 < 5, f"a spec took over 5 s: reward={reward!r:.300}"
    print(f"seed {seed} python={via_python}: {dict(outcomes)}")
    return outcomes


def test_fuzz_python_parser_then_batch():
    out = _fuzz(20261126, via_python=True)
    assert sum(out.values()) == CASES
    # The generator reaches both ends: specs that build, and each kind of refusal.
    assert out["ok"] > CASES // 20 and out["ValueError"] > CASES // 20 and out["TypeError"] > CASES // 20


def test_fuzz_rust_parser_directly():
    out = _fuzz(1126, via_python=False)
    assert sum(out.values()) == CASES
    assert out["ok"] > CASES // 50 and out["ValueError"] > CASES // 20 and out["TypeError"] > CASES // 20


def test_non_finite_numbers_are_refused_with_a_message():
    nan = float("nan")
    for spec in ([Term(0xC000, weight=nan)], [Term(0xC000, weight=math.inf)], [Sum([0xC000], scales=[nan])]):
        assert run_case(spec, None, via_python=True) == "ValueError"
    for raw in ({"kind": "value", "addrs": [0xC000], "weight": nan},
                {"kind": "sum", "addrs": [0xC000], "scales": [math.inf]}):
        assert run_case([raw], None, via_python=False) == "ValueError"
    with pytest.raises(ValueError, match="NaN"):
        parse_terminate([Condition(0xC000, "u8", "==", nan)])
    with pytest.raises(ValueError, match="NaN"):
        _core.Batch(ROM, 1, obs="ram", ram=[(0xC000, 1)], terminate=[(0xC000, "u8", "==", nan)])
    # An infinite threshold is meaningful (always below / above) and accepted.
    assert run_case(None, [Condition(0xC000, "u8", "<", math.inf)], via_python=True) == "ok"


def test_visited_tables_are_bounded_by_the_batch_memory_limit():
    # 64 environments x 8 tables of 2^24 keys (256 MiB each) would be 128 GiB, touched at the
    # first reset after an episode: refused up front instead of being killed for memory.
    big = [{"kind": "visited", "addrs": [0xC000], "capacity": 1 << 24}] * 8
    with pytest.raises(ValueError, match="Visited tables of 64 environments"):
        _core.Batch(ROM, 64, obs="ram", ram=[(0xC000, 1)], reward=big)
    # The largest single table is still fine for one environment, and steps and resets.
    b = _core.Batch(ROM, 1, obs="ram", ram=[(0xC000, 1)], frame_skip=1, reward=big[:1])
    b.reset()
    b.step(np.array([0]))
    b.reset()
