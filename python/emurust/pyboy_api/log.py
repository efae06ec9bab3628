"""PyBoy 2.8.1's log output: what a PyBoy user sees on the terminal, the same from emurust.

PyBoy logs through its own small logger, not Python's ``logging``: each message is printed to
standard output as ``<logger name padded to 30> <LEVEL padded to 8> <message>``, under the
name of the PyBoy module that logs it (``pyboy.pyboy``, ``pyboy.plugins.window_null``,
``pyboy.core.mb``, ...). One level holds for the whole process, set by each ``PyBoy(...,
log_level=...)``. PyBoy's levels are ordered DEBUG < WARNING < ERROR < CRITICAL < INFO: INFO
is what a user is meant to see (a palette change), so it shows at every level.
"""

from __future__ import annotations

DEBUG, WARNING, ERROR, CRITICAL, INFO = range(5)

_LEVELS = {"DEBUG": DEBUG, "INFO": INFO, "WARNING": WARNING, "ERROR": ERROR, "CRITICAL": CRITICAL, "DISABLE": CRITICAL}

_level = INFO


def set_level(level) -> None:
    """``log_level`` of PyBoy's constructor: a level name or an int; anything else raises."""
    global _level
    if isinstance(level, str) and level in _LEVELS:
        _level = _LEVELS[level]
    elif isinstance(level, int):
        _level = level
    else:
        raise ValueError(f"Invalid log level: {level}")


def get_level() -> int:
    return _level


class Logger:
    """One PyBoy module's logger (``critical``/``error``/``warning``/``info``/``debug``, with
    ``%`` formatting of the arguments)."""

    def __init__(self, name: str):
        self.name = name

    def _log(self, label: str, level: int, fmt, args) -> None:
        if _level > level:
            return
        msg = fmt % tuple(args) if args else fmt
        print(self.name.ljust(30) + " " + label.ljust(8) + " " + str(msg))

    def critical(self, fmt, *args):
        self._log("CRITICAL", CRITICAL, fmt, args)

    def error(self, fmt, *args):
        self._log("ERROR", ERROR, fmt, args)

    def warning(self, fmt, *args):
        self._log("WARNING", WARNING, fmt, args)

    def info(self, fmt, *args):
        self._log("INFO", INFO, fmt, args)

    def debug(self, fmt, *args):
        self._log("DEBUG", DEBUG, fmt, args)


def get_logger(name: str) -> Logger:
    return Logger(name)
