"""Whole-or-nothing file writes, shared by the training outputs and PyBoy's battery files."""

from __future__ import annotations

import os
import pathlib
import stat
import tempfile
from typing import Callable


def atomic_write(path: pathlib.Path, write: Callable[[str], object], suffix: str = "") -> None:
    """Create or replace `path` through `write(temporary path)` and a rename: an interruption
    (Ctrl-C, a full disk) leaves either the whole file or none, never half of it.

    The user's file stays theirs: a symbolic link is written through (the file it points to is
    replaced, the link stays, as a plain open() for writing would do), an existing file keeps its
    permissions (and owner, where we may set it), a new one gets those a plain open() would give.
    The folder must exist: nothing is created around the file."""
    target = pathlib.Path(os.path.realpath(path))
    if not target.parent.is_dir():
        raise FileNotFoundError(2, "folder does not exist", str(target.parent))
    try:
        old = os.stat(target)
    except FileNotFoundError:
        old = None
    fd, tmp = tempfile.mkstemp(dir=target.parent, prefix=f".{target.name}.", suffix=".partial" + suffix)
    os.close(fd)
    try:
        if old is not None:
            os.chmod(tmp, stat.S_IMODE(old.st_mode))
            try:
                os.chown(tmp, old.st_uid, old.st_gid)
            except OSError:
                pass  # not ours to give away: the file is then the writer's, as after open()
        else:
            mask = os.umask(0)
            os.umask(mask)
            os.chmod(tmp, 0o666 & ~mask)  # as a plain open() would create it (mkstemp makes 0600)
        write(tmp)
        os.replace(tmp, target)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise
