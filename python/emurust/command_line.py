"""What every ``emurust`` command shares: the one error users can fix (:class:`UsageError`), the
argument types that check numbers as they are parsed, and the checks of input and output paths
that run before any long work starts.

Every failure here becomes one line, ``emurust: error: <reason>``, and exit status 2
(see ``emurust.cli.main``)."""

from __future__ import annotations

import argparse
import math
import os
import tempfile
from typing import Callable, NoReturn, Optional

__all__ = [
    "UsageError", "Parser", "int_range", "float_range", "probability", "seed_list", "check_output_file",
    "check_output_dir", "check_rom_file", "MAX_ENVS", "MAX_THREADS", "MAX_STEPS", "MAX_SEED",
]

# Upper bounds: far above any sensible run, far below what exhausts the machine first
# (60,000 emulators abort the process; 100,000 threads cannot be started).
MAX_ENVS = 4096
MAX_THREADS = 1024
MAX_STEPS = 10**10
MAX_FRAMES = 10**9
MAX_EPISODES = 100_000
MAX_SEED = 2**32 - 1  # NumPy's and SB3's seeds are 32-bit


class UsageError(Exception):
    """Bad input that the user can fix: reported as one line, exit status 2."""


class Parser(argparse.ArgumentParser):
    """argparse, with its errors raised as :class:`UsageError` (one line, exit status 2) instead
    of a usage block; subcommands' parsers are of this class too."""

    def error(self, message: str) -> NoReturn:
        raise UsageError(f"{message} (see {self.prog} --help)")


def _number(text: str, kind: type) -> float:
    try:
        value = kind(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected {'an integer' if kind is int else 'a number'}, got {text!r}") from None
    if kind is float and not math.isfinite(value):
        raise argparse.ArgumentTypeError(f"expected a finite number, got {text!r}")
    return value


def int_range(low: int, high: int) -> Callable[[str], int]:
    """An argparse type: an integer from `low` to `high` inclusive."""

    def parse(text: str) -> int:
        value = int(_number(text, int))
        if not low <= value <= high:
            raise argparse.ArgumentTypeError(f"must be an integer from {low:,} to {high:,}, got {value:,}")
        return value

    parse.__name__ = "integer"  # argparse names the type in its messages
    return parse


def float_range(low: float, high: float, *, low_open: bool = False) -> Callable[[str], float]:
    """An argparse type: a finite number from `low` (excluded with `low_open`) to `high`."""

    def parse(text: str) -> float:
        value = float(_number(text, float))
        if value < low or value > high or (low_open and value == low):
            where = f"greater than {low:g}" if low_open else f"at least {low:g}"
            raise argparse.ArgumentTypeError(f"must be {where} and at most {high:g}, got {text}")
        return value

    parse.__name__ = "number"
    return parse


#: A probability or discount factor: a number from 0 to 1.
probability = float_range(0.0, 1.0)


def seed_list(text: str) -> list[int]:
    """An argparse type: seeds separated by commas, each from 0 to :data:`MAX_SEED`."""
    one = int_range(0, MAX_SEED)
    seeds = [one(s.strip()) for s in text.split(",") if s.strip()]
    if not seeds:
        raise argparse.ArgumentTypeError("needs at least one seed")
    return seeds


def _probe(directory: str) -> Optional[str]:
    """Why a file cannot be created in `directory` (an existing directory), or None: a probe
    file is created and removed, which answers for read-only mounts and ACLs too."""
    try:
        fd, path = tempfile.mkstemp(dir=directory, prefix=".emurust-probe-")
    except OSError as e:
        return e.strerror or str(e)
    os.close(fd)
    os.unlink(path)
    return None


def check_output_file(path: str, what: str, *, parents_created: bool = False) -> None:
    """Refuse, before any work, an output file that cannot be written: its directory must
    exist (nothing is created on the way; with `parents_created`, the command creates it, so
    its nearest existing parent must take it) and take a new file, and the path must not be a
    directory or another kind of special file."""
    if not path:
        raise UsageError(f"{what}: empty path")
    directory = os.path.dirname(os.path.abspath(path))
    if parents_created and not os.path.exists(directory):
        check_output_dir(directory, what)
        return
    if not os.path.isdir(directory):
        state = "is not a directory" if os.path.exists(directory) else "does not exist"
        raise UsageError(f"{what}: directory {os.path.dirname(path) or directory} {state}: {path}")
    if os.path.isdir(path):
        raise UsageError(f"{what}: is a directory, not a file: {path}")
    if os.path.exists(path) and not os.path.isfile(path):
        raise UsageError(f"{what}: not a regular file: {path}")
    if os.path.exists(path) and not os.access(path, os.W_OK):
        raise UsageError(f"{what}: file is read-only: {path}")
    why = _probe(directory)
    if why is not None:
        raise UsageError(f"{what}: cannot write in {directory}: {why}")


def check_output_dir(path: str, what: str) -> None:
    """Refuse, before any work, an output directory that cannot be used: an existing
    directory that takes new files, or a missing one whose nearest existing parent does (it
    is created later, with its missing parents)."""
    if not path:
        raise UsageError(f"{what}: empty path")
    here = os.path.abspath(path)
    while not os.path.exists(here):
        parent = os.path.dirname(here)
        if parent == here:
            break
        here = parent
    if not os.path.isdir(here):
        raise UsageError(f"{what}: {here} is not a directory" + ("" if here == os.path.abspath(path) else f": {path}"))
    why = _probe(here)
    if why is not None:
        raise UsageError(f"{what}: cannot write in {here}: {why}")


# The cartridge header ends at 0x14F; every real ROM is a whole number of 16 KiB banks.
_HEADER_END = 0x150


def check_rom_file(path: str) -> None:
    """Refuse a ROM path that cannot be a Game Boy ROM, saying what is wrong with it."""
    if not os.path.exists(path):
        raise UsageError(f"ROM not found: {path}")
    if os.path.isdir(path):
        raise UsageError(f"ROM is a directory, not a file: {path}")
    if not os.path.isfile(path):
        raise UsageError(f"ROM is not a regular file (a device or a pipe): {path}")
    size = os.path.getsize(path)
    if size == 0:
        raise UsageError(f"ROM file is empty: {path}")
    if size < _HEADER_END:
        raise UsageError(f"not a Game Boy ROM ({size} bytes, shorter than the cartridge header): {path}")
    if not os.access(path, os.R_OK):
        raise UsageError(f"ROM is not readable (permission denied): {path}")
