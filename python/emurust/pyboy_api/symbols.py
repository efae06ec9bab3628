"""Symbol files of ROMs, as PyBoy reads them: RGBDS ``.sym`` (``bank:address label`` lines in
a ``[labels]`` group) and linker ``.map`` files (``address label module`` lines; bank 0).
Used by :class:`emurust.PyBoy` (``symbol_lookup``) and by the 2048 task (its variables)."""

from __future__ import annotations

import os
import re
from typing import Iterator, Optional
from .log import get_logger

logger = get_logger("pyboy.pyboy")

_MAP_SYMBOL_RE = re.compile(r"^\s*([0-9A-Fa-f]{8})\s+(\S+)\s+\S*\s*$")


def symbol_file_candidates(rom_path: Optional[str], symbols: Optional[str] = None) -> list[str]:
    """The files PyBoy looks at, in order: ``symbols``, then ``<rom>.sym`` / ``.map`` beside the
    ROM (with and without its extension)."""
    paths = [symbols] if symbols else []
    if rom_path:
        stem, ext = os.path.splitext(rom_path)
        paths += [stem + ".sym", stem + ext + ".sym", stem + ".map", stem + ext + ".map"]
    return paths


def read_symbol_file(path: str) -> Iterator[tuple[int, int, str]]:
    """``(bank, address, label)`` for each symbol of a ``.sym`` or ``.map`` file, in file order."""
    with open(path) as f:
        lines = f.readlines()
    if path.endswith(".map"):
        for line in lines:
            m = _MAP_SYMBOL_RE.match(line)
            if m is not None:
                yield 0, int(m.group(1), 16), m.group(2)
        return
    group = "labels"
    for raw in lines:
        line = raw.strip()
        if line == "" or line.startswith(";"):
            continue
        if line.startswith("["):
            group = line[1:-1]
            continue
        if group == "labels":
            parts = re.split(":| ", line)
            if len(parts) != 3:
                continue
            try:
                bank, addr = int(parts[0], 16), int(parts[1], 16)
            except ValueError:
                continue
            yield bank, addr, parts[2]
        elif group != "definitions":
            logger.warning("Invalid group. Skipping .sym line: %s", line)


def symbol_table(rom_path: Optional[str], symbols: Optional[str] = None) -> dict[str, tuple[int, int]]:
    """``label -> (bank, address)`` from every existing candidate file (a ``.map`` never
    overrides a label already found), as PyBoy's ``symbol_lookup`` resolves them."""
    table: dict[str, tuple[int, int]] = {}
    for path in symbol_file_candidates(rom_path, symbols):
        if path and os.path.isfile(path):
            is_map = path.endswith(".map")
            for bank, addr, label in read_symbol_file(path):
                if is_map and label in table:
                    continue
                table[label] = (bank, addr)
    return table
