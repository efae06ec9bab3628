"""Declarative rewards and episode ends, evaluated in Rust by :class:`emurust._core.Batch`.

A **reward** is a list of terms; each step, every term reads a number from RAM and adds
``weight * value`` (or, with ``delta=True``, ``weight * (value - value at the previous step)``,
0 on the first step after a reset) to the environment's reward::

    Term(0xC000, "u16le", delta=True)            # score difference, in points
    Term(0xC002, "u8", weight=10.0, delta=True)   # -10 per life lost (3 -> 2 is a delta of -1)

Besides one value at an address (:class:`Term`), a term can read:

- :class:`Sum` ``(addrs, type, scales=None, lines=())``: the sum of the values at several
  addresses (e.g. the levels of the six party slots), each times its scale if ``scales`` is
  given, plus any :class:`LineRegister` parts: an LCD register (``scx scy wx wy``) as a given
  screen line was drawn, ``scale * ((value + add) mod modulo)``, 0 while the LCD is off (as
  PyBoy's ``screen.tilemap_position_list``). A game that scrolls its play field below a fixed
  status bar keeps the scroll only there (Super Mario Land's level progress adds
  ``(SCX of line 16 - 7) mod 16``);
- :class:`Ratio` ``(addrs, den, type)``: ``sum(addrs) / sum(den)``, 0 when the denominator is 0
  (e.g. party HP / party max HP);
- :class:`Popcount` ``(addr, length)``: the number of set bits in ``length`` bytes from
  ``addr`` (event flags, badges);
- :class:`Digits` ``(addr, length, blank)``: a decimal number stored one digit per byte, most
  significant first (digit tiles of a score on screen, or digit bytes in RAM); bytes equal
  to ``blank`` count as 0 (leading spaces), any other byte as its value;
- :class:`Visited` ``(addrs, capacity)``: the number of distinct keys seen this episode, a key
  being the bytes at ``addrs`` (e.g. ``(map, x, y)``): exploration. Each environment keeps a
  fixed table for ``capacity`` keys (default 16384; 16 bytes a key), allocated once and emptied
  at every reset (the position the episode starts at counts as seen); keys beyond ``capacity``
  are not counted. Keys are sampled once per step (after its last frame).

``delta`` chooses how a term's value becomes its reward: ``False``/``"none"`` the value itself,
``True``/``"change"`` its change since the previous step, ``"increase"`` only its rises
(``max(0, change)``, e.g. healing), ``"new_max"`` only new episode highs (``max(0, value -
highest value this episode)``, e.g. progress through a level). :class:`Visited` defaults to
``"change"`` (``weight`` per newly seen key).

An episode **terminates** when any condition holds after a step::

    Condition(0xC003, "u8", "==", 1)              # game over flag set
    Condition(0xC002, "u8", "<", 1)               # no lives left
    All(Condition(0xD089, "u8", "==", 1), Condition(0xD086, "u8", "==", 0))  # both at once

Value types: ``u8 i8 u16le u16be i16le i16be u24le u24be u32le u32be i32le i32be``, packed BCD
``bcd1``..``bcd4`` (most significant byte first, e.g. ``0x12 0x34`` is 1234) and
``bcd1le``..``bcd4le``. Comparisons: ``== != < <= > >=``.

Terms and conditions may also be given as dicts (``{"addr": 0xC000, "type": "u16le",
"weight": 1.0, "delta": True}``, ``{"addr": 0xC003, "type": "u8", "op": "==", "value": 1}``,
``{"kind": "popcount", "addr": 0xD747, "length": 320}``) or tuples in the same order as the
dataclasses' fields. A bad spec raises ValueError (TypeError for a wrong Python type) naming
the term (``reward[2]: ...``).

For anything the spec cannot express, pass ``reward_fn`` to the environments: a vectorised
Python callable called **once per batch step** as ``reward_fn(ram, prev_ram)`` with the
batch's RAM ranges as ``(N, K)`` uint8 arrays (``ram`` now, ``prev_ram`` after the previous
step or reset). It returns rewards of shape ``(N,)``, or a pair ``(rewards, terminated)``;
its rewards are added to the spec's, its terminations or-ed with the spec's.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, fields
from typing import Any, Iterable, Mapping, Optional, Sequence, Union

__all__ = [
    "Term", "Sum", "LineRegister", "Ratio", "Popcount", "Digits", "Visited", "Condition", "All",
    "parse_reward", "parse_terminate", "VALUE_TYPES", "OPS", "DELTAS",
]

VALUE_TYPES = (
    "u8 i8 u16le u16be i16le i16be u24le u24be u32le u32be i32le i32be "
    "bcd1 bcd2 bcd3 bcd4 bcd1le bcd2le bcd3le bcd4le"
).split()
OPS = ("==", "!=", "<", "<=", ">", ">=")
DELTAS = ("none", "change", "increase", "new_max")
Delta = Union[bool, str]


@dataclass(frozen=True)
class Term:
    """``weight * value`` (or ``weight * (value - previous value)`` with ``delta``)."""

    addr: int
    type: str = "u8"
    weight: float = 1.0
    delta: Delta = False


@dataclass(frozen=True)
class LineRegister:
    """A part of a :class:`Sum`: ``scale * ((register + add) mod modulo)``, the register (``scx``,
    ``scy``, ``wx`` or ``wy``) as screen line ``line`` (0-143) was drawn; 0 while the LCD is off."""

    line: int
    register: str
    add: int = 0
    modulo: int = 256
    scale: float = 1.0


LINE_REGISTERS = ("scx", "scy", "wx", "wy")


@dataclass(frozen=True)
class Sum:
    """The sum of the values of ``type`` at each of ``addrs`` (each times its item of
    ``scales``, if given) and of the :class:`LineRegister` parts in ``lines``."""

    addrs: Sequence[int]
    type: str = "u8"
    weight: float = 1.0
    delta: Delta = False
    scales: Optional[Sequence[float]] = None
    lines: Sequence[Any] = ()


@dataclass(frozen=True)
class Ratio:
    """``sum(values at addrs) / sum(values at den)``; 0 when the denominator is 0."""

    addrs: Sequence[int]
    den: Sequence[int]
    type: str = "u8"
    weight: float = 1.0
    delta: Delta = False


@dataclass(frozen=True)
class Popcount:
    """The number of set bits in the ``length`` bytes from ``addr``."""

    addr: int
    length: int = 1
    weight: float = 1.0
    delta: Delta = False


@dataclass(frozen=True)
class Digits:
    """A decimal number stored one digit per byte, most significant first; ``blank`` bytes
    count as 0."""

    addr: int
    length: int
    blank: int | None = None
    weight: float = 1.0
    delta: Delta = False


@dataclass(frozen=True)
class Visited:
    """The number of distinct keys (the bytes at ``addrs``, 1 to 7 of them) seen this episode;
    by default ``weight`` per new key."""

    addrs: Sequence[int]
    weight: float = 1.0
    delta: Delta = True
    capacity: int = 1 << 14


@dataclass(frozen=True)
class Condition:
    """The episode terminates when ``value <op> threshold`` holds after a step."""

    addr: int
    type: str
    op: str
    value: float


class All:
    """The episode terminates when all these conditions hold at once."""

    def __init__(self, *conditions: Any):
        if not conditions:
            raise ValueError("All() needs at least one condition")
        self.conditions = tuple(conditions)

    def __repr__(self) -> str:
        return f"All{self.conditions!r}"

    def __eq__(self, other: Any) -> bool:
        return isinstance(other, All) and other.conditions == self.conditions

    def __hash__(self) -> int:
        return hash(self.conditions)


_TERM_KINDS = {"value": Term, "sum": Sum, "ratio": Ratio, "popcount": Popcount, "digits": Digits, "visited": Visited}


def _check_addr(addr: Any, what: str) -> int:
    if isinstance(addr, bool) or not isinstance(addr, int):
        raise TypeError(f"{what}: address must be an int, got {type(addr).__name__}")
    if not 0 <= addr <= 0xFFFF:
        raise ValueError(f"{what}: address {addr:#x} is outside 0x0000-0xFFFF")
    return addr


def _check_addrs(addrs: Any, what: str, name: str = "addrs") -> list[int]:
    if isinstance(addrs, (str, bytes)) or not isinstance(addrs, Iterable):
        raise TypeError(f"{what}: {name} must be a list of addresses, got {type(addrs).__name__}")
    out = [_check_addr(a, what) for a in addrs]
    if not out:
        raise ValueError(f"{what}: {name} must list at least one address")
    return out


def _check_type(t: Any, what: str) -> str:
    if not isinstance(t, str) or t.lower() not in VALUE_TYPES:
        raise ValueError(f"{what}: unknown value type {t!r}; expected one of {VALUE_TYPES}")
    return t.lower()


def _check_int(v: Any, what: str, name: str, lo: int, hi: int) -> int:
    if isinstance(v, bool) or not isinstance(v, int):
        raise TypeError(f"{what}: {name} must be an int, got {type(v).__name__}")
    if not lo <= v <= hi:
        raise ValueError(f"{what}: {name} must be {lo}-{hi}, got {v}")
    return v


def _check_delta(d: Any, what: str) -> str:
    if isinstance(d, bool):
        return "change" if d else "none"
    if not isinstance(d, str) or d not in DELTAS:
        raise ValueError(f"{what}: unknown delta {d!r}; expected False, True or one of {DELTAS}")
    return d


def _from_mapping(m: Mapping[str, Any], keys: Sequence[str], what: str, required: str = "addr") -> dict:
    unknown = [k for k in m if k not in keys]
    if unknown:
        # Keys of any type (a hostile spec may hold ints or None): sorted by their repr, shown as repr.
        shown = ", ".join(sorted(map(repr, unknown)))
        raise ValueError(f"{what}: unknown keys [{shown}]; expected {list(keys)}")
    if required not in m:
        raise ValueError(f"{what}: {required!r} is required")
    return dict(m)


def _term_from_mapping(m: Mapping[str, Any], what: str) -> Any:
    kind = m.get("kind", "value")
    cls = _TERM_KINDS.get(kind) if isinstance(kind, str) else None
    if cls is None:
        raise ValueError(f"{what}: unknown term kind {kind!r}; expected one of {list(_TERM_KINDS)}")
    names = [f.name for f in fields(cls)]
    rest = {k: v for k, v in m.items() if k != "kind"}
    return cls(**_from_mapping(rest, names, what, names[0]))


def _line_part(p: Any, what: str) -> tuple[int, str, int, int, float]:
    """A checked :class:`LineRegister` (or its dict or tuple) as the tuple ``Batch`` takes."""
    if isinstance(p, Mapping):
        p = LineRegister(**_from_mapping(p, [f.name for f in fields(LineRegister)], what, "line"))
    elif isinstance(p, (tuple, list)):
        if not 2 <= len(p) <= 5:
            raise ValueError(f"{what}: expected (line, register, add, modulo, scale)")
        p = LineRegister(*p)
    elif not isinstance(p, LineRegister):
        raise TypeError(f"{what}: expected a LineRegister, dict or tuple, got {type(p).__name__}")
    if not isinstance(p.register, str) or p.register.lower() not in LINE_REGISTERS:
        raise ValueError(f"{what}: unknown line register {p.register!r}; expected one of {LINE_REGISTERS}")
    scale = p.scale
    if isinstance(scale, bool) or not isinstance(scale, (int, float)):
        raise TypeError(f"{what}: scale must be a number, got {type(scale).__name__}")
    if not math.isfinite(scale):
        raise ValueError(f"{what}: scale must be finite")
    return (_check_int(p.line, what, "line", 0, 143), p.register.lower(), _check_int(p.add, what, "add", -255, 255),
            _check_int(p.modulo, what, "modulo", 1, 256), float(scale))


def _term_spec(t: Any, what: str) -> dict:
    """The dict ``Batch(reward=...)`` takes for one checked term."""
    w = t.weight
    if isinstance(w, bool) or not isinstance(w, (int, float)):
        raise TypeError(f"{what}: weight must be a number, got {type(w).__name__}")
    if not math.isfinite(w):
        raise ValueError(f"{what}: weight must be finite, got {w}")
    spec: dict[str, Any] = {"weight": float(w), "delta": _check_delta(t.delta, what)}
    if isinstance(t, Term):
        spec.update(kind="value", addrs=[_check_addr(t.addr, what)], type=_check_type(t.type, what))
    elif isinstance(t, Sum):
        spec.update(kind="sum", addrs=_check_addrs(t.addrs, what), type=_check_type(t.type, what))
        if t.scales is not None:
            if isinstance(t.scales, (str, bytes)) or not isinstance(t.scales, Iterable):
                raise TypeError(f"{what}: scales must be a list of numbers, got {type(t.scales).__name__}")
            scales = list(t.scales)
            if any(isinstance(x, bool) or not isinstance(x, (int, float)) for x in scales):
                raise TypeError(f"{what}: scales must be numbers")
            if not all(math.isfinite(x) for x in scales):
                raise ValueError(f"{what}: scales must be finite")
            if len(scales) != len(spec["addrs"]):
                raise ValueError(f"{what}: {len(scales)} scales for {len(spec['addrs'])} addresses")
            spec["scales"] = [float(x) for x in scales]
        if isinstance(t.lines, (str, bytes, Mapping)) or not isinstance(t.lines, Iterable):
            raise TypeError(f"{what}: lines must be a list of LineRegister, got {type(t.lines).__name__}")
        lines = [_line_part(p, f"{what}: lines[{k}]") for k, p in enumerate(t.lines)]
        if lines:
            spec["lines"] = lines
    elif isinstance(t, Ratio):
        spec.update(kind="ratio", addrs=_check_addrs(t.addrs, what), den=_check_addrs(t.den, what, "den"),
                    type=_check_type(t.type, what))
    elif isinstance(t, Popcount):
        a = _check_addr(t.addr, what)
        spec.update(kind="popcount", addrs=[a], length=_check_int(t.length, what, "length", 1, 0x10000 - a))
    elif isinstance(t, Digits):
        a = _check_addr(t.addr, what)
        spec.update(kind="digits", addrs=[a], length=_check_int(t.length, what, "length", 1, min(19, 0x10000 - a)))
        if t.blank is not None:
            spec["blank"] = _check_int(t.blank, what, "blank", 0, 255)
    elif isinstance(t, Visited):
        addrs = _check_addrs(t.addrs, what)
        if len(addrs) > 7:
            raise ValueError(f"{what}: a Visited key is 1-7 bytes, got {len(addrs)} addresses")
        spec.update(kind="visited", addrs=addrs, capacity=_check_int(t.capacity, what, "capacity", 1, 1 << 24))
    else:  # pragma: no cover - callers pass the dataclasses above only
        raise TypeError(f"{what}: not a reward term: {t!r}")
    return spec


def parse_reward(spec: Iterable[Any] | None) -> list[dict[str, Any]]:
    """Check reward terms and normalise them into the dicts ``Batch(reward=...)`` takes."""
    out = []
    for i, t in enumerate(spec or ()):
        what = f"reward[{i}]"
        if isinstance(t, Mapping):
            t = _term_from_mapping(t, what)
        elif isinstance(t, (tuple, list)):
            if not 1 <= len(t) <= 4:
                raise ValueError(f"{what}: expected (addr, type, weight, delta)")
            t = Term(*t)
        elif not isinstance(t, tuple(_TERM_KINDS.values())):
            raise TypeError(
                f"{what}: expected a Term, Sum, Ratio, Popcount, Digits, Visited, dict or tuple, got {type(t).__name__}"
            )
        out.append(_term_spec(t, what))
    return out


def _condition(c: Any, what: str) -> tuple[int, str, str, float]:
    if isinstance(c, Mapping):
        c = Condition(**_from_mapping(c, ("addr", "type", "op", "value"), what))
    elif isinstance(c, (tuple, list)):
        if len(c) != 4:
            raise ValueError(f"{what}: expected (addr, type, op, value)")
        c = Condition(*c)
    elif not isinstance(c, Condition):
        raise TypeError(f"{what}: expected a Condition, All, dict or tuple, got {type(c).__name__}")
    if not isinstance(c.op, str) or c.op not in OPS:
        raise ValueError(f"{what}: unknown comparison {c.op!r}; expected one of {OPS}")
    if isinstance(c.value, bool) or not isinstance(c.value, (int, float)):
        raise TypeError(f"{what}: value must be a number, got {type(c.value).__name__}")
    if isinstance(c.value, float) and math.isnan(c.value):
        raise ValueError(f"{what}: value must be a number, got NaN (no comparison with it ever holds)")
    return (_check_addr(c.addr, what), _check_type(c.type, what), c.op, float(c.value))


def parse_terminate(spec: Iterable[Any] | None) -> list[tuple]:
    """Normalise end conditions into the tuples ``Batch(terminate=...)`` takes:
    ``(addr, type, op, value)``, with a 5th item (the group) for the conditions of an
    :class:`All`."""
    out: list[tuple] = []
    for i, c in enumerate(spec or ()):
        what = f"terminate[{i}]"
        if isinstance(c, All):
            for j, part in enumerate(c.conditions):
                if isinstance(part, All):
                    raise TypeError(f"{what}[{j}]: All() cannot nest another All()")
                out.append(_condition(part, f"{what}[{j}]") + (i,))
        else:
            out.append(_condition(c, what))
    return out
