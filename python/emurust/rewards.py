"""Declarative rewards and episode ends, evaluated in Rust by :class:`emurust._core.Batch`.

A **reward** is a list of terms; each step, every term reads a number from RAM and adds
``weight * value`` (or, with ``delta=True``, ``weight * (value - value at the previous step)``,
0 on the first step after a reset) to the environment's reward::

    Term(0xC000, "u16le", delta=True)            # score difference, in points
    Term(0xC002, "u8", weight=10.0, delta=True)   # -10 per life lost (3 -> 2 is a delta of -1)

An episode **terminates** when any condition holds after a step::

    Condition(0xC003, "u8", "==", 1)              # game over flag set
    Condition(0xC002, "u8", "<", 1)               # no lives left

Value types: ``u8 i8 u16le u16be i16le i16be u24le u24be u32le u32be i32le i32be``, packed BCD
``bcd1``..``bcd4`` (most significant byte first, e.g. ``0x12 0x34`` is 1234) and
``bcd1le``..``bcd4le``. Comparisons: ``== != < <= > >=``.

Terms and conditions may also be given as dicts (``{"addr": 0xC000, "type": "u16le",
"weight": 1.0, "delta": True}``, ``{"addr": 0xC003, "type": "u8", "op": "==", "value": 1}``)
or tuples in the same order.

For anything the spec cannot express, pass ``reward_fn`` to the environments: a vectorised
Python callable called **once per batch step** as ``reward_fn(ram, prev_ram)`` with the
batch's RAM ranges as ``(N, K)`` uint8 arrays (``ram`` now, ``prev_ram`` after the previous
step or reset). It returns rewards of shape ``(N,)``, or a pair ``(rewards, terminated)``;
its rewards are added to the spec's, its terminations or-ed with the spec's.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Iterable, Mapping, Sequence

__all__ = ["Term", "Condition", "parse_reward", "parse_terminate", "VALUE_TYPES", "OPS"]

VALUE_TYPES = (
    "u8 i8 u16le u16be i16le i16be u24le u24be u32le u32be i32le i32be "
    "bcd1 bcd2 bcd3 bcd4 bcd1le bcd2le bcd3le bcd4le"
).split()
OPS = ("==", "!=", "<", "<=", ">", ">=")


@dataclass(frozen=True)
class Term:
    """``weight * value`` (or ``weight * (value - previous value)`` with ``delta``)."""

    addr: int
    type: str = "u8"
    weight: float = 1.0
    delta: bool = False


@dataclass(frozen=True)
class Condition:
    """The episode terminates when ``value <op> threshold`` holds after a step."""

    addr: int
    type: str
    op: str
    value: float


def _check_addr(addr: Any, what: str) -> int:
    if isinstance(addr, bool) or not isinstance(addr, int):
        raise TypeError(f"{what}: address must be an int, got {type(addr).__name__}")
    if not 0 <= addr <= 0xFFFF:
        raise ValueError(f"{what}: address {addr:#x} is outside 0x0000-0xFFFF")
    return addr


def _check_type(t: Any, what: str) -> str:
    if not isinstance(t, str) or t.lower() not in VALUE_TYPES:
        raise ValueError(f"{what}: unknown value type {t!r}; expected one of {VALUE_TYPES}")
    return t.lower()


def _from_mapping(m: Mapping[str, Any], keys: Sequence[str], what: str) -> dict:
    unknown = set(m) - set(keys)
    if unknown:
        raise ValueError(f"{what}: unknown keys {sorted(unknown)}; expected {list(keys)}")
    if "addr" not in m:
        raise ValueError(f"{what}: 'addr' is required")
    return dict(m)


def parse_reward(spec: Iterable[Any] | None) -> list[tuple[int, str, float, bool]]:
    """Normalise reward terms into the tuples ``Batch(reward=...)`` takes."""
    out = []
    for i, t in enumerate(spec or ()):
        what = f"reward[{i}]"
        if isinstance(t, Mapping):
            t = Term(**_from_mapping(t, ("addr", "type", "weight", "delta"), what))
        elif isinstance(t, (tuple, list)):
            if not 1 <= len(t) <= 4:
                raise ValueError(f"{what}: expected (addr, type, weight, delta)")
            t = Term(*t)
        elif not isinstance(t, Term):
            raise TypeError(f"{what}: expected a Term, dict or tuple, got {type(t).__name__}")
        w = t.weight
        if isinstance(w, bool) or not isinstance(w, (int, float)):
            raise TypeError(f"{what}: weight must be a number")
        out.append((_check_addr(t.addr, what), _check_type(t.type, what), float(w), bool(t.delta)))
    return out


def parse_terminate(spec: Iterable[Any] | None) -> list[tuple[int, str, str, float]]:
    """Normalise end conditions into the tuples ``Batch(terminate=...)`` takes."""
    out = []
    for i, c in enumerate(spec or ()):
        what = f"terminate[{i}]"
        if isinstance(c, Mapping):
            c = Condition(**_from_mapping(c, ("addr", "type", "op", "value"), what))
        elif isinstance(c, (tuple, list)):
            if len(c) != 4:
                raise ValueError(f"{what}: expected (addr, type, op, value)")
            c = Condition(*c)
        elif not isinstance(c, Condition):
            raise TypeError(f"{what}: expected a Condition, dict or tuple, got {type(c).__name__}")
        if c.op not in OPS:
            raise ValueError(f"{what}: unknown comparison {c.op!r}; expected one of {OPS}")
        if isinstance(c.value, bool) or not isinstance(c.value, (int, float)):
            raise TypeError(f"{what}: value must be a number")
        out.append((_check_addr(c.addr, what), _check_type(c.type, what), c.op, float(c.value)))
    return out
