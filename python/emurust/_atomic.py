"""Whole-or-nothing file writes, shared by the training outputs and PyBoy's battery files."""

from __future__ import annotations

import os
import pathlib
import tempfile
from typing import Callable


def atomic_write(path: pathlib.Path, write: Callable[[str], object], suffix: str = "") -> None:
    """Create `path` through `write(temporary path)` and a rename: an interruption (Ctrl-C,
    a full disk) leaves either the whole file or none, never half of it."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".partial" + suffix)
    os.close(fd)
    try:
        mask = os.umask(0)
        os.umask(mask)
        os.chmod(tmp, 0o666 & ~mask)  # as a plain open() would create it (mkstemp makes 0600)
        write(tmp)
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise
